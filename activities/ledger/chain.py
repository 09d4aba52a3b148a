"""Tamper evidence: each run's steps and evidence are hash chains, one per execution.

A row's `chain` is SHA-256 over the previous row's chain ('' for the first row) and the row's
canonical encoding: its fields (the execution id left out, so a prefix copied by a reset keeps
its hashes) as JSON with sorted keys. An edited row no longer hashes to its chain; a deleted or
renumbered one breaks the link of the row after it; the report holds each chain's last hash, so
a row deleted from the end shows too. The ledger computes chains as it writes; `research audit`
recomputes them from the rows (`starter/audit/ledger.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from workflows.transcript import TranscriptEntry

STEP_FIELDS = (
    "run_id", "step", "turn", "tool", "arguments", "ok", "error", "insufficient", "summary",
    "entry",
)  # fmt: skip
EVIDENCE_FIELDS = (
    "run_id", "evidence_id", "question_id", "source_id", "claim", "stance", "quote", "passage_id",
    "start_offset", "end_offset", "step",
)  # fmt: skip


def link(previous: str, fields: Mapping[str, Any], names: tuple[str, ...]) -> str:
    """The chain of a row with these `fields` (exactly `names`) after a row chained `previous`."""
    row = {name: fields[name] for name in names}
    encoded = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{previous}\n{encoded}".encode()).hexdigest()


def step_link(previous: str, fields: Mapping[str, Any]) -> str:
    return link(previous, fields, STEP_FIELDS)


def evidence_link(previous: str, fields: Mapping[str, Any]) -> str:
    return link(previous, fields, EVIDENCE_FIELDS)


def entry_fields(entry: TranscriptEntry | None) -> dict[str, Any] | None:
    """A step's transcript entry as the chain encodes it: as it reads back from the ledger, with
    fields at their defaults left out, so a field a later version adds (with a default) leaves
    the encoding of every row written before it, and so its chain, as it was."""
    return None if entry is None else entry.model_dump(mode="json", exclude_defaults=True)
