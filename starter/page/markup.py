"""HTML made safe by construction (pure): every string is text unless this module made it markup.

The review page holds page text and model text a hostile author may have written. Nothing of
theirs is ever markup here:

- `text` escapes `& < > " '` and shows every character a reader could not see or that would
  reorder what is shown (controls, direction overrides, zero-width and other format
  characters, lone surrogates, noncharacters) as a visible `U+XXXX` mark, so a quote holding
  `</style>` or `\\u202e` reads as what it is.
- `element` is the only way to make a tag: its name and attribute names are this code's, its
  attribute values are escaped; `Html` (a `str` subclass) marks what it returned.
- `link` makes an anchor only of an http(s) URL (anything else stays text) and never lets a
  click send a referrer or give the opened page a handle on this one.
- `cut` bounds a string before it is shown, saying how much was left out.
"""

from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import urlsplit

# Categories a reader cannot see as themselves: controls, format characters (direction
# overrides, zero-width ones), surrogates, private use, unassigned (noncharacters among them).
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_SHOWN_AS_IS = frozenset("\n\t")
_NOT_PLAIN = re.compile(r"[^\x20-\x7e\n\t]")
_ANCHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class Html(str):
    """Markup this module made; any other `str` given to `element` is text and is escaped."""

    __slots__ = ()


def text(value: object) -> Html:
    """`value` as text inside HTML: escaped, and every hidden character shown as `U+XXXX`."""
    escaped = html.escape(str(value), quote=True)
    if not _NOT_PLAIN.search(escaped):
        return Html(escaped)
    return Html("".join(_shown(char) for char in escaped))


def plain(value: str) -> str:
    """`value` on one line with every hidden character replaced by U+FFFD: for the page's title,
    whose text a browser shows as it is (no markup marks a character there)."""
    line = " ".join(value.split())
    return "".join("\ufffd" if _hidden(char) else char for char in line)


def _hidden(char: str) -> bool:
    return char not in _SHOWN_AS_IS and unicodedata.category(char) in _HIDDEN_CATEGORIES


def _shown(char: str) -> str:
    if not _hidden(char):
        return char
    return f'<span class="hidden-char">U+{ord(char):04X}</span>'


def element(tag: str, *children: object, **attributes: str | int | None) -> Html:
    """`<tag attr="value">children</tag>`: `class_` names the class attribute; a None attribute
    is left out; children that are not `Html` are text; None children are skipped."""
    attrs = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{html.escape(str(value), quote=True)}"'
        for name, value in attributes.items()
        if value is not None
    )
    inner = "".join(_markup(child) for child in children)
    return Html(f"<{tag}{attrs}>{inner}</{tag}>")


def void(tag: str, **attributes: str | int | None) -> Html:
    """A tag with no content or end tag (`meta`, `br`)."""
    attrs = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{html.escape(str(value), quote=True)}"'
        for name, value in attributes.items()
        if value is not None
    )
    return Html(f"<{tag}{attrs}>")


def _markup(child: object) -> str:
    if child is None:
        return ""
    if isinstance(child, Html):
        return child
    if isinstance(child, list | tuple):
        return "".join(_markup(item) for item in child)
    return text(child)


def join(items: list[Html], separator: str = ", ") -> Html:
    return Html(text(separator).join(items))


def is_web_url(url: str) -> bool:
    """An absolute http(s) URL with a host: the only kind of address the page links to."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and url == url.strip()


def link(url: str, label: object = None) -> Html:
    """An anchor to an http(s) URL opening apart from this page, or the URL as text."""
    if not is_web_url(url) or _NOT_PLAIN.search(url):
        return element("span", url if label is None else label, class_="url")
    return element(
        "a",
        url if label is None else label,
        href=url,
        rel="noopener noreferrer nofollow",
        referrerpolicy="no-referrer",
        target="_blank",
    )


def anchor(prefix: str, key: str) -> str | None:
    """A fragment id made of `key` (an evidence id such as E001), or None for any other string
    (a model may cite anything; such a citation is shown but not linked)."""
    return f"{prefix}-{key}" if _ANCHOR.fullmatch(key) else None


def jump(prefix: str, key: str, label: object = None) -> Html:
    """A link to the element `anchor(prefix, key)` names, or `key` as text."""
    target = anchor(prefix, key)
    shown = key if label is None else label
    return element("a", shown, href=f"#{target}") if target else element("span", shown)


def cut(value: str, limit: int) -> str:
    """`value` at most `limit` characters, saying how many were left out."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]} [... {len(value) - limit:,} more characters not shown]"


def definitions(facts: list[tuple[str, object]]) -> Html:
    """A `dl` of name and value pairs."""
    return element("dl", [[element("dt", name), element("dd", value)] for name, value in facts])


def section(fragment: str, title: str, *body: object) -> Html:
    """A `section` with its `h2` title, reached at `#fragment`."""
    return element("section", element("h2", title), *body, id=fragment)
