"""Ledger SQL for evidence: the rows a quote is proven from, and the evidence rows themselves.

No rules here: `activities.evidence` proves a quote against these rows and checks it before it
asks `EvidenceRows.insert` to store it (one statement), all on the one connection
`Ledger.writing_evidence` lends.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.ledger import chain
from activities.ledger.base import Connection, Row, StoredAt, execute, fetch_all, fetch_one
from workflows.models import Evidence

_SELECT_EVIDENCE = """
SELECT evidence_id, question_id, source_id, claim, stance, quote, passage_id,
       start_offset, end_offset, sentence, section, concerns
FROM research.evidence
WHERE run_id = %s AND execution_id = %s AND evidence_id = %s
"""

_SELECT_RUN_EVIDENCE = """
SELECT evidence_id, question_id, source_id, claim, stance, quote, passage_id,
       start_offset, end_offset, sentence, section, concerns
FROM research.evidence
WHERE run_id = %s AND execution_id = %s
ORDER BY length(evidence_id), evidence_id
"""

_SELECT_SNAPSHOT = """
SELECT status, error, snapshot,
       (SELECT count(*) FROM research.passages p
        WHERE p.run_id = s.run_id AND p.execution_id = s.execution_id
          AND p.source_id = s.source_id) AS passage_count
FROM research.sources s
WHERE run_id = %s AND execution_id = %s AND source_id = %s
"""

# What a passage sits under: its section heading and the passage just before it.
_CONTEXT = """
section || ' ' || coalesce((
    SELECT before.text FROM research.passages before
    WHERE before.run_id = p.run_id AND before.execution_id = p.execution_id
      AND before.source_id = p.source_id
      AND before.passage_no = p.passage_no - 1), '') AS context
"""

_SELECT_PASSAGE = (
    "SELECT passage_id, start_offset, end_offset, text, section, "
    + _CONTEXT
    + """
FROM research.passages p
WHERE run_id = %s AND execution_id = %s AND source_id = %s AND passage_id = %s
"""
)

# The passage a quote starts in (the first one ending after its start offset).
_SELECT_PASSAGE_AT = (
    "SELECT passage_id, start_offset, end_offset, text, section, "
    + _CONTEXT
    + """
FROM research.passages p
WHERE run_id = %s AND execution_id = %s AND source_id = %s AND end_offset > %s
ORDER BY passage_no
LIMIT 1
"""
)

_INSERT_EVIDENCE = """
INSERT INTO research.evidence (
    run_id, execution_id, step, evidence_id, question_id, source_id, claim, stance, quote,
    passage_id, start_offset, end_offset, chain, sentence, section, concerns
) VALUES (
    %(run_id)s, %(execution_id)s, %(step)s, %(evidence_id)s, %(question_id)s, %(source_id)s,
    %(claim)s, %(stance)s, %(quote)s, %(passage_id)s, %(start_offset)s, %(end_offset)s,
    %(chain)s, %(sentence)s, %(section)s, %(concerns)s
) ON CONFLICT DO NOTHING
"""


# The chain of the evidence before this one, in evidence-number order (per run and execution).
_SELECT_EVIDENCE_CHAIN = """
SELECT chain FROM research.evidence
WHERE run_id = %s AND execution_id = %s
  AND (length(evidence_id), evidence_id) < (length(%s), %s)
ORDER BY length(evidence_id) DESC, evidence_id DESC
LIMIT 1
"""


_NEXT_STEP = """
SELECT coalesce(max(step), 0) + 1 AS step FROM research.steps
WHERE run_id = %s AND execution_id = %s
"""


@dataclass(frozen=True)
class QuotableSource:
    """What a quote is proven from: the source's fetch status and its snapshot."""

    status: str
    error: str | None
    snapshot: str | None
    passage_count: int


@dataclass(frozen=True)
class StoredPassage:
    """A stored passage and the text it sits under (its section heading, the passage before)."""

    passage_id: str
    start: int
    end: int
    text: str
    context: str
    section: str = ""  # its section heading alone


