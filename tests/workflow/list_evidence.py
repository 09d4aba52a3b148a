"""`list_evidence`: a tool added as a test fixture, whole, as `workflows/tools/list_evidence.py`
would hold it (tests/workflow/test_new_tool.py puts it there in a copy of `workflows/`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import Executed, ToolContext, ToolSpec, Untrusted

NAME = "list_evidence"
SHORTENED = "[quote shortened: it was shown whole before]"


class ListEvidenceArgs(ToolArgs):
    question_id: str | None = None


class ListedEvidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    question_id: str
    quote: str


class EvidenceList(ToolData):
    kind: Literal["evidence_list"] = "evidence_list"
    items: list[ListedEvidence]


async def run(args: ListEvidenceArgs, tool: ToolContext) -> Executed:
    items = [
        ListedEvidence(id=item.id, question_id=item.question_id, quote=item.quote)
        for item in tool.state.evidence.values()
        if args.question_id in (None, item.question_id)
    ]
    return Executed(EvidenceList(items=items), insufficient=not items)


def compact(data: EvidenceList) -> EvidenceList | None:
    if not data.items:
        return None
    items = [item.model_copy(update={"quote": SHORTENED}) for item in data.items]
    return data.model_copy(update={"items": items})


def untrusted(data: EvidenceList) -> Untrusted:
    body = "\n".join(f"[{item.id} for {item.question_id}] {item.quote}" for item in data.items)
    return Untrusted(field="items", source="evidence", body=body)


SPEC = ToolSpec(
    name=NAME,
    description="List the evidence recorded so far, with its quotes.",
    arguments=ListEvidenceArgs,
    parameters={"question_id": "Only the evidence for this question (Q1)."},
    verbatim=frozenset(),
    results=(EvidenceList,),
    runs=None,
    run=run,
    describe=lambda args, data: f"list evidence: {len(data.items)} recorded",
    compact=compact,
    slimming=None,
    untrusted=untrusted,
    rests_on=None,
    label=NAME,
)
