"""Ledger SQL for the local corpus: documents indexed with PostgreSQL full-text search."""

from __future__ import annotations

from activities.ledger_base import Connection, execute, fetch_all
from workflows.models import SearchHit

# Re-indexing refreshes a changed document and leaves an unchanged one (and its tsvector) alone.
_UPSERT_DOCUMENT = """
INSERT INTO research.corpus_documents AS d (url, host, title, body)
VALUES (%s, %s, %s, %s)
ON CONFLICT (url) DO UPDATE
SET host = EXCLUDED.host, title = EXCLUDED.title, body = EXCLUDED.body, indexed_at = now()
WHERE (d.host, d.title, d.body) IS DISTINCT FROM (EXCLUDED.host, EXCLUDED.title, EXCLUDED.body)
"""

# OR over the query's lexemes, so a natural-language question matches documents holding any of
# its words; ts_rank_cd puts those holding more of them, closer together, first. `*.x` rules match
# subdomains of x on a dot boundary. The headline is computed only for the rows returned.
_SEARCH = """
WITH q AS (
    SELECT replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ')::tsquery AS query
), ranked AS (
    SELECT d.url, d.host, d.title, d.body, q.query, ts_rank_cd(d.tsv, q.query) AS rank
    FROM research.corpus_documents d CROSS JOIN q
    WHERE numnode(q.query) > 0
      AND d.tsv @@ q.query
      AND (d.host = ANY(%(exact)s::text[])
           OR EXISTS (SELECT 1 FROM unnest(%(suffixes)s::text[]) AS rule (suffix)
                      WHERE right(d.host, length(rule.suffix) + 1) = '.' || rule.suffix))
    ORDER BY rank DESC, d.url
    LIMIT %(limit)s
)
SELECT url, host, title,
       ts_headline('english', body, query,
                   'MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", '
                   'StartSel="", StopSel=""') AS snippet
FROM ranked
ORDER BY rank DESC, url
"""


async def upsert_document(conn: Connection, url: str, host: str, title: str, body: str) -> None:
    await execute(conn, _UPSERT_DOCUMENT, (url, host, title, body))


async def search_documents(
    conn: Connection, query: str, allowed_hosts: list[str], limit: int
) -> list[SearchHit]:
    if not query.strip() or not allowed_hosts or limit < 1:
        return []
    params = {
        "query": query,
        "exact": [rule for rule in allowed_hosts if not rule.startswith("*.")],
        "suffixes": [rule[2:] for rule in allowed_hosts if rule.startswith("*.")],
        "limit": limit,
    }
    rows = await fetch_all(conn, _SEARCH, params)
    return [
        SearchHit(
            url=row["url"], title=row["title"], snippet=_one_line(row["snippet"]), host=row["host"]
        )
        for row in rows
    ]


def _one_line(text: str) -> str:
    return " ".join(text.split())
