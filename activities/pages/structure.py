"""What an HTML element is to a reader, read from its semantics (pure): used by the HTML walk in
`activities.pages.extract`.

- **Headings** however marked: `<h1>`-`<h6>`, and any element with `role="heading"`. A
  definition list's `<dt>` is not one: it names what its `<dd>` defines (a signature, an
  option), and the policy reads it as the line above.
- **Table rows** stay rows: one line, the row's own cells joined by " | ". A table inside a cell
  is not part of the cell's text: its rows follow the row, each a row of its own (httpd's
  `hcmethod | None | ...` row holds a table of methods, which used to be glued into the cell).
  Block elements and line breaks inside a cell separate words.
- **Listings and diagrams** are code-like blocks, never prose: `<pre>` keeps its lines (several
  `<code>` versions of one example, such as an ES module and a CommonJS one, each start a line),
  a paragraph that is nothing but one `<code>` broken into lines by `<br>` keeps those lines
  (httpd's `<div class="example"><p><code>...<br>...`), and an `<svg>` (a railroad diagram) is the
  words it draws, one a line. Images have no text here: their alt text describes a picture.
- **Widget controls** are not the page's text: form controls and labels, `role="button"` /
  `"switch"` / `"tab"`, and an element that toggles, copies or links to a fragment of the page
  (`onclick`, `aria-expanded`, `aria-controls`, a `<summary>`, a toggle/collapse/expand/copy
  class, a link to `#` or `javascript:`) whose text is a control word ("Show", "Hide", "Copy",
  "Expand all") or no word at all ("[+]", "#", "¶"). What a widget shows or hides is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

_HEADING_SELECTOR = 'h1, h2, h3, h4, h5, h6, [role="heading" i]'

# Always controls: their text is what a user clicks or types, not what the page says.
_CONTROLS = "button, input, select, textarea, label"
# Elements that act rather than say: dropped when their text is a control's (_CONTROL_TEXT).
_ACTIVE = (
    '[role="button"], [role="switch"], [role="tab"], [onclick], [aria-expanded], '
    '[aria-controls], [aria-pressed], summary, a[href^="#"], a[href^="javascript:"], '
    '[class*="oggle"], [class*="ollaps"], [class*="xpand"], [class*="opy"], [class*="lipboard"]'
)
# Words of a class name (split at spaces, "-" and "_") that say the element toggles or copies.
_ACTIVE_CLASS_WORDS = frozenset(
    {
        "toggle", "toggler", "toggles", "collapse", "collapsed", "collapsible", "expand",
        "expanded", "expander", "expandable", "copy", "copybutton", "copybtn", "clipboard",
    }
)  # fmt: skip
_CLASS_WORD = re.compile(r"[^\s_-]+")
_ACTIVE_ATTRIBUTES = frozenset({"onclick", "aria-expanded", "aria-controls", "aria-pressed"})
_CONTROL_ROLES = frozenset({"button", "switch", "tab"})  # whatever their words
_CONTROL_WORDS = r"show|hide|copy|copied|expand|collapse|toggle|fold|unfold"
_CONTROL_TEXT = re.compile(
    rf"^[\[(]?\s*(?:click\s+(?:here\s+)?to\s+)?(?:{_CONTROL_WORDS})"
    rf"(?:\s*[/|]\s*(?:{_CONTROL_WORDS}))?(?:[\s:]+[\w'-]+){{0,3}}\s*[\])]?\s*$",
    re.IGNORECASE,
)
_ACTIVE_TEXT_LIMIT = 40  # longer text is content a widget shows, never a control's label
_WORDLESS = re.compile(r"^\W*$")
# What a link to a place on its own page shows when it is a permalink or a way back.
_PERMALINKS = frozenset({"", "#", "¶", "§", "🔗", "↩", "↩\ufe0e", "↩\ufe0f", "↑", "⇧", "⬆"})
_CELLS = frozenset({"td", "th"})
_LISTING_CODE = frozenset({"code", "samp", "kbd", "tt"})
_LISTING_HOLDERS = frozenset({"p", "div"})
_BROKEN_CODE = ", ".join(f"{tag} br" for tag in sorted(_LISTING_CODE))
# Elements that separate the words before and after them in a table cell.
_SEPARATING = frozenset(
    {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "br", "pre", "blockquote", "hr", "section"}
)


def headings(root: LexborNode) -> set[int]:
    """The `mem_id`s of the headings under `root`. A snapshot's sections are flat (a passage's
    section is the nearest heading above it), so a heading's level is not kept."""
    return {node.mem_id for node in root.css(_HEADING_SELECTOR)}


def drop_controls(tree: LexborHTMLParser) -> None:
    """Remove widget controls and their text; what they show or hide stays."""
    for node in tree.css(_CONTROLS):
        node.decompose()
    dropped: set[int] = set()
    for node in tree.css(_ACTIVE):  # document order: an outer control before its parts
        if not inside(node, dropped) and _is_control(node):
            dropped.add(node.mem_id)
            node.decompose()


