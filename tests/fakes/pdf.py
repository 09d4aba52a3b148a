"""Small, valid PDF files built in the test: Helvetica text drawn with Tj, one page per list entry.

Each page is a list of paragraphs, each paragraph a list of lines. Lines sit 14 points apart and
paragraphs 28, the way a word processor lays out body text, so extraction sees real line breaks.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

from pypdf import PdfReader, PdfWriter

_LINE_GAP = 14
_PARAGRAPH_GAP = 28

Page = list[list[str]]  # paragraphs of lines


def build_pdf(pages: list[Page], *, title: str | None = None) -> bytes:
    """A PDF 1.4 file with a correct cross-reference table; `title` goes into /Info."""
    return pdf_from_content_streams([_content_stream(page) for page in pages], title=title)


def scanned_pdf(page_count: int = 2) -> bytes:
    """A PDF whose pages only paint a filled rectangle: what a scan without OCR looks like."""
    return pdf_from_content_streams([b"0.5 g 72 72 468 648 re f"] * page_count)


@dataclass(frozen=True)
class Flate:
    """A content stream stored compressed with /FlateDecode."""

    data: bytes


def pdf_from_content_streams(contents: list[bytes | Flate], *, title: str | None = None) -> bytes:
    """A PDF with one page per content stream, Helvetica available as /F1."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    first_page = 4  # 1 catalog, 2 page tree, 3 font, then a page and its content stream each
    kids = " ".join(f"{first_page + 2 * index} 0 R" for index in range(len(contents)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for index, content in enumerate(contents):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {first_page + 2 * index + 1} 0 R >>"
            .encode()
        )  # fmt: skip
        objects.append(_stream(content))
    info = None
    if title is not None:
        objects.append(b"<< /Title " + _pdf_string(title) + b" >>")
        info = len(objects)
    return _serialise(objects, info)


def encrypted_pdf(pdf: bytes, *, user_password: str, owner_password: str = "owner") -> bytes:
    """`pdf` encrypted by pypdf's own writer (AES-256)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _stream(content: bytes | Flate) -> bytes:
    if isinstance(content, Flate):
        compressor = zlib.compressobj(9)
        data = compressor.compress(content.data) + compressor.flush()
        header = b"<< /Length %d /Filter /FlateDecode >>" % len(data)
    else:
        data, header = content, b"<< /Length %d >>" % len(content)
    return header + b"\nstream\n" + data + b"\nendstream"


def _content_stream(page: Page) -> bytes:
    operations = [b"BT", b"/F1 12 Tf", b"72 720 Td"]
    for paragraph_index, paragraph in enumerate(page):
        for line_index, line in enumerate(paragraph):
            if line_index:
                operations.append(b"0 -%d Td" % _LINE_GAP)
            elif paragraph_index:
                operations.append(b"0 -%d Td" % _PARAGRAPH_GAP)
            operations.append(_pdf_string(line) + b" Tj")
    operations.append(b"ET")
    return b"\n".join(operations)


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1") + b")"


def _serialise(objects: list[bytes], info: int | None) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"<< /Size %d /Root 1 0 R" % (len(objects) + 1)
    trailer += b" /Info %d 0 R >>" % info if info is not None else b" >>"
    out += b"trailer\n" + trailer + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
