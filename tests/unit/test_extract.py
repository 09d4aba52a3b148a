"""Extraction rules: what the snapshot keeps, its passage offsets, and verbatim quote lookup."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activities.pages.extract import (
    PASSAGE_MAX,
    PASSAGE_MIN,
    PASSAGE_TARGET,
    Extracted,
    content_hash,
    extract,
    find_quote,
    normalise_whitespace,
)

ARTICLE = b"""<!doctype html>
<html><head><title>Cache  invalidation
 guide</title><style>p { color: red }</style><script>var secret = 1;</script></head>
<body>
<header><a href="/">Site home</a></header>
<nav><ul><li>Menu entry</li></ul></nav>
<main>
  <h1>Hybrid caching</h1>
  <p>Caches keep <b>hot</b> data
     close to the reader.</p>
  <script>document.write("injected")</script>
  <h2>Invalidation</h2>
  <p>Write-through keeps the cache consistent.</p>
  <ul><li>first rule</li><li>second <i>rule</i></li></ul>
  <pre>ttl = 30
  evict()</pre>
  <table><tr><th>policy</th><td>LRU</td></tr></table>
  <blockquote>Quoted wisdom.</blockquote>
  <form><p>Subscribe to our newsletter</p></form>
</main>
<aside>Related posts</aside>
<footer>Copyright footer</footer>
</body></html>"""


def _passage_texts(result: Extracted) -> list[str]:
    return [result.text[span.start : span.end] for span in result.passages]


def test_html_drops_chrome_and_keeps_the_main_content() -> None:
    result = extract(ARTICLE, "text/html; charset=utf-8", max_chars=10_000)

    assert result.title == "Cache invalidation guide"
    for chrome in ("Site home", "Menu entry", "secret", "injected", "Related", "Copyright"):
        assert chrome not in result.text
    assert "Subscribe" not in result.text
    blocks = [
        "Hybrid caching",
        "Caches keep hot data close to the reader.",
        "Invalidation",
        "Write-through keeps the cache consistent.",
        "first rule",
        "second rule",
        "ttl = 30\n  evict()",
        "policy | LRU",
        "Quoted wisdom.",
    ]
    assert result.text == "\n\n".join(blocks)
    # Fragments under one heading are one passage; each heading starts one.
    assert _passage_texts(result) == ["\n\n".join(blocks[:2]), "\n\n".join(blocks[2:])]
    assert result.truncated is False


def test_html_headings_become_sections_of_the_following_paragraphs() -> None:
    result = extract(ARTICLE, "text/html", max_chars=10_000)

    assert [span.section for span in result.passages] == ["Hybrid caching", "Invalidation"]


def _assert_tiles(result: Extracted) -> None:
    """Passages are stripped, in order, and cover the text with only whitespace between them."""
    previous_end = 0
    for span in result.passages:
        assert result.text[previous_end : span.start].strip() == ""
        assert span.end > span.start
        assert result.text[span.start : span.end].strip() == result.text[span.start : span.end]
        previous_end = span.end
    assert result.text[previous_end:].strip() == ""


def test_passages_are_exact_offsets_that_tile_the_text() -> None:
    _assert_tiles(extract(ARTICLE, "text/html", max_chars=10_000))


def test_html_without_title_uses_first_h1_and_body_without_main() -> None:
    html = b"<html><body><div><h1>Only heading</h1>Loose <em>text</em> here</div></body></html>"

    result = extract(html, "application/xhtml+xml", max_chars=1_000)

    assert result.title == "Only heading"
    assert result.text == "Only heading\n\nLoose text here"
    assert _passage_texts(result) == [result.text]


def test_html_charset_from_content_type_and_replacement_for_bad_bytes() -> None:
    latin = "<p>Café</p>".encode("latin-1")

    assert extract(latin, "text/html; charset=ISO-8859-1", max_chars=100).text == "Café"
    assert extract(latin, "text/html", max_chars=100).text == "Caf\ufffd"


def test_markdown_paragraphs_and_heading_sections() -> None:
    markdown = (
        b"# Guide\nIntro line one\nline two\n\n\n## Details\n\nFirst paragraph.\n\n"
        b"```\n# a comment, not a heading\n\ncode\n```\n"
    )

    result = extract(markdown, "text/markdown; charset=utf-8", max_chars=10_000)

    assert result.title == "Guide"
    assert _passage_texts(result) == [
        "Guide\n\nIntro line one\nline two",
        "Details\n\nFirst paragraph.\n\n```\n# a comment, not a heading\n\ncode\n```",
    ]
    assert [span.section for span in result.passages] == ["Guide", "Details"]


def test_plain_text_has_no_headings() -> None:
    result = extract(b"# not a heading\n\nsecond\r\nparagraph\n", "text/plain", max_chars=100)

    assert result.text == "# not a heading\n\nsecond\nparagraph"
    assert _passage_texts(result) == [result.text]
    assert {span.section for span in result.passages} == {""}
    assert result.title == "# not a heading"


def test_truncation_cuts_at_a_passage_boundary() -> None:
    body = b"aaaa\n\nbbbb\n\ncccc"

    whole = extract(body, "text/plain", max_chars=16)
    cut = extract(body, "text/plain", max_chars=15)

    assert whole.text == "aaaa\n\nbbbb\n\ncccc" and whole.truncated is False
    assert cut.text == "aaaa\n\nbbbb" and cut.truncated is True
    assert _passage_texts(cut) == ["aaaa\n\nbbbb"]


def test_truncation_cuts_an_oversized_first_passage_hard() -> None:
    result = extract(b"x" * 50 + b"\n\nnext", "text/plain", max_chars=10)

    assert result.text == "x" * 10
    assert result.truncated is True
    assert _passage_texts(result) == ["x" * 10]


@pytest.mark.parametrize("content_type", ["application/json", "image/png", ""])
def test_unknown_content_types_are_refused(content_type: str) -> None:
    with pytest.raises(ValueError, match="unsupported content type"):
        extract(b"{}", content_type, max_chars=100)


SNAPSHOT = (
    "Caching guide\n\nWrite-through   keeps the cache\nconsistent with the store.\n\n"
    "It is unsafe to use stale entries."
)


def test_find_quote_exact() -> None:
    quote = "It is unsafe to use stale entries."

    start, end = find_quote(SNAPSHOT, quote) or (0, 0)

    assert SNAPSHOT[start:end] == quote


def test_find_quote_matches_across_whitespace_and_maps_back_to_original_offsets() -> None:
    found = find_quote(SNAPSHOT, "  keeps the cache consistent\twith the   store ")

    assert found is not None
    start, end = found
    assert SNAPSHOT[start:end] == "keeps the cache\nconsistent with the store"
    assert normalise_whitespace(SNAPSHOT[start:end]) == "keeps the cache consistent with the store"


@pytest.mark.parametrize(
    "quote",
    [
        "write-through keeps the cache",  # case differs
        "Write-through keeps the cache coherent",  # paraphrase
        "It is safe to use stale entries.",  # fabricated
        "safe to use stale entries",  # inside the word "unsafe"
        "",
        "   \n ",
    ],
)
def test_find_quote_refuses_what_is_not_verbatim(quote: str) -> None:
    assert find_quote(SNAPSHOT, quote) is None


def test_find_quote_may_span_a_passage_break() -> None:
    found = find_quote(SNAPSHOT, "Caching guide Write-through")

    assert found is not None
    assert SNAPSHOT[found[0] : found[1]] == "Caching guide\n\nWrite-through"


def test_content_hash_ignores_whitespace_and_case_only() -> None:
    assert content_hash("Hello   world\n\nagain") == content_hash(" hello world again ")
    assert content_hash("Hello world") != content_hash("Hello, world")
    assert len(content_hash("")) == 64


def test_normalise_whitespace_collapses_all_kinds_of_space() -> None:
    assert normalise_whitespace("  a\t\nb\u00a0 c  ") == "a b c"


def test_html_charset_from_meta_when_the_header_has_none() -> None:
    html = '<meta charset="windows-1252"><p>naïve “quotes”</p>'.encode("cp1252")

    assert extract(html, "text/html", max_chars=100).text == "naïve “quotes”"


def test_deeply_nested_html_does_not_exhaust_the_stack() -> None:
    html = b"<div>" * 5_000 + b"deep <span>" * 5_000 + b"text" + b"</span></div>" * 5_000

    result = extract(html, "text/html", max_chars=100_000)

    assert result.text.startswith("deep deep") and result.text.endswith("deep text")


def test_documentation_furniture_is_dropped_and_the_aria_main_region_kept() -> None:
    page = b"""<html><head><title>functools</title></head><body>
    <div class="related" role="navigation"><h3>Navigation</h3>
      <ul><li><a href="genindex.html">index</a> | </li><li><a href="x.html">next</a></li></ul></div>
    <div class="sphinxsidebar" role="navigation"><h3>Contents</h3><ul><li>cache</li></ul></div>
    <div class="document"><div class="body" role="main">
      <h1>functools<a class="headerlink" href="#f">\xc2\xb6</a></h1>
      <p>The functools module is for higher-order functions.</p>
    </div></div>
    <div class="footer">&copy; Copyright the authors.</div>
    </body></html>"""

    result = extract(page, "text/html; charset=utf-8", max_chars=10_000)

    assert result.text == "functools\n\nThe functools module is for higher-order functions."


# ---------------------------------------------------------------- navigation and passage sizing

DOCBOOK_PAGE = b"""<html><head><title>5.1. Table Basics</title></head><body>
<div class="navheader"><table><tr><th>5.1. Table Basics</th></tr>
<tr><td><a href="ddl.html">Prev</a></td><td><a href="ddl.html">Up</a></td>
<td><a href="index.html">Home</a></td><td><a href="next.html">Next</a></td></tr></table></div>
<div class="sect1"><div class="titlepage"><div><div><h2>5.1. Table Basics</h2></div></div></div>
<p>A table in a relational database is much like a table on paper.</p>
<div class="note"><h3>Note</h3><p>Tables have a limit of 1600 columns.</p></div>
<p>Each column has a data type.</p></div>
<table><tr><td><a href="a.html">Prev</a></td><td><a href="b.html">Up</a></td>
<td><a href="c.html">Next</a></td></tr></table>
</body></html>"""


def test_link_rows_and_lists_are_navigation_and_are_dropped() -> None:
    result = extract(DOCBOOK_PAGE, "text/html", max_chars=10_000)

    for chrome in ("Prev", "Home", "Next", "Up"):
        assert chrome not in result.text.split()
    assert result.text.startswith("5.1. Table Basics\n\nA table in a relational database")


def test_a_heading_section_ends_where_its_box_ends() -> None:
    result = extract(DOCBOOK_PAGE, "text/html", max_chars=10_000)

    sections = {result.text[span.start : span.end]: span.section for span in result.passages}
    assert sections == {
        "5.1. Table Basics\n\nA table in a relational database is much like a table on paper.": (
            "5.1. Table Basics"
        ),
        "Note\n\nTables have a limit of 1600 columns.": "Note",
        "Each column has a data type.": "5.1. Table Basics",
    }


def test_prose_with_links_skip_links_and_tables_of_contents() -> None:
    html = b"""<html><body><a href="#main">Skip to main content</a><main id="main">
    <h1>Guide</h1><div class="toc"><ul><li><a href="#a">Intro</a></li></ul></div>
    <ul><li><a href="x.html">Installing</a></li><li><a href="y.html">Configuring</a></li>
    <li><a href="z.html">Upgrading</a></li></ul>
    <p>Read <a href="a">one</a>, <a href="b">two</a> and <a href="c">three</a> first: each of
    these pages explains a step of the setup in the order you will need it.</p></main>
    </body></html>"""

    result = extract(html, "text/html", max_chars=10_000)

    assert "Skip" not in result.text
    assert "Intro" not in result.text and "Installing" not in result.text
    assert "Read one, two and three first" in result.text


def test_a_long_paragraph_is_split_at_sentence_ends() -> None:
    sentences = [f"Sentence number {i} explains one more detail of the system." for i in range(80)]
    html = ("<main><h1>Long</h1><p>" + " ".join(sentences) + "</p></main>").encode()

    result = extract(html, "text/html", max_chars=100_000)

    texts = _passage_texts(result)
    assert len(texts) > 3
    assert all(len(text) <= PASSAGE_MAX for text in texts)
    assert all(text.endswith(".") for text in texts)
    assert " ".join(text.removeprefix("Long\n\n") for text in texts) == " ".join(sentences)
    _assert_tiles(result)


def test_code_is_never_split_and_short_fragments_merge_up_to_the_target() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(300))
    items = "".join(f"<li>item {i} of the list</li>" for i in range(200))
    html = f"<main><h1>Code</h1><pre>{code}</pre><h2>List</h2><ul>{items}</ul></main>".encode()

    result = extract(html, "text/html", max_chars=100_000)

    texts = _passage_texts(result)
    assert code in texts
    listed = [
        text for span, text in zip(result.passages, texts, strict=True) if span.section == "List"
    ]
    assert len(listed) > 2
    assert all(len(text) <= PASSAGE_TARGET for text in listed)
    assert all(len(text) >= PASSAGE_MIN for text in listed[:-1])
    _assert_tiles(result)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.text(alphabet=" .!?\nabc#XY", max_size=2_500), max_size=12))
def test_plain_text_passages_tile_the_text_and_stay_under_the_cap(paragraphs: list[str]) -> None:
    body = "\n\n".join(paragraphs).encode()

    result = extract(body, "text/markdown", max_chars=100_000)

    _assert_tiles(result)
    assert all(span.end - span.start <= PASSAGE_MAX for span in result.passages)
