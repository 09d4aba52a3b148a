"""Extraction rules: what the snapshot keeps, its passage offsets, and verbatim quote lookup."""

from __future__ import annotations

import pytest

from activities.extract import (
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
    assert _passage_texts(result) == [
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
    assert result.truncated is False


def test_html_headings_become_sections_of_the_following_paragraphs() -> None:
    result = extract(ARTICLE, "text/html", max_chars=10_000)

    sections = [span.section for span in result.passages]
    assert sections[:2] == ["Hybrid caching", "Hybrid caching"]
    assert set(sections[2:]) == {"Invalidation"}


def test_passages_are_exact_offsets_joined_by_blank_lines() -> None:
    result = extract(ARTICLE, "text/html", max_chars=10_000)

    assert "\n\n".join(_passage_texts(result)) == result.text
    previous_end = -2
    for span in result.passages:
        assert span.start == previous_end + 2
        assert result.text[span.start : span.end].strip() == result.text[span.start : span.end]
        previous_end = span.end
    assert previous_end == len(result.text)


def test_html_without_title_uses_first_h1_and_body_without_main() -> None:
    html = b"<html><body><div><h1>Only heading</h1>Loose <em>text</em> here</div></body></html>"

    result = extract(html, "application/xhtml+xml", max_chars=1_000)

    assert result.title == "Only heading"
    assert _passage_texts(result) == ["Only heading", "Loose text here"]


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
        "Guide",
        "Intro line one\nline two",
        "Details",
        "First paragraph.",
        "```\n# a comment, not a heading\n\ncode\n```",
    ]
    assert [span.section for span in result.passages] == [
        "Guide",
        "Guide",
        "Details",
        "Details",
        "Details",
    ]


def test_plain_text_has_no_headings() -> None:
    result = extract(b"# not a heading\n\nsecond\r\nparagraph\n", "text/plain", max_chars=100)

    assert _passage_texts(result) == ["# not a heading", "second\nparagraph"]
    assert {span.section for span in result.passages} == {""}
    assert result.title == "# not a heading"


def test_truncation_cuts_at_a_passage_boundary() -> None:
    body = b"aaaa\n\nbbbb\n\ncccc"

    whole = extract(body, "text/plain", max_chars=16)
    cut = extract(body, "text/plain", max_chars=15)

    assert whole.text == "aaaa\n\nbbbb\n\ncccc" and whole.truncated is False
    assert cut.text == "aaaa\n\nbbbb" and cut.truncated is True
    assert _passage_texts(cut) == ["aaaa", "bbbb"]


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
