"""PDF snapshots: page text as passages, titles, the caps, and the PDFs that must be refused."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from activities.pages.corpus_transport import CorpusTransport
from activities.pages.extract import Extracted, extract
from activities.pages.pdf import MAX_PDF_PAGES, MAX_PDF_STREAM_BYTES, read_pdf
from activities.search import read_corpus
from tests.fakes.pdf import Flate, build_pdf, encrypted_pdf, pdf_from_content_streams, scanned_pdf

GUIDE_PAGES = [
    [
        ["Hybrid caching guide"],
        ["Caches keep hot data close to", "the reader, far from the store."],
        ["Write-through keeps the cache (and the store) consistent."],
    ],
    [["Invalidation", "happens on every write."], ["Stale entries are never served."]],
]
GUIDE = build_pdf(GUIDE_PAGES, title="Cache  invalidation\nguide")


def _passage_texts(result: Extracted) -> list[str]:
    return [result.text[span.start : span.end] for span in result.passages]


def _pdf(body: bytes, max_chars: int = 10_000) -> Extracted:
    return extract(body, "application/pdf", max_chars=max_chars)


PARAGRAPHS = [
    "Hybrid caching guide",
    "Caches keep hot data close to\nthe reader, far from the store.",
    "Write-through keeps the cache (and the store) consistent.",
    "Invalidation\nhappens on every write.",
    "Stale entries are never served.",
]


def test_pdf_paragraphs_of_a_page_become_its_passage_with_the_page_as_section() -> None:
    result = _pdf(GUIDE)

    assert result.text == "\n\n".join(PARAGRAPHS)
    assert _passage_texts(result) == ["\n\n".join(PARAGRAPHS[:3]), "\n\n".join(PARAGRAPHS[3:])]
    assert [span.section for span in result.passages] == ["Page 1", "Page 2"]
    assert result.truncated is False


def test_pdf_passages_are_exact_offsets_joined_by_blank_lines() -> None:
    result = _pdf(GUIDE)

    assert "\n\n".join(_passage_texts(result)) == result.text
    assert [span.start for span in result.passages[1:]] == [
        span.end + 2 for span in result.passages[:-1]
    ]


def test_pdf_title_comes_from_the_metadata_else_the_first_line() -> None:
    untitled = build_pdf([[["First line of the text", "second line"]]])
    blank_title = build_pdf([[["Body text"]]], title="   ")

    assert _pdf(GUIDE).title == "Cache invalidation guide"
    assert _pdf(untitled).title == "First line of the text"
    assert _pdf(blank_title).title == "Body text"


def test_pdf_snapshot_is_cut_at_a_passage_boundary_and_marked_truncated() -> None:
    whole = _pdf(GUIDE)
    budget = whole.passages[0].end  # the first page exactly

    cut = _pdf(GUIDE, max_chars=budget)

    assert cut.text == whole.text[:budget]
    assert cut.truncated is True
    assert {span.section for span in cut.passages} == {"Page 1"}


def _pdf_with_bomb_on_page_two() -> bytes:
    """Page 2's content stream inflates past MAX_PDF_STREAM_BYTES, so drawing it must be refused."""
    first = b"BT /F1 12 Tf 72 720 Td (" + b"word " * 200 + b") Tj ET"
    return pdf_from_content_streams([first, Flate(b" " * (MAX_PDF_STREAM_BYTES + 1))])


def test_a_pdf_stream_that_inflates_past_the_limit_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^the PDF passes a safety limit on its size or structure"
    ):
        _pdf(_pdf_with_bomb_on_page_two(), max_chars=100_000)


def test_pages_after_max_chars_are_not_read() -> None:
    result = _pdf(_pdf_with_bomb_on_page_two(), max_chars=500)  # page 1 alone passes 500

    assert result.truncated is True
    assert {span.section for span in result.passages} == {"Page 1"}


