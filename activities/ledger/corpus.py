"""Ledger SQL for the local corpus: documents indexed with PostgreSQL full-text search."""

from __future__ import annotations

from activities.ledger.base import Connection, execute, fetch_all
from workflows.models import SearchHit

# Re-indexing refreshes a changed document and leaves an unchanged one (and its tsvector) alone.
_UPSERT_DOCUMENT = """
INSERT INTO research.corpus_documents AS d (url, host, title, body, prose, cluster, headings)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (url) DO UPDATE
SET host = EXCLUDED.host, title = EXCLUDED.title, body = EXCLUDED.body, prose = EXCLUDED.prose,
    cluster = EXCLUDED.cluster, headings = EXCLUDED.headings, indexed_at = now()
WHERE (d.host, d.title, d.body, d.prose, d.cluster, d.headings)
      IS DISTINCT FROM (EXCLUDED.host, EXCLUDED.title, EXCLUDED.body, EXCLUDED.prose,
                        EXCLUDED.cluster, EXCLUDED.headings)
"""

# Terms: the query's lexemes (identifiers whole and split into their parts, as the index has them;
# one with underscores also as one lexeme, `mostunderscorecommon`: migration 014),
# each weighted by its inverse document frequency (BM25's) on the indexed hosts the brief may
# read (per host counts summed: migration 020; other hosts indexed beside them weigh nothing,
# so a word is as rare as the documentation searched has it). Candidates hold at least one term
# that is not in most documents (all terms, when every one is common); the GIN index finds them.
# Rank: the sum over terms of idf x ts_rank (frequency, weighted A for the page's name and
# title, D for its body, normalised by document length), each candidate's vector read once. The
# snippet is a headline of a short window around the first place the rarest term appears as a
# word, in any case (`RLock` for the lexeme "rlock", not "lock" inside "block"; terms as rare in
# their list's order): for the returned rows only, in the stored lower-case body, the rarer terms
# first and no further once one is found. `python -m bench.corpus_search` measures it.
_SEARCH = """
WITH matched AS (
    -- the indexed hosts the brief may read, each with its documents (as stored: a host whose
    -- folder was never remembered counts too)
    SELECT d.host, count(*)::float8 AS docs FROM research.corpus_documents d
    WHERE d.host = ANY(%(exact)s::text[])
       OR EXISTS (SELECT 1 FROM unnest(%(suffixes)s::text[]) AS rule (suffix)
                  WHERE right(d.host, length(rule.suffix) + 1) = '.' || rule.suffix)
    GROUP BY d.host
), n AS (
    SELECT greatest(coalesce(sum(docs), 0), 1)::float8 AS docs FROM matched
), query_terms AS (
    SELECT DISTINCT t.lexeme
    FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s) || to_tsvector('english',
             regexp_replace(%(query)s, '([A-Za-z0-9])[._]([A-Za-z])', '\\1 \\2', 'g'))
             || to_tsvector('simple', regexp_replace(regexp_replace(%(query)s,
                 '(?<![A-Za-z0-9_])[A-Za-z0-9]+(?![A-Za-z0-9_])', ' ', 'g'),
                 '([A-Za-z0-9])_(?=[A-Za-z0-9])', '\\1underscore', 'g'))))
         AS t (lexeme)
), counted AS (
    -- documents holding each term on those hosts: their counts summed
    SELECT q.lexeme, coalesce((SELECT sum(s.ndoc) FROM research.corpus_terms s
                               WHERE s.lexeme = q.lexeme
                                 AND s.host IN (SELECT host FROM matched)), 0) AS ndoc
    FROM query_terms q
), distinct_terms AS (
    SELECT c.lexeme, c.ndoc, n.docs,
           ln(1 + (n.docs - c.ndoc + 0.5) / (c.ndoc + 0.5)) AS idf
    FROM counted c CROSS JOIN n
), terms AS (
    -- each term's tsquery parsed once (not once a document), and its place in this list
    SELECT u.*, quote_literal(u.lexeme)::tsquery AS tq, row_number() OVER () AS nth
    FROM distinct_terms u
), picked AS (
    SELECT lexeme, idf, nth FROM terms
    WHERE ndoc <= greatest(docs * %(share)s, %(floor)s)
       OR NOT EXISTS (SELECT 1 FROM terms WHERE ndoc <= greatest(docs * %(share)s, %(floor)s))
), q AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query FROM picked
), pool AS (
    SELECT d.url, d.host, d.title, coalesce(d.cluster, d.url) AS cluster,
           (SELECT sum(t.idf * ts_rank(%(weights)s::float4[], v.tsv, t.tq, 1))
            FROM terms t) * greatest(0.25, least(1.0, d.prose / %(prose)s))
             * greatest(0.25, least(1.0, d.body_chars::float8 / %(body)s)) AS rank
    FROM research.corpus_documents d
    -- the vector read once for all its terms (each ts_rank would fetch it from TOAST again)
    CROSS JOIN LATERAL (SELECT (ARRAY[d.tsv])[1] AS tsv OFFSET 0) v
    -- a parameter, not a join: the GIN index can find the candidates (the host rule is written
    -- again, not read from `matched`: as a list of hosts the planner took the host index)
    WHERE d.tsv @@ (SELECT query FROM q)
      AND (d.host = ANY(%(exact)s::text[])
           OR EXISTS (SELECT 1 FROM unnest(%(suffixes)s::text[]) AS rule (suffix)
                      WHERE right(d.host, length(rule.suffix) + 1) = '.' || rule.suffix))
    ORDER BY rank DESC, d.url
    LIMIT %(pool)s
), ranked AS (
    -- each cluster once: its best-ranked member, the other members found listed under it
    SELECT c.url, c.host, c.title, c.rank, array_remove(c.members, c.url) AS also
    FROM (SELECT p.*, row_number() OVER cluster AS nth,
                 array_agg(p.url) OVER (cluster ROWS BETWEEN UNBOUNDED PRECEDING
                                                     AND UNBOUNDED FOLLOWING) AS members
          FROM pool p
          WINDOW cluster AS (PARTITION BY p.cluster ORDER BY p.rank DESC, p.url)) c
    WHERE c.nth = 1
    ORDER BY c.rank DESC, c.url
    LIMIT %(limit)s
)
SELECT r.url, r.host, r.title, r.also,
       ts_headline('english', regexp_replace(regexp_replace(
                       substr(b.body, greatest(1, w.at - 60), 700),
                       CASE WHEN w.at > 60 THEN '^\\S*\\s+' ELSE '^$' END, ''),
                       '\\s+\\S*$', ''), q.query,
                   'MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", '
                   'StartSel="", StopSel=""') AS snippet
FROM ranked r
JOIN research.corpus_documents d USING (url)
CROSS JOIN q
-- The stored lower-case copy to look in (migration 018), read once (not once for each term).
CROSS JOIN LATERAL (SELECT d.body, d.body_lower || '' AS low OFFSET 0) b
CROSS JOIN LATERAL (
    -- the terms rarest first (in their list's order when as rare), looked for until one is found
    SELECT coalesce((SELECT found.at
                     FROM (SELECT lexeme, idf FROM picked ORDER BY idf DESC, nth OFFSET 0) p
                     CROSS JOIN LATERAL (SELECT replace(p.lexeme, 'underscore', '_') AS term) t
                     CROSS JOIN LATERAL (SELECT strpos(b.low, t.term) AS at OFFSET 0) first
                     -- as a word: "lock" first inside "block" looks again, with a regex
                     CROSS JOIN LATERAL (
                         SELECT CASE WHEN first.at <= 1
                                       OR substr(b.low, first.at - 1, 1) !~ '[[:alnum:]_]'
                                     THEN first.at
                                     ELSE regexp_instr(b.low, '\\m' || regexp_replace(
                                         t.term, '([^[:alnum:]_])', '\\\\\\1', 'g'))
                                END AS at
                     ) found
                     WHERE found.at > 0
                     LIMIT 1), 1) AS at
    OFFSET 0
) w
ORDER BY r.rank DESC, r.url
"""

