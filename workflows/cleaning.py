"""Model output made safe to keep (pure): no NUL, no lone surrogates, every field capped.

Whatever a model sends is data. Before a tool call, a model's text or its arguments reach the
transcript, workflow history or the ledger, they pass through here: PostgreSQL cannot store NUL
or an unpaired surrogate, and an unbounded field would echo itself into errors and payloads.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.canonical import strip_invisible

# Sizes of what a model may send in one turn; anything above is cut here and refused with a
# sentence by `workflows.tools.parse_call` (the step is spent, the run goes on).
MAX_CALLS_PER_TURN = 8
MAX_TOOL_NAME_CHARS = 64
MAX_ARGUMENT_CHARS = 32_000
MAX_TEXT_CHARS = 2_000  # a turn's free text (kept when the model called no tool)
MAX_ERROR_CHARS = 600  # a tool error sent back to the model (it may repeat model input)
MAX_ECHO_CHARS = 60  # one piece of model input quoted inside an error

_UNSAFE = re.compile(r"[\x00\ud800-\udfff]")
# Control characters other than line breaks and tabs: a terminal would obey them (ANSI escapes).
_CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_REPLACEMENT = "\ufffd"


def clean(text: str, limit: int | None = None) -> str:
    """`text` without NUL and lone surrogates (each becomes U+FFFD), cut to `limit` characters.

    Python strings hold surrogates only when unpaired (a JSON escape such as \\ud800), so every
    surrogate here is a lone one.
    """
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(_REPLACEMENT, text)
    return text if limit is None or len(text) <= limit else text[:limit]


def clean_value(value: Any) -> Any:
    """Every string inside parsed JSON (keys too) cleaned; other values untouched."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [clean_value(item) for item in value]
    if isinstance(value, dict):
        return {clean(str(key)): clean_value(item) for key, item in value.items()}
    return value


def echo(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """A piece of model input fit to quote in an error: cleaned, one line, shortened."""
    line = " ".join(_CONTROL.sub(_REPLACEMENT, strip_invisible(clean(text[: limit * 4]))).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


# Inline characters that start Markdown or HTML constructs; `:` and `.` only where they would
# start an autolink (scheme://, www.).
_INLINE = re.compile(r"([\\`*{}\[\]<>|!~&#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_AUTOLINK = re.compile(r"(?i)(\w)(://)|(?<![A-Za-z0-9])(www)(\.)")
# "- item", "> quote", "1. item", "===" (setext), ":--" (a table's delimiter row)
_BLOCK_START = re.compile(r"^(\s*)(\d*)([-+=>.):])")
# An e-mail autolink (x@y.z, mailto:): a word joiner after @ breaks it, invisibly.
_EMAIL = re.compile(r"@(?=\S)")


def as_text(text: str) -> str:
    """Model or page text as Markdown that renders as exactly that text: no markup at all, and
    no control character a terminal would obey."""
    lines = []
    for line in _CONTROL.sub(_REPLACEMENT, strip_invisible(clean(text))).splitlines():
        line = _INLINE.sub(r"\\\1", line)
        line = _AUTOLINK.sub(lambda m: f"{m[1] or m[3]}\\{m[2] or m[4]}", line)
        line = _EMAIL.sub("@\u2060", line)
        line = _BLOCK_START.sub(lambda m: f"{m[1]}{m[2]}\\{m[3]}", line.strip())
        lines.append(line)
    return "\n".join(line for line in lines if line)


_UNSHOWABLE = re.compile(
    r"[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"
)


def json_for_terminal(text: str) -> str:
    """JSON text fit to print: characters a terminal would obey or hide (C1 controls, direction
    and zero-width ones; JSON escapes C0 itself) written as \\uXXXX escapes, so the data a
    script reads is unchanged."""
    return _UNSHOWABLE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def for_terminal(text: str) -> str:
    """Text fit to print: no control character a terminal would obey (ANSI escapes) and no
    invisible format character (a direction override would show the text in another order);
    line breaks and tabs stay."""
    return _CONTROL.sub(_REPLACEMENT, strip_invisible(clean(text)))
