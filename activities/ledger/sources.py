"""Ledger SQL for sources: snapshots, their passages, and the windows the model reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from activities.ledger.base import Connection, Row, StoredAt, execute, fetch_all, fetch_one
from workflows.hosts import url_host
from workflows.models import Passage, SourceRef


@dataclass(frozen=True)
class StoredSource:
    """A stored source as the workflow may see it (never the body), plus its snapshot's size."""

    ref: SourceRef
    total_chars: int = 0
    truncated: bool = False


@dataclass(frozen=True)
class PassageRow:
    """One passage of a snapshot to store: `text[start:end]` of its snapshot, under `section`."""

    start: int
    end: int
    section: str  # nearest heading above, "" if none


@dataclass(frozen=True)
class Snapshot:
    """A page read as the ledger stores it: where it came from, its text and its passages."""

    url: str  # the URL asked for
    final_url: str  # after redirects
    http_status: int
    content_type: str
    title: str
    text: str  # the snapshot
    content_hash: str
    truncated: bool
    passages: Sequence[PassageRow]
    sketch: Sequence[int] = ()  # `workflows.families.sketch` of its text


def passage_id(source_id: str, number: int) -> str:
    return f"{source_id}.P{number}"


_INSERT_SOURCE = """
INSERT INTO research.sources (
    run_id, execution_id, step, source_id, url, final_url, host, title, content_type,
    http_status, content_hash, snapshot, truncated, status, sketch
) VALUES (
    %(run_id)s, %(execution_id)s, %(step)s, %(source_id)s, %(url)s, %(final_url)s, %(host)s,
    %(title)s, %(content_type)s, %(http_status)s, %(content_hash)s, %(snapshot)s,
    %(truncated)s, 'ok', %(sketch)s
) ON CONFLICT DO NOTHING
"""

_INSERT_PASSAGE = """
INSERT INTO research.passages (
    run_id, execution_id, source_id, passage_no, passage_id, start_offset, end_offset, section,
    text
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""

_INSERT_FAILED = """
INSERT INTO research.sources (run_id, execution_id, step, source_id, url, host, status, error)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""

_SOURCE_ROWS = """
SELECT s.source_id, s.url, s.final_url, s.host, s.title, s.content_hash, s.status, s.error,
       s.truncated, coalesce(length(s.snapshot), 0) AS total_chars, s.sketch,
       (SELECT count(*) FROM research.passages p
        WHERE p.run_id = s.run_id AND p.execution_id = s.execution_id
          AND p.source_id = s.source_id) AS passage_count
FROM research.sources s
"""

# The row for source_id, or else the row already holding this URL (a URL is stored once per run).
_SELECT_SOURCE = (
    _SOURCE_ROWS
    + """
WHERE s.run_id = %(run_id)s AND s.execution_id = %(execution_id)s
  AND (s.source_id = %(source_id)s OR s.url = %(url)s)
ORDER BY s.source_id = %(source_id)s DESC
LIMIT 1
"""
)

_SELECT_SOURCES = (
    _SOURCE_ROWS
    + """
WHERE s.run_id = %s AND s.execution_id = %s
ORDER BY length(s.source_id), s.source_id
"""
)

# Passages from the one containing `offset` on; with `find`, only those containing it (case
# aside) or, when no passage of the page holds it whole, each of its words ("match search" finds
# "match() versus search()"). One row more than the window is read: its start is the offset to
# continue from. Without `find` the page's other passages are not looked at.
_SELECT_WINDOW = """
SELECT passage_no, passage_id, start_offset, end_offset, text, section
FROM research.passages
WHERE run_id = %(run_id)s AND execution_id = %(execution_id)s AND source_id = %(source_id)s
  AND end_offset > %(offset)s
  AND (%(find)s::text IS NULL
       OR CASE WHEN EXISTS (SELECT 1 FROM research.passages whole
                            WHERE whole.run_id = %(run_id)s
                              AND whole.execution_id = %(execution_id)s
                              AND whole.source_id = %(source_id)s
                              AND strpos(lower(whole.text), lower(%(find)s::text)) > 0)
               THEN strpos(lower(text), lower(%(find)s::text)) > 0
               ELSE (SELECT bool_and(strpos(lower(text), word) > 0)
                     FROM unnest(%(words)s::text[]) word)
          END)
ORDER BY passage_no
LIMIT %(limit)s
"""