def test_at_most_max_pdf_pages_are_read() -> None:
    pages = [[[f"Text of page {number}."]] for number in range(1, MAX_PDF_PAGES + 3)]

    result = _pdf(build_pdf(pages), max_chars=1_000_000)

    assert result.truncated is True
    assert _passage_texts(result)[-1] == f"Text of page {MAX_PDF_PAGES}."
    assert result.passages[-1].section == f"Page {MAX_PDF_PAGES}"


def test_a_pdf_locked_by_a_user_password_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^the PDF is encrypted and cannot be opened"):
        _pdf(encrypted_pdf(GUIDE, user_password="secret"))


def test_a_pdf_with_only_an_owner_password_is_read() -> None:
    result = _pdf(encrypted_pdf(GUIDE, user_password=""))

    assert result.title == "Cache invalidation guide"
    assert _passage_texts(result)[0].startswith("Hybrid caching guide\n\nCaches keep")


def test_a_pdf_without_text_is_refused_as_probably_scanned() -> None:
    with pytest.raises(ValueError, match=r"^the PDF has no extractable text"):
        _pdf(scanned_pdf())


@pytest.mark.parametrize(
    "body",
    [b"", b"%PDF-1.7", b"<html>not a pdf</html>", GUIDE[: len(GUIDE) // 2]],
    ids=["empty", "header only", "html", "cut in half"],
)
def test_a_damaged_pdf_is_refused_in_one_sentence(body: bytes) -> None:
    with pytest.raises(ValueError) as refusal:
        _pdf(body)

    assert str(refusal.value) == "the PDF is damaged or not a PDF, so its text cannot be read"


def test_a_valid_pdf_reads_without_pypdf_warnings(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="pypdf"):
        _pdf(GUIDE)
        _pdf(encrypted_pdf(GUIDE, user_password=""))

    assert [record.getMessage() for record in caplog.records] == []


# ---------------------------------------------------------------- PDFs in the local corpus


@pytest.fixture
def corpus_with_a_pdf(tmp_path: Path) -> Path:
    host_dir = tmp_path / "docs.example"
    (host_dir / "papers").mkdir(parents=True)
    (host_dir / "papers" / "guide.pdf").write_bytes(GUIDE)
    (host_dir / "papers" / "scan.pdf").write_bytes(scanned_pdf())
    return tmp_path


def test_corpus_indexing_reads_pdfs_and_skips_unreadable_ones(corpus_with_a_pdf: Path) -> None:
    documents = read_corpus(corpus_with_a_pdf, max_chars=10_000)

    assert [(doc.url, doc.title) for doc in documents] == [
        ("https://docs.example/papers/guide.pdf", "Cache invalidation guide")
    ]
    assert "Stale entries are never served." in documents[0].body


async def test_the_corpus_transport_serves_a_pdf_that_extracts(corpus_with_a_pdf: Path) -> None:
    async with httpx.AsyncClient(transport=CorpusTransport(corpus_with_a_pdf)) as client:
        response = await client.get("https://docs.example/papers/guide.pdf")

    assert response.headers["Content-Type"] == "application/pdf"
    assert _pdf(response.content).text == _pdf(GUIDE).text


def test_page_content_past_the_budget_is_not_interpreted() -> None:
    """Drawing operators cost CPU whether or not they draw text: pages past the content budget are
    left unread, counted per page even when pages share one stream."""
    text_page = b"BT /F1 12 Tf 72 700 Td (Read before the budget ran out.) Tj ET"
    filler = b"BT /F1 12 Tf 72 700 Td " + b"( ) Tj " * 3_000 + b"ET"  # ~21 kB, no text
    pdf = pdf_from_content_streams([text_page, filler, filler, text_page])

    read = read_pdf(pdf, max_chars=10_000, max_content_bytes=30_000)

    assert read.complete is False
    assert [paragraphs for paragraphs in read.pages if paragraphs] == [
        ["Read before the budget ran out."]
    ]
    assert len(read.pages) == 2, "the third page would pass the budget"
