"""Page bodies to snapshots (pure): HTML, text and PDF to structured plain text split into passages.

Also the text rules evidence relies on: whitespace normalisation, content hashes and verbatim quote
lookup. No I/O happens here; `activities.pages` fetches, this module only reads bytes. Reading a
PDF's pages is `activities.pages.pdf`; its paragraphs become passages here like any other type's.
"""

from __future__ import annotations

import bisect
import codecs
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from selectolax.lexbor import LexborHTMLParser, LexborNode

from activities.pages import structure
from activities.pages.pdf import read_pdf
from workflows.text import sentences

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
PDF_TYPE = "application/pdf"

_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\S+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_MARKDOWN_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")

_DROPPED = ["script", "style", "nav", "header", "footer", "aside", "noscript", "template", "form"]
# Page furniture marked by its ARIA role or by the class names of common documentation
# generators (Sphinx's related-links bar and sidebar, breadcrumbs, heading permalinks "¶").
_BOILERPLATE = [
    '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]', '[role="search"]',
    ".sphinxsidebar", ".related", ".breadcrumb", ".breadcrumbs", "a.headerlink", ".footer",
    ".navheader", ".navfooter", ".toc", ".toctree-wrapper", ".skip-link", ".skip-to-content",
]  # fmt: skip
# Readability's rule for what the selectors miss: a list, table or division of at least
# _LINK_LIST_MIN links whose text is mostly link text is navigation (a table of contents, an
# index, a "Prev | Up | Home | Next" row), and so is a link that offers to skip to the content.
_LINK_LISTS = "ul, ol, dl, table, div"
_LINK_LIST_MIN = 3
_LINK_SHARE = 0.7
_SKIP_LINK = re.compile(r"skip\s+(to|navigation)\b", re.IGNORECASE)
_LEAF_BLOCKS = frozenset({"pre", "tr", "svg"})
# Elements that end the paragraph before them and start a new one after them.
_BLOCKS = frozenset(
    {
        "p", "li", "blockquote", "div", "section", "article", "main", "ul", "ol", "dl", "dt",
        "dd", "table", "thead", "tbody", "tfoot", "caption", "figure", "figcaption", "address",
        "details", "summary", "hr", "body", "html",
    }
)  # fmt: skip
_TITLE_LIMIT = 300


@dataclass(frozen=True)
class PassageSpan:
    start: int  # character offset in the snapshot text
    end: int
    section: str  # nearest heading above, "" if none


@dataclass(frozen=True)
class Extracted:
    title: str
    text: str  # the snapshot: structured plain text, headings kept as their own lines
    passages: list[PassageSpan]  # paragraph granularity, in order, covering text[start:end]
    truncated: bool  # text was cut at max_chars


@dataclass(frozen=True)
class _Block:
    text: str
    section: str
    whole: bool = False  # code: never split
    heading: bool = False  # starts a passage


@dataclass(frozen=True)
class _End:
    """Where a block element ends in the HTML walk: the section and block count it began at."""

    section: str
    blocks: int


def extract(body: bytes, content_type: str, *, max_chars: int) -> Extracted:
    """Turn a fetched body into a bounded snapshot; ValueError for a type we cannot read."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    media_type, charset = _parse_content_type(content_type)
    if media_type in HTML_TYPES:
        title, blocks = _html_blocks(_decode(body, charset or _sniff_html_charset(body)))
    elif media_type in TEXT_TYPES:
        title, blocks = _text_blocks(_decode(body, charset), markdown=media_type == "text/markdown")
    elif media_type == PDF_TYPE:
        return _pdf_snapshot(body, max_chars)
    else:
        raise ValueError(f"unsupported content type: {content_type!r}")
    return _assemble(title, blocks, max_chars)


def normalise_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip both ends."""
    return _WHITESPACE.sub(" ", text).strip()


def content_hash(text: str) -> str:
    """sha256 hex of the whitespace-normalised, lower-cased text, so mirrors hash equal."""
    return hashlib.sha256(normalise_whitespace(text).lower().encode("utf-8")).hexdigest()


