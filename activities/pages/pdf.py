"""PDF bodies to page text (pure): pypdf under tight resource limits, pages split into paragraphs.

`activities.pages.extract` turns the pages into a snapshot with passages; this module only reads
the PDF.
Paragraphs come from the layout: pypdf reports where each piece of text sits, and a line whose
baseline is further below the previous line than the page's usual line spacing starts a new one.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from pypdf import PageObject, PasswordType, PdfReader, apply_configuration
from pypdf.errors import DependencyError, LimitReachedError

MAX_PDF_PAGES = 200  # pages read from one PDF; the rest are left out and the snapshot is truncated
MAX_PDF_STREAM_BYTES = 20_000_000  # decoded size of any one stream inside the PDF
# Page content (drawing operators) interpreted in all, counted per page even when pages share a
# stream: text extraction costs CPU per operator, text or not, and cannot be interrupted.
MAX_PDF_CONTENT_BYTES = 4_000_000
# A baseline gap this many times the page's usual line gap starts a new paragraph.
PARAGRAPH_GAP_RATIO = 1.15

_LIMITS: dict[str, Any] = {
    "maximum_declared_stream_length": MAX_PDF_STREAM_BYTES,
    "array_based_stream_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "zlib_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "lzw_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "run_length_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "brotli_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "jbig2_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "stream_decoding_work_maximum_length": 5 * MAX_PDF_STREAM_BYTES,
    "jbig2dec_binary": None,  # never start an external program for a fetched file
}
_CORRUPT = "the PDF is damaged or not a PDF, so its text cannot be read"
_ENCRYPTED = "the PDF is encrypted and cannot be opened without its password"
_TOO_COMPLEX = "the PDF passes a safety limit on its size or structure, so it was not read"


@dataclass(frozen=True)
class PdfText:
    title: str  # the document information /Title, "" when there is none
    pages: list[list[str]]  # the paragraphs of each page read, in order; lines joined by "\n"
    complete: bool  # False when pages were left unread (MAX_PDF_PAGES or max_chars reached)


def read_pdf(
    body: bytes, *, max_chars: int, max_content_bytes: int = MAX_PDF_CONTENT_BYTES
) -> PdfText:
    """The text of a PDF, page by page, stopping after MAX_PDF_PAGES pages, once the paragraphs
    read pass `max_chars`, or before the page content interpreted would pass `max_content_bytes`.
    ValueError, in one sentence, for a PDF that cannot be read."""
    with apply_configuration(**_LIMITS):
        try:
            return _read(body, max_chars, max_content_bytes)
        except _Locked:
            raise ValueError(_ENCRYPTED) from None
        except MemoryError:
            raise
        except LimitReachedError as error:
            raise ValueError(_TOO_COMPLEX) from error
        except Exception as error:  # pypdf raises many kinds of error on malformed files
            raise ValueError(_CORRUPT) from error


class _Locked(Exception):
    """The PDF is encrypted with a password we do not have."""


def _read(body: bytes, max_chars: int, max_content_bytes: int) -> PdfText:
    reader = PdfReader(io.BytesIO(body), strict=False)
    if reader.is_encrypted and not _unlocked(reader):
        raise _Locked
    metadata = reader.metadata
    title = (metadata.title if metadata is not None else None) or ""
    pages: list[list[str]] = []
    read_chars = content_bytes = 0
    page_count = len(reader.pages)
    for index in range(min(page_count, MAX_PDF_PAGES)):
        if read_chars > max_chars:
            break
        page = reader.pages[index]
        content_bytes += _content_size(page)
        if content_bytes > max_content_bytes:
            break
        paragraphs = _page_paragraphs(page)
        pages.append(paragraphs)
        read_chars += sum(len(paragraph) + 2 for paragraph in paragraphs)
    return PdfText(title=str(title), pages=pages, complete=len(pages) == page_count)


def _content_size(page: PageObject) -> int:
    contents = page.get_contents()
    return len(contents.get_data()) if contents is not None else 0


def _unlocked(reader: PdfReader) -> bool:
    """Open a PDF encrypted with an empty user password (an owner password only restricts use)."""
    try:
        return reader.decrypt("") != PasswordType.NOT_DECRYPTED
    except DependencyError:  # a cipher the installed crypto library does not provide
        return False


# ---------------------------------------------------------------- paragraphs from the layout


def _page_paragraphs(page: PageObject) -> list[str]:
    fragments: list[tuple[str, float | None]] = []

    def visit(text: Any, cm: Any, tm: Any, font: Any, size: Any) -> None:
        fragments.append((str(text), _baseline(cm, tm)))

    text = page.extract_text(visitor_text=visit)
    lines = text.split("\n")
    if "".join(fragment for fragment, _ in fragments) == text:
        baselines = _line_baselines(fragments, len(lines))
    else:  # positions that cannot be matched to the text: paragraphs only at blank lines
        baselines = [None] * len(lines)
    return _paragraphs(lines, baselines)


def _baseline(cm: Any, tm: Any) -> float | None:
    """The vertical position of text drawn with these matrices (text matrix times the CTM)."""
    try:
        return float(tm[4]) * float(cm[1]) + float(tm[5]) * float(cm[3]) + float(cm[5])
    except (TypeError, ValueError, IndexError):
        return None


def _line_baselines(fragments: list[tuple[str, float | None]], count: int) -> list[float | None]:
    """For each output line, the baseline of its first visible fragment."""
    baselines: list[float | None] = [None] * count
    line = 0
    for text, baseline in fragments:
        for offset, segment in enumerate(text.split("\n")):
            if offset:
                line += 1
            if segment.strip() and line < count and baselines[line] is None:
                baselines[line] = baseline
    return baselines


def _paragraphs(lines: list[str], baselines: Sequence[float | None]) -> list[str]:
    usual_gap = _usual_line_gap(baselines)
    paragraphs: list[str] = []
    current: list[str] = []
    previous: float | None = None
    for line, baseline in zip(lines, baselines, strict=True):
        stripped = line.strip()
        if current and (not stripped or _starts_paragraph(previous, baseline, usual_gap)):
            paragraphs.append("\n".join(current))
            current = []
        if stripped:
            current.append(stripped)
            previous = baseline
    if current:
        paragraphs.append("\n".join(current))
    return paragraphs


def _usual_line_gap(baselines: Sequence[float | None]) -> float | None:
    gaps = [
        above - below
        for above, below in pairwise(baselines)
        if above is not None and below is not None and above > below
    ]
    # The lower quartile, not the median: on a page of headings and short paragraphs the wider
    # gaps can be the majority, while ordinary line spacing is still the smallest regular gap.
    return sorted(gaps)[len(gaps) // 4] if gaps else None


def _starts_paragraph(previous: float | None, baseline: float | None, usual: float | None) -> bool:
    """A wider gap than usual, or a jump back up the page by more than a line (a new column)."""
    if previous is None or baseline is None or usual is None:
        return False
    gap = previous - baseline
    return gap > usual * PARAGRAPH_GAP_RATIO or gap < -usual