# The passages after some (`after`: passage numbers), each the first one after.
_SELECT_FOLLOWING = """
SELECT DISTINCT ON (mine.no) mine.no AS after, p.passage_no, p.passage_id, p.start_offset,
       p.end_offset, p.text, p.section
FROM unnest(%(after)s::int[]) AS mine(no)
JOIN research.passages p
  ON p.run_id = %(run_id)s AND p.execution_id = %(execution_id)s
 AND p.source_id = %(source_id)s AND p.passage_no > mine.no
ORDER BY mine.no, p.passage_no
"""
HEADING_CHARS = 120  # a last paragraph this short, with no sentence end, is a heading


async def insert_source(conn: Connection, at: StoredAt, source_id: str, page: Snapshot) -> None:
    """Insert the snapshot and its passages; a no-op when the source (or its URL) is stored."""
    params = _source_params(at.run_id, source_id, page)
    params |= {"execution_id": at.execution_id, "step": at.step}
    if not await execute(conn, _INSERT_SOURCE, params):
        return
    rows = [
        (
            at.run_id,
            at.execution_id,
            source_id,
            number,
            passage_id(source_id, number),
            span.start,
            span.end,
            span.section,
            page.text[span.start : span.end],
        )
        for number, span in enumerate(page.passages, start=1)
    ]
    async with conn.cursor() as cursor:
        await cursor.executemany(_INSERT_PASSAGE, rows)


def _source_params(run_id: str, source_id: str, page: Snapshot) -> dict[str, object]:
    return {
        "run_id": run_id,
        "source_id": source_id,
        "url": page.url,
        "final_url": page.final_url,
        "host": url_host(page.final_url) or url_host(page.url) or "",
        "title": page.title,
        "content_type": page.content_type,
        "http_status": page.http_status,
        "content_hash": page.content_hash,
        "snapshot": page.text,
        "truncated": page.truncated,
        "sketch": list(page.sketch),
    }


async def insert_failed_source(
    conn: Connection, at: StoredAt, source_id: str, url: str, status: str, error: str
) -> None:
    host = url_host(url) or ""
    params = (at.run_id, at.execution_id, at.step, source_id, url, host, status, error)
    await execute(conn, _INSERT_FAILED, params)


async def load_source(
    conn: Connection, run_id: str, execution_id: str, source_id: str, url: str | None = None
) -> StoredSource | None:
    params = {"run_id": run_id, "execution_id": execution_id, "source_id": source_id, "url": url}
    row = await fetch_one(conn, _SELECT_SOURCE, params)
    return None if row is None else _stored_source(row)


async def load_sources(conn: Connection, run_id: str, execution_id: str) -> list[SourceRef]:
    rows = await fetch_all(conn, _SELECT_SOURCES, (run_id, execution_id))
    return [_stored_source(row).ref for row in rows]


def _stored_source(row: Row) -> StoredSource:
    ref = source_ref_from(row, row["passage_count"])
    return StoredSource(ref=ref, total_chars=row["total_chars"], truncated=row["truncated"])


def source_ref_from(row: Mapping[str, Any], passage_count: int) -> SourceRef:
    """A `sources` row (or the same fields read elsewhere) as the workflow knows the source."""
    return SourceRef(
        id=row["source_id"],
        url=row["url"],
        final_url=row["final_url"],
        host=row["host"],
        title=row["title"],
        content_hash=row["content_hash"] or "",
        passage_count=passage_count,
        ok=row["status"] == "ok",
        error=row["error"],
        sketch=list(row.get("sketch") or []),
    )