def find_quote(snapshot: str, quote: str) -> tuple[int, int] | None:
    """Offsets in `snapshot` of `quote`, matched verbatim after whitespace normalisation of both.

    Case-sensitive, and the match must start and end on word boundaries, so "safe to use" is not
    found inside "unsafe to use". Returns None when the quote is empty or not there.
    """
    needle = normalise_whitespace(quote)
    if not needle:
        return None
    words = [(match.start(), match.group()) for match in _WORD.finditer(snapshot)]
    haystack = " ".join(word for _, word in words)
    normalised_starts = list(_running_starts(word for _, word in words))
    for position in _occurrences(haystack, needle):
        if _on_word_boundaries(haystack, position, position + len(needle)):
            start = _original_offset(words, normalised_starts, position)
            end = _original_offset(words, normalised_starts, position + len(needle) - 1) + 1
            return start, end
    return None


# ---------------------------------------------------------------- quote lookup helpers


def _running_starts(words: Iterator[str]) -> Iterator[int]:
    offset = 0
    for word in words:
        yield offset
        offset += len(word) + 1


def _occurrences(haystack: str, needle: str) -> Iterator[int]:
    position = haystack.find(needle)
    while position != -1:
        yield position
        position = haystack.find(needle, position + 1)


def _on_word_boundaries(haystack: str, start: int, end: int) -> bool:
    before_ok = start == 0 or not (haystack[start - 1].isalnum() and haystack[start].isalnum())
    after_ok = end == len(haystack) or not (haystack[end - 1].isalnum() and haystack[end].isalnum())
    return before_ok and after_ok


def _original_offset(words: list[tuple[int, str]], starts: list[int], position: int) -> int:
    """Map a character position inside a word of the normalised text back to the original."""
    index = bisect.bisect_right(starts, position) - 1
    return words[index][0] + (position - starts[index])


# ---------------------------------------------------------------- decoding


def _parse_content_type(content_type: str) -> tuple[str, str | None]:
    media_type, _, parameters = content_type.partition(";")
    charset = None
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip("\"'"):
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset


def _sniff_html_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:2048])
    return match.group(1).decode("ascii") if match else None


def _decode(body: bytes, charset: str | None) -> str:
    encoding = "utf-8-sig"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            encoding = "utf-8-sig"
    if encoding == "utf-8":
        encoding = "utf-8-sig"  # drop a byte-order mark rather than keep it as text
    text = body.decode(encoding, errors="replace")
    return _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))


# ---------------------------------------------------------------- HTML


def _html_blocks(html: str) -> tuple[str, list[_Block]]:
    tree = LexborHTMLParser(html)
    title = _html_title(tree)
    for node in tree.css(", ".join(_DROPPED + _BOILERPLATE)):
        node.decompose()
    structure.drop_controls(tree)
    _drop_link_lists(tree)
    root = _content_root(tree)
    walker = _HtmlWalker()
    if root is not None:
        walker.walk(root, structure.headings(root), structure.listings(root))
        walker.flush()
    return title, walker.blocks


def _html_title(tree: LexborHTMLParser) -> str:
    for selector in ("title", "h1"):
        node = tree.css_first(selector)
        title = normalise_whitespace(node.text(deep=True)) if node is not None else ""
        if title:
            return title[:_TITLE_LIMIT]
    return ""


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    main = tree.css_first("main") or tree.css_first('[role="main"]')
    if main is not None:
        return main
    articles = tree.css("article")
    if len(articles) == 1:
        return articles[0]
    return tree.body if tree.body is not None else tree.root


def _drop_link_lists(tree: LexborHTMLParser) -> None:
    """Remove navigation the selectors did not name: link-dense blocks and "skip to" links."""
    dropped: set[int] = set()
    for node in tree.css(_LINK_LISTS):
        if node.mem_id in dropped or structure.inside(node, dropped):
            continue
        links = node.css("a")
        if len(links) < _LINK_LIST_MIN:
            continue
        text = len(normalise_whitespace(node.text(deep=True)))
        linked = sum(len(normalise_whitespace(link.text(deep=True))) for link in links)
        if text and linked >= _LINK_SHARE * text:
            dropped.add(node.mem_id)
            node.decompose()
    for link in tree.css("a"):
        if _SKIP_LINK.match(normalise_whitespace(link.text(deep=True))):
            link.decompose()


