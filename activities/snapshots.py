"""A page the fetcher read, as the ledger stores it: where the fetcher's types meet the ledger's.

The ledger imports nothing of the fetcher; `read_page` hands it this plain row instead.
"""

from __future__ import annotations

from activities.ledger import PassageRow, Snapshot
from activities.pages.extract import Extracted, content_hash
from activities.pages.page import FetchedPage
from workflows.families import sketch, words


def snapshot(page: FetchedPage, extracted: Extracted) -> Snapshot:
    """The row of a fetched page: its addresses and status, its text, hash, sketch and passages."""
    return Snapshot(
        url=page.url,
        final_url=page.final_url,
        http_status=page.status,
        content_type=page.content_type,
        title=extracted.title,
        text=extracted.text,
        content_hash=content_hash(extracted.text),
        truncated=extracted.truncated,
        passages=[PassageRow(span.start, span.end, span.section) for span in extracted.passages],
        sketch=sketch(words(extracted.text)),
    )
