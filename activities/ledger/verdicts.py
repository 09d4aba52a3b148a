"""Ledger SQL for the verifier's verdicts: one row per claim of a checked submission."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from activities.ledger.base import Connection, execute, fetch_all, fetch_one
from workflows.models import Usage
from workflows.verification import Verdict, Verification

_INSERT_VERDICT = """
INSERT INTO research.verdicts (
    run_id, execution_id, step, claim_no, claim, verdict, said, sentence, evidence_id, reason,
    provider, model, input_tokens, output_tokens, estimated, subject, question_id
) VALUES (
    %(run_id)s, %(execution_id)s, %(step)s, %(claim_no)s, %(claim)s, %(verdict)s, %(said)s,
    %(sentence)s, %(evidence_id)s, %(reason)s, %(provider)s, %(model)s, %(input_tokens)s,
    %(output_tokens)s, %(estimated)s, %(subject)s, %(question_id)s
) ON CONFLICT (run_id, execution_id, step, claim_no) DO NOTHING
"""

_COLUMNS = """
SELECT step, claim_no, claim, verdict, said, sentence, evidence_id, reason, provider, model,
       input_tokens, output_tokens, estimated, recorded_at, subject, question_id
FROM research.verdicts
"""
_SELECT_STEP = _COLUMNS + "WHERE run_id = %s AND execution_id = %s AND step = %s ORDER BY claim_no"
_SELECT_RUN = _COLUMNS + "WHERE run_id = %s AND execution_id = %s ORDER BY step, claim_no"

# A reset's copy: the parent's verdicts of the finish steps before the fork point.
COPY = """
INSERT INTO research.verdicts (
    run_id, execution_id, step, claim_no, claim, verdict, said, sentence, evidence_id, reason,
    provider, model, input_tokens, output_tokens, estimated, recorded_at, subject, question_id)
SELECT run_id, %(execution)s, step, claim_no, claim, verdict, said, sentence, evidence_id,
       reason, provider, model, input_tokens, output_tokens, estimated, recorded_at, subject,
       question_id
FROM research.verdicts
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(work)s
"""


async def insert_verdict(
    conn: Connection, run_id: str, execution_id: str, step: int, verdict: Verdict, provider: str
) -> bool:
    params = {
        "run_id": run_id,
        "execution_id": execution_id,
        "step": step,
        "claim_no": verdict.number,
        "claim": verdict.claim,
        "verdict": verdict.verdict,
        "said": verdict.said,
        "sentence": verdict.sentence,
        "evidence_id": verdict.evidence_id,
        "reason": verdict.reason,
        "provider": provider,
        "model": verdict.model,
        "input_tokens": verdict.usage.input_tokens,
        "output_tokens": verdict.usage.output_tokens,
        "estimated": verdict.usage.estimated,
        "subject": verdict.subject,
        "question_id": verdict.question_id,
    }
    return bool(await execute(conn, _INSERT_VERDICT, params))


async def load_step(
    conn: Connection, run_id: str, execution_id: str, step: int
) -> dict[int, Verdict]:
    """The verdicts recorded for one finish step, by claim number."""
    rows = await fetch_all(conn, _SELECT_STEP, (run_id, execution_id, step))
    return {row["claim_no"]: verdict_from(row) for row in rows}


_SELECT_VERIFICATION = """
SELECT verification FROM research.reports WHERE run_id = %s AND execution_id = %s
"""


async def load_verification(conn: Connection, run_id: str, execution_id: str) -> Verification:
    row = await fetch_one(conn, _SELECT_VERIFICATION, (run_id, execution_id))
    return Verification.model_validate((row or {}).get("verification") or {})


async def load_rows(conn: Connection, run_id: str, execution_id: str) -> list[dict[str, Any]]:
    return await fetch_all(conn, _SELECT_RUN, (run_id, execution_id))


def verdict_from(row: Mapping[str, Any]) -> Verdict:
    return Verdict(
        number=row["claim_no"],
        claim=row["claim"],
        verdict=row["verdict"],
        said=row["said"],
        subject=row.get("subject") or "finding",
        question_id=row.get("question_id") or "",
        sentence=row["sentence"],
        evidence_id=row["evidence_id"],
        reason=row["reason"],
        model=row["model"],
        usage=Usage(
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            estimated=row["estimated"],
        ),
    )