class _HtmlWalker:
    """Walks block elements in document order, turning each paragraph-like run into one block."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self._headings: set[int] = set()  # mem_ids (`structure.headings`)
        self._listings: dict[int, str] = {}  # mem_id: its lines (`structure.listings`)
        self.section = ""
        self._inline: list[str] = []

    def walk(self, root: LexborNode, headings: set[int], listings: dict[int, str]) -> None:
        self._headings, self._listings = headings, listings
        # An explicit stack, not recursion: untrusted pages may nest elements thousands deep.
        stack: list[LexborNode | _End] = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, _End):
                self._end(node)
            else:
                self._visit(node, stack)

    def _end(self, end: _End) -> None:
        """A heading's section ends where the element holding it and its text ends (a "Note" box,
        a <section>); an element holding nothing but the heading (a title wrapper) passes it on."""
        self.flush()
        emitted = self.blocks[end.blocks :]
        if any(not block.heading for block in emitted):
            self.section = end.section

    def _visit(self, node: LexborNode, stack: list[LexborNode | _End]) -> None:
        tag = node.tag or ""
        if node.is_text_node:
            self._inline.append(node.text(deep=False))
        elif node.mem_id in self._headings:
            self.flush()
            self.section = normalise_whitespace(node.text(deep=True))
            self._emit(self.section, heading=True)
        elif tag in _LEAF_BLOCKS:
            self.flush()
            self._leaf(node, tag, stack)
        elif tag == "br":
            self._inline.append(" ")
        elif node.mem_id in self._listings:
            self.flush()
            self._emit(self._listings[node.mem_id], whole=True)
        elif not tag.startswith("-"):  # elements; "-comment" and "-doctype" nodes are skipped
            if tag in _BLOCKS:
                self.flush()
                stack.append(_End(section=self.section, blocks=len(self.blocks)))
            stack.extend(reversed(list(node.iter(include_text=True))))

    def _leaf(self, node: LexborNode, tag: str, stack: list[LexborNode | _End]) -> None:
        """A listing or diagram is one code-like block; a row is one line, and the tables
        inside its cells are walked after it (their rows follow it)."""
        if tag == "tr":
            line, tables = structure.row(node)
            self._emit(line)
            stack.extend(reversed(tables))
        else:
            text = structure.pre_text(node) if tag == "pre" else structure.diagram(node)
            self._emit(text, whole=True)

    def flush(self) -> None:
        self._emit(normalise_whitespace("".join(self._inline)))
        self._inline = []

    def _emit(self, text: str, *, whole: bool = False, heading: bool = False) -> None:
        if text:
            self.blocks.append(_Block(text, self.section, whole=whole, heading=heading))


# ---------------------------------------------------------------- plain text and Markdown


def _text_blocks(text: str, *, markdown: bool) -> tuple[str, list[_Block]]:
    blocks: list[_Block] = []
    section = ""
    headings: list[str] = []
    for paragraph, is_heading in _paragraphs(text.split("\n"), markdown=markdown):
        if is_heading:
            section = paragraph
            headings.append(paragraph)
        code = markdown and bool(_FENCE.match(paragraph))
        blocks.append(_Block(paragraph, section, whole=code, heading=is_heading))
    first_line = blocks[0].text.split("\n", 1)[0] if blocks else ""
    title = headings[0] if headings else normalise_whitespace(first_line)
    return title[:_TITLE_LIMIT], blocks


def _paragraphs(lines: list[str], *, markdown: bool) -> Iterator[tuple[str, bool]]:
    """Blank-line-separated paragraphs; Markdown headings and fenced code are kept whole."""
    current: list[str] = []
    in_fence = False
    for line in lines:
        heading = _MARKDOWN_HEADING.match(line) if markdown and not in_fence else None
        if heading or (not in_fence and not line.strip()):
            yield from _paragraph(current)
            current = []
            if heading and heading.group(2):
                yield heading.group(2).strip(), True
            continue
        if markdown and _FENCE.match(line):
            in_fence = not in_fence
        current.append(line.rstrip())
    yield from _paragraph(current)


def _paragraph(lines: list[str]) -> Iterator[tuple[str, bool]]:
    text = "\n".join(lines).strip()
    if text:
        yield text, False


# ---------------------------------------------------------------- PDF


def _pdf_snapshot(body: bytes, max_chars: int) -> Extracted:
    """Paragraphs of each page as blocks whose section is their page ("Page 3")."""
    pdf = read_pdf(body, max_chars=max_chars)
    blocks = [
        _Block(text=text, section=f"Page {number}")
        for number, paragraphs in enumerate(pdf.pages, start=1)
        for text in map(_clean_pdf_paragraph, paragraphs)
        if text
    ]
    if not blocks:
        raise ValueError("the PDF has no extractable text (it may be scanned images without OCR)")
    title = normalise_whitespace(_CONTROL.sub(" ", pdf.title)) or blocks[0].text.split("\n", 1)[0]
    extracted = _assemble(title[:_TITLE_LIMIT], blocks, max_chars)
    return extracted if pdf.complete else replace(extracted, truncated=True)


def _clean_pdf_paragraph(paragraph: str) -> str:
    lines = (normalise_whitespace(line) for line in _CONTROL.sub(" ", paragraph).split("\n"))
    return "\n".join(line for line in lines if line)


# ---------------------------------------------------------------- snapshot assembly


def _assemble(title: str, blocks: list[_Block], max_chars: int) -> Extracted:
    """Join blocks with blank lines, cutting at the last whole block that fits under max_chars,
    and size the passages for reading (`_passages`)."""
    pieces: list[str] = []
    spans: list[tuple[int, _Block]] = []
    offset = 0
    truncated = False
    for block in blocks:
        start = offset + (2 if pieces else 0)
        if start + len(block.text) > max_chars:
            truncated = True
            if not pieces:  # a single oversized first block is cut hard
                cut = block.text[:max_chars].rstrip()
                passages = [PassageSpan(start=0, end=len(cut), section=block.section)]
                return Extracted(title=title, text=cut, passages=passages, truncated=True)
            break
        pieces.append(block.text)
        spans.append((start, block))
        offset = start + len(block.text)
    return Extracted(
        title=title, text="\n\n".join(pieces), passages=_passages(spans), truncated=truncated
    )


# Passages are what a reader is shown: fragments under one heading are merged up to
# PASSAGE_TARGET characters (past it while the passage is under PASSAGE_MIN, up to
# PASSAGE_MAX), and a paragraph over PASSAGE_MAX is split at sentence ends. A heading starts a
# passage; a passage never spans two sections; code is never split.
PASSAGE_MIN = 200
PASSAGE_TARGET = 1000
PASSAGE_MAX = 1500


def _passages(spans: list[tuple[int, _Block]]) -> list[PassageSpan]:
    passages: list[PassageSpan] = []
    current: PassageSpan | None = None
    for start, block in spans:
        for piece_start, piece_end in _pieces(start, block):
            if current is not None and not block.heading and current.section == block.section:
                merged = piece_end - current.start
                size = current.end - current.start
                if merged <= PASSAGE_TARGET or (size < PASSAGE_MIN and merged <= PASSAGE_MAX):
                    current = replace(current, end=piece_end)
                    continue
            if current is not None:
                passages.append(current)
            current = PassageSpan(start=piece_start, end=piece_end, section=block.section)
    if current is not None:
        passages.append(current)
    return passages


def _pieces(start: int, block: _Block) -> Iterator[tuple[int, int]]:
    """The block's span, or for a long paragraph spans of whole sentences of about
    PASSAGE_TARGET characters (a sentence longer than PASSAGE_MAX is cut at a space)."""
    text = block.text
    if block.whole or len(text) <= PASSAGE_MAX:
        yield start, start + len(text)
        return
    piece = 0
    while len(text) - piece > PASSAGE_MAX:
        cut = _cut(text, piece)
        yield start + piece, start + len(text[:cut].rstrip())
        piece = cut + (len(text[cut:]) - len(text[cut:].lstrip()))
    yield start + piece, start + len(text)


def _cut(text: str, piece: int) -> int:
    """Where the piece starting at `piece` ends: the last sentence end (`workflows.text`) before
    PASSAGE_TARGET, else the first before PASSAGE_MAX, else the last space before PASSAGE_MAX."""
    window = text[piece : piece + PASSAGE_MAX]
    ends = [piece + end for _, end in sentences(window)[:-1]]
    within = [end for end in ends if end - piece <= PASSAGE_TARGET]
    if within:
        return within[-1]
    if ends:
        return ends[0]
    space = text.rfind(" ", piece + 1, piece + PASSAGE_MAX)
    return space if space > piece else piece + PASSAGE_MAX
