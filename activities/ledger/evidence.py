"""Ledger SQL for evidence: a quote is stored only once it is proven to be in the snapshot."""

from __future__ import annotations

from dataclasses import dataclass

from activities.ledger import chain
from activities.ledger.base import Connection, Row, StoredAt, execute, fetch_all, fetch_one
from activities.ledger.sources import passage_id
from activities.pages.extract import find_quote
from workflows.contracts import RecordEvidenceInput, RecordEvidenceResult
from workflows.models import Evidence
from workflows.substance import evidence_problem

_SELECT_EVIDENCE = """
SELECT evidence_id, question_id, source_id, claim, stance, quote, passage_id,
       start_offset, end_offset
FROM research.evidence
WHERE run_id = %s AND execution_id = %s AND evidence_id = %s
"""

_SELECT_RUN_EVIDENCE = """
SELECT evidence_id, question_id, source_id, claim, stance, quote, passage_id,
       start_offset, end_offset
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

# Text of its passage before a quote that counts as the quote's context (with the section
# heading and the passage just before).
QUOTE_LEAD_CHARS = 1_000

# What a passage sits under: its section heading and the passage just before it.
_CONTEXT = """
section || ' ' || coalesce((
    SELECT before.text FROM research.passages before
    WHERE before.run_id = p.run_id AND before.execution_id = p.execution_id
      AND before.source_id = p.source_id
      AND before.passage_no = p.passage_no - 1), '') AS context
"""

_SELECT_PASSAGE = (
    "SELECT passage_id, start_offset, end_offset, text, "
    + _CONTEXT
    + """
FROM research.passages p
WHERE run_id = %s AND execution_id = %s AND source_id = %s AND passage_id = %s
"""
)

# The passage a quote starts in (the first one ending after its start offset).
_SELECT_PASSAGE_AT = (
    "SELECT passage_id, start_offset, "
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
    passage_id, start_offset, end_offset, chain
) VALUES (
    %(run_id)s, %(execution_id)s, %(step)s, %(evidence_id)s, %(question_id)s, %(source_id)s,
    %(claim)s, %(stance)s, %(quote)s, %(passage_id)s, %(start_offset)s, %(end_offset)s,
    %(chain)s
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


class EvidenceRefused(Exception):
    """The quote or passage cannot be proven from the stored snapshot; the message says why."""


async def insert_evidence(
    conn: Connection, request: RecordEvidenceInput, execution_id: str
) -> RecordEvidenceResult:
    """Record one piece of evidence (call inside a transaction); a recorded ID returns its row."""
    key = (request.run_id, execution_id, request.evidence_id)
    stored = await fetch_one(conn, _SELECT_EVIDENCE, key)
    if stored is not None:
        return RecordEvidenceResult(evidence=_evidence(stored))
    try:
        evidence, context = await _proven(conn, request, execution_id)
        problem = evidence_problem(evidence.quote, context, evidence.claim, request.terms)
        if problem is not None:
            raise EvidenceRefused(problem)
    except EvidenceRefused as refused:
        return RecordEvidenceResult(error=str(refused))
    # Runs started before inputs carried the step (0): the step recording it is the next one.
    step = request.step or (await fetch_one(conn, _NEXT_STEP, key[:2]) or {}).get("step")
    at = StoredAt(request.run_id, execution_id, step)
    params = _evidence_params(at, evidence)
    before = await fetch_one(conn, _SELECT_EVIDENCE_CHAIN, (*key[:2], evidence.id, evidence.id))
    params["chain"] = chain.evidence_link((before or {}).get("chain") or "", params)
    await execute(conn, _INSERT_EVIDENCE, params)
    return RecordEvidenceResult(evidence=evidence)


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


async def _proven(
    conn: Connection, request: RecordEvidenceInput, execution_id: str
) -> tuple[Evidence, str]:
    """The evidence with its quote copied from the snapshot and the page text it sits under
    (section heading, the paragraph before), or EvidenceRefused."""
    key = (request.run_id, execution_id, request.source_id)
    source = await fetch_one(conn, _SELECT_SNAPSHOT, key)
    if source is None:
        raise EvidenceRefused(
            f"unknown source {request.source_id}: read the page before recording evidence"
        )
    if source["status"] != "ok":
        raise EvidenceRefused(
            f"source {request.source_id} could not be read ({source['error']}): "
            "it has no text to quote"
        )
    if request.passage_id is not None:
        return await _from_passage(conn, key, request, request.passage_id, source["passage_count"])
    return await _from_quote(conn, key, request, source["snapshot"])


async def _from_passage(
    conn: Connection,
    key: tuple[str, str, str],
    request: RecordEvidenceInput,
    wanted: str,
    passage_count: int,
) -> tuple[Evidence, str]:
    row = await fetch_one(conn, _SELECT_PASSAGE, (*key, wanted))
    if row is None:
        raise EvidenceRefused(_unknown_passage(request.source_id, wanted, passage_count))
    evidence = _new_evidence(
        request, row["text"], row["passage_id"], row["start_offset"], row["end_offset"]
    )
    return evidence, row["context"]


def _unknown_passage(source_id: str, wanted: str, passage_count: int) -> str:
    if not wanted.startswith(f"{source_id}.P"):
        return f"passage {wanted} is not in source {source_id}: its passage ids start {source_id}.P"
    if passage_count == 0:
        return f"unknown passage {wanted}: source {source_id} has no passages"
    last = passage_id(source_id, passage_count)
    return f"unknown passage {wanted}: source {source_id} has {source_id}.P1 to {last}"


async def _from_quote(
    conn: Connection, key: tuple[str, str, str], request: RecordEvidenceInput, snapshot: str
) -> tuple[Evidence, str]:
    span = find_quote(snapshot, request.quote or "")
    if span is None:
        raise EvidenceRefused(
            f"quote not found verbatim in {request.source_id} (copy the words exactly as the page "
            "shows them, or give a passage_id instead)"
        )
    start, end = span
    row = await fetch_one(conn, _SELECT_PASSAGE_AT, (*key, start))
    if row is None:
        return _new_evidence(request, snapshot[start:end], None, start, end), ""
    # A quote from inside a passage also sits under the passage's text before it (a signature).
    before = snapshot[max(row["start_offset"], start - QUOTE_LEAD_CHARS) : start]
    context = f"{row['context']} {before}"
    return _new_evidence(request, snapshot[start:end], row["passage_id"], start, end), context


def _new_evidence(
    request: RecordEvidenceInput, quote: str, passage_id: str | None, start: int, end: int
) -> Evidence:
    return Evidence(
        id=request.evidence_id,
        question_id=request.question_id,
        source_id=request.source_id,
        claim=request.claim,
        stance=request.stance,
        quote=quote,
        passage_id=passage_id,
        start=start,
        end=end,
    )


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
    )