# Candidates ranked before near-duplicates collapse: this many times the results asked for, so
# a cluster filling the top still leaves `limit` distinct results.
POOL_FACTOR = 3
# A term in more than this share of the documents (and in more than COMMON_FLOOR of them) does
# not make a page a candidate: it still counts in the rank. Small corpora keep every term.
COMMON_SHARE = 0.5
# Pages whose words are less than this share stop words (indexes, tables of contents, link
# lists: about 0.1 against 0.3 for documentation prose) rank in proportion lower, to a quarter.
PROSE_SHARE = 0.3
COMMON_FLOOR = 100
# ts_rank's weights of labels D, C, B, A: a word of the page's name or title counts three body
# words (PostgreSQL's default, ten, let one generic title word outrank a page about the query);
# a word of a section heading, indexed once more with label B, counts as one of the title: a
# long reference page whose section is about the word (httpd's core.html, with its
# `LimitRequestBody Directive` among a hundred) is not outranked by a short page mentioning it.
LABEL_WEIGHTS = [0.1, 0.2, 0.3, 0.3]
# A page shorter than this (a chapter's landing page once its table of contents is dropped, a
# stub) ranks in proportion lower, to a quarter: an answer takes some text.
FULL_BODY_CHARS = 2000

# Per host (migration 020): the hosts just indexed are recounted, and a host with no document
# left keeps no counts.
_DELETE_TERMS = """
DELETE FROM research.corpus_terms s
WHERE s.host = ANY(%s)
   OR NOT EXISTS (SELECT 1 FROM research.corpus_documents d WHERE d.host = s.host)
"""
_COUNT_TERMS = """
INSERT INTO research.corpus_terms (host, lexeme, ndoc)
SELECT h.host, s.word, s.ndoc
FROM unnest(%s::text[]) AS h (host)
CROSS JOIN LATERAL ts_stat(format(
    'SELECT tsv FROM research.corpus_documents WHERE host = %%L', h.host)) s
"""