class EvidenceRows:
    """The evidence of one run execution, read and written on one connection."""

    def __init__(self, conn: Connection, run_id: str, execution_id: str) -> None:
        self._conn = conn
        self._run = (run_id, execution_id)

    async def recorded(self, evidence_id: str) -> Evidence | None:
        """The evidence already stored under `evidence_id` (a retried write), or None."""
        row = await fetch_one(self._conn, _SELECT_EVIDENCE, (*self._run, evidence_id))
        return None if row is None else _evidence(row)

    async def source(self, source_id: str) -> QuotableSource | None:
        row = await fetch_one(self._conn, _SELECT_SNAPSHOT, (*self._run, source_id))
        if row is None:
            return None
        return QuotableSource(row["status"], row["error"], row["snapshot"], row["passage_count"])

    async def passage(self, source_id: str, wanted: str) -> StoredPassage | None:
        row = await fetch_one(self._conn, _SELECT_PASSAGE, (*self._run, source_id, wanted))
        return None if row is None else _passage(row)

    async def passage_at(self, source_id: str, offset: int) -> StoredPassage | None:
        """The passage holding the character at `offset` (the first one ending after it)."""
        row = await fetch_one(self._conn, _SELECT_PASSAGE_AT, (*self._run, source_id, offset))
        return None if row is None else _passage(row)

    async def insert(self, evidence: Evidence, step: int) -> None:
        """Store the evidence, linked into the run's evidence chain."""
        # Runs started before inputs carried the step (0): the step recording it is the next one.
        recorded_at = step or (await fetch_one(self._conn, _NEXT_STEP, self._run) or {}).get("step")
        at = StoredAt(*self._run, recorded_at)
        params = _evidence_params(at, evidence)
        before = await fetch_one(
            self._conn, _SELECT_EVIDENCE_CHAIN, (*self._run, evidence.id, evidence.id)
        )
        params["chain"] = chain.evidence_link((before or {}).get("chain") or "", params)
        await execute(self._conn, _INSERT_EVIDENCE, params)


def _passage(row: Row) -> StoredPassage:
    return StoredPassage(
        row["passage_id"],
        row["start_offset"],
        row["end_offset"],
        row["text"],
        row["context"],
        row["section"] or "",
    )


async def load_evidence(conn: Connection, run_id: str, execution_id: str) -> list[Evidence]:
    rows = await fetch_all(conn, _SELECT_RUN_EVIDENCE, (run_id, execution_id))
    return [_evidence(row) for row in rows]


# Each piece of evidence the run's report cites once, with the page it was read from.
_SELECT_CITED = """
SELECT DISTINCT evidence_id, question_id, coalesce(final_url, url) AS url, content_hash, quote
FROM research.cited_evidence WHERE run_id = %s ORDER BY evidence_id
"""


@dataclass(frozen=True)
class CitedEvidence:
    question_id: str
    url: str  # where the page was read from (after redirects)
    content_hash: str
    quote: str


async def load_cited(conn: Connection, run_id: str) -> list[CitedEvidence]:
    rows = await fetch_all(conn, _SELECT_CITED, (run_id,))
    return [
        CitedEvidence(row["question_id"], row["url"], row["content_hash"], row["quote"])
        for row in rows
    ]


def _evidence_params(at: StoredAt, evidence: Evidence) -> dict[str, object]:
    where = {"run_id": at.run_id, "execution_id": at.execution_id, "step": at.step}
    fields = evidence.model_dump(exclude={"id", "start", "end"})
    offsets = {"start_offset": evidence.start, "end_offset": evidence.end}
    return where | {"evidence_id": evidence.id, **fields, **offsets}


def _evidence(row: Row) -> Evidence:
    return Evidence(
        id=row["evidence_id"],
        question_id=row["question_id"],
        source_id=row["source_id"],
        claim=row["claim"],
        stance=row["stance"],
        quote=row["quote"],
        passage_id=row["passage_id"],
        start=row["start_offset"],
        end=row["end_offset"],
        sentence=row["sentence"],
        section=row["section"],
        concerns=list(row["concerns"]),
    )