def _is_control(node: LexborNode) -> bool:
    tag = node.tag or ""
    attributes = node.attributes
    role = (attributes.get("role") or "").strip().lower()
    href = attributes.get("href") or ""
    if tag == "a" and not href.startswith(("#", "javascript:")):
        return False  # a link elsewhere, whatever its words
    active = (
        tag == "summary"
        or href.startswith("javascript:")
        or role in _CONTROL_ROLES
        or bool(_ACTIVE_ATTRIBUTES & set(attributes))
        or not _ACTIVE_CLASS_WORDS.isdisjoint(
            _CLASS_WORD.findall((attributes.get("class") or "").lower())
        )
    )
    text = " ".join(node.text(deep=True).split()) if active or tag == "a" else ""
    if not active:
        # A link to a place on its page is content ("copy", `fold`, `**`) unless it is a
        # permalink or a way back.
        return tag == "a" and text in _PERMALINKS
    if len(text) > _ACTIVE_TEXT_LIMIT:
        return False  # what a widget shows, never a control's label
    return role in _CONTROL_ROLES or bool(_CONTROL_TEXT.match(text) or _WORDLESS.match(text))


def inside(node: LexborNode, dropped: set[int]) -> bool:
    """Some element around `node` is among the `dropped` (by their `mem_id`)."""
    parent = node.parent
    while parent is not None:
        if parent.mem_id in dropped:
            return True
        parent = parent.parent
    return False


def row(node: LexborNode) -> tuple[str, list[LexborNode]]:
    """A table row's line (its own cells, " | " between) and the tables inside its cells."""
    cells: list[str] = []
    tables: list[LexborNode] = []
    for cell in node.iter():
        if (cell.tag or "") in _CELLS:
            words, inner = _cell(cell)
            cells.append(words)
            tables.extend(inner)
    return " | ".join(cell for cell in cells if cell), tables


def _cell(cell: LexborNode) -> tuple[str, list[LexborNode]]:
    """The cell's words, a space where a block or line break separates them, and the tables
    inside it (left out of its words)."""
    pieces: list[str] = []
    tables: list[LexborNode] = []
    stack: list[LexborNode | str] = list(reversed(list(cell.iter(include_text=True))))
    while stack:  # explicit: pages nest deep
        node = stack.pop()
        if isinstance(node, str):
            pieces.append(node)
        elif node.is_text_node:
            pieces.append(node.text(deep=False))
        elif node.tag == "table":
            tables.append(node)
        else:
            if (node.tag or "") in _SEPARATING:
                pieces.append(" ")
                stack.append(" ")  # after it, too
            stack.extend(reversed(list(node.iter(include_text=True))))
    return " ".join("".join(pieces).split()), tables


def pre_text(node: LexborNode) -> str:
    """A <pre>'s lines, trailing spaces and blank lines dropped; each of several <code>
    children (versions of one example) starts a line."""
    children = [child for child in node.iter(include_text=True) if not _blank(child)]
    if len(children) > 1 and all(child.tag == "code" for child in children):
        return "\n".join(filter(None, (_lines(child.text(deep=True)) for child in children)))
    return _lines(node.text(deep=True))


def listings(root: LexborNode) -> dict[int, str]:
    """The paragraphs (`<p>`, `<div>`) under `root` that are nothing but one `<code>` broken
    into lines by `<br>`: each one's `mem_id` and its lines."""
    found: dict[int, str] = {}
    for br in root.css(_BROKEN_CODE):
        code = br.parent
        while code is not None and (code.tag or "") not in _LISTING_CODE:
            code = code.parent
        while code is not None and code.parent is not None and code.parent.tag in _LISTING_CODE:
            code = code.parent  # the outermost of <code><code>...</code></code>
        holder = code.parent if code is not None else None
        if code is None or holder is None or (holder.tag or "") not in _LISTING_HOLDERS:
            continue
        if holder.mem_id in found:
            continue
        children = [child for child in holder.iter(include_text=True) if not _blank(child)]
        if len(children) == 1 and children[0].mem_id == code.mem_id:
            found[holder.mem_id] = _listing_lines(code)
    return found


def _listing_lines(code: LexborNode) -> str:
    pieces = ["\n" if child.tag == "br" else _inline(child) for child in _descendants(code)]
    lines = (" ".join(line.split()) for line in "".join(pieces).split("\n"))
    return "\n".join(line for line in lines if line)


def diagram(node: LexborNode) -> str:
    """The words an <svg> draws, one a line (a railroad diagram's keywords and symbols)."""
    words = (" ".join(text.text(deep=True).split()) for text in node.css("text"))
    return "\n".join(word for word in words if word)


def _lines(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line.strip())


def _inline(node: LexborNode) -> str:
    return node.text(deep=False) if node.is_text_node else ""


def _blank(node: LexborNode) -> bool:
    tag = node.tag or ""
    if node.is_text_node:
        return not node.text(deep=False).strip()
    return tag.startswith("-")  # comments


def _descendants(root: LexborNode) -> Iterator[LexborNode]:
    """Nodes under `root` in document order (an explicit stack: pages nest deep)."""
    stack = list(reversed(list(root.iter(include_text=True))))
    while stack:
        node = stack.pop()
        yield node
        if not node.is_text_node:
            stack.extend(reversed(list(node.iter(include_text=True))))