_REMEMBER_FOLDER = """
INSERT INTO research.corpus_hosts (host, folder, documents) VALUES (%s, %s, %s)
ON CONFLICT (host) DO UPDATE
SET folder = EXCLUDED.folder, documents = EXCLUDED.documents, indexed_at = now()
"""
# A host indexed again is replaced: its documents that the folder no longer holds go.
_DROP_STALE = "DELETE FROM research.corpus_documents WHERE host = %s AND NOT (url = ANY(%s))"
_FOLDERS = "SELECT host, folder FROM research.corpus_hosts ORDER BY host"


async def remember_folder(conn: Connection, host: str, folder: str, urls: list[str]) -> None:
    await execute(conn, _DROP_STALE, (host, urls))
    await execute(conn, _REMEMBER_FOLDER, (host, folder, len(urls)))


async def folders(conn: Connection) -> dict[str, str]:
    return {row["host"]: row["folder"] for row in await fetch_all(conn, _FOLDERS, ())}


async def upsert_document(
    conn: Connection,
    url: str,
    host: str,
    title: str,
    body: str,
    prose: float,
    cluster: str | None = None,
    headings: str = "",
) -> None:
    await execute(conn, _UPSERT_DOCUMENT, (url, host, title, body, prose, cluster, headings))


async def refresh_terms(conn: Connection, hosts: list[str]) -> None:
    """Recount each of `hosts`' documents holding each lexeme (call after indexing them)."""
    await execute(conn, _DELETE_TERMS, (hosts,))
    await execute(conn, _COUNT_TERMS, (hosts,))


async def search_documents(
    conn: Connection, query: str, allowed_hosts: list[str], limit: int
) -> list[SearchHit]:
    if not query.strip() or not allowed_hosts or limit < 1:
        return []
    rows = await fetch_all(conn, _SEARCH, search_params(query, allowed_hosts, limit))
    return [
        SearchHit(
            url=row["url"],
            title=row["title"],
            snippet=_one_line(row["snippet"]),
            host=row["host"],
            also=list(row["also"]),
        )
        for row in rows
    ]


def search_params(query: str, allowed_hosts: list[str], limit: int) -> dict[str, object]:
    """The parameters of the search SQL for a query on the allowed hosts."""
    return {
        "query": query,
        "exact": [rule for rule in allowed_hosts if not rule.startswith("*.")],
        "suffixes": [rule[2:] for rule in allowed_hosts if rule.startswith("*.")],
        "limit": limit,
        "pool": limit * POOL_FACTOR,
        "share": COMMON_SHARE,
        "prose": PROSE_SHARE,
        "weights": LABEL_WEIGHTS,
        "body": FULL_BODY_CHARS,
        "floor": COMMON_FLOOR,
    }


def _one_line(text: str) -> str:
    return " ".join(text.split())
