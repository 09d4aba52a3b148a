"""Web text shown to a model inside an untrusted block (`<untrusted_page>`, `<untrusted_quote>`,
`<untrusted_claim>`): made unable to close its block, or to open one of its own, so a page that
writes `</untrusted_page>` and an instruction after it stays data."""

from __future__ import annotations

import re

_TAG = re.compile(r"</?\s*untrusted_", re.IGNORECASE)


def inert(text: str) -> str:
    """`text` with the `<` of every opening or closing untrusted tag written `&lt;`."""
    return _TAG.sub(lambda match: "&lt;" + match[0][1:], text)