class Window(NamedTuple):
    """A window of a source's passages: where the next one starts (None: the end), and with
    `find`, whether more passages holding it lie past the window (`more_matches`: `find` at
    `next_offset` shows them; otherwise `next_offset` is where reading goes on, and `find` there
    shows none). A window cut between a heading and the text under it starts the next at that
    text."""

    passages: list[Passage]
    next_offset: int | None
    more_matches: bool = False


async def load_window(
    conn: Connection,
    run_id: str,
    execution_id: str,
    source_id: str,
    offset: int,
    find: str | None,
    size: int,
    chars: int,
) -> Window:
    """Up to `size` passages from the one containing `offset`, while their text stays within
    `chars` (the first passage always shows), and where the next window starts."""
    params = {
        "run_id": run_id,
        "execution_id": execution_id,
        "source_id": source_id,
        "offset": max(offset, 0),
        "find": (find or "").strip() or None,
        "words": (find or "").lower().split(),
        "limit": max(size, 1) + 1,
    }
    rows = await fetch_all(conn, _SELECT_WINDOW, params)
    matches = {row["passage_no"] for row in rows}
    find_term = params["find"]
    if isinstance(find_term, str):  # a match on a heading shows the text under it too
        rows = await _with_text_under_headings(conn, params, rows, find_term)
    passages: list[Passage] = []
    shown = 0
    for row in rows[: max(size, 1)]:
        shown += len(row["text"])
        if passages and shown > chars:
            break
        passages.append(_passage(row))
    if len(rows) > len(passages):
        # with `find`, a further match (not only the text under a heading the window ends on)
        more = isinstance(find_term, str) and any(
            row["passage_no"] in matches for row in rows[len(passages) :]
        )
        return Window(passages, rows[len(passages)]["start_offset"], more)
    if isinstance(find_term, str) and passages:  # no more matches: where reading goes on
        last = rows[len(passages) - 1]["passage_no"]
        following = await fetch_all(conn, _SELECT_FOLLOWING, params | {"after": [last]})
        return Window(passages, following[0]["start_offset"] if following else None)
    return Window(passages, None)


async def _with_text_under_headings(
    conn: Connection, params: dict[str, Any], rows: list[Row], term: str
) -> list[Row]:
    """`rows` with, after each whose match is only in a heading at its end, the passage after
    it (once): the heading's text is there."""
    headed = [row["passage_no"] for row in rows if _ends_in_heading(row["text"], term)]
    if not headed:
        return rows
    following = await fetch_all(conn, _SELECT_FOLLOWING, params | {"after": headed})
    under = {row["after"]: row for row in following}
    result: list[Row] = []
    seen: set[int] = set()
    for row in rows:
        for item in (row, under.get(row["passage_no"])):
            if item is not None and item["passage_no"] not in seen:
                seen.add(item["passage_no"])
                result.append(item)
    return result


def _ends_in_heading(text: str, term: str) -> bool:
    """Whether `term` (or each of its words) is found in `text` only in its last paragraph, a
    short line with no sentence end: a heading whose section starts in the next passage."""
    paragraphs = [part.strip() for part in text.split("\n\n") if part.strip()]
    if not paragraphs:
        return False
    last, before = paragraphs[-1].lower(), "\n\n".join(paragraphs[:-1]).lower()
    words = term.lower().split() if term.lower() not in last else [term.lower()]
    in_last = all(word in last for word in words)
    heading = len(last) <= HEADING_CHARS and "\n" not in last and last[-1] not in ".!?:;,"
    return in_last and heading and not all(word in before for word in words)


def _passage(row: Row) -> Passage:
    return Passage(
        id=row["passage_id"],
        start=row["start_offset"],
        end=row["end_offset"],
        text=row["text"],
        section=row["section"],
    )
