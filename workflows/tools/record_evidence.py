"""`record_evidence`: a quote from a page read, proven against its stored snapshot."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from workflows import gate
from workflows.activity import Activity
from workflows.models import MAX_ID_CHARS, Evidence, Stance
from workflows.scope import RunScope
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import Executed, Slimming, ToolContext, ToolSpec, first_line

NAME = "record_evidence"
OLDER_QUOTE = "recorded quote, shown in full when it was recorded"


class RecordEvidenceArgs(ToolArgs):
    question_id: str = Field(max_length=MAX_ID_CHARS)
    source_id: str = Field(max_length=MAX_ID_CHARS)
    claim: str = Field(min_length=1, max_length=2_000)
    stance: Stance
    passage_id: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    quote: str | None = Field(default=None, max_length=4_000)

    @model_validator(mode="after")
    def _one_origin(self) -> RecordEvidenceArgs:
        if (self.passage_id is None) == (self.quote is None):
            raise ValueError("give exactly one of passage_id or quote")
        return self


class RecordEvidenceInput(BaseModel):
    scope: RunScope  # its step: the step recording it (0: unknown)
    evidence_id: str  # assigned by the workflow ("E001")
    question_id: str
    source_id: str
    claim: str
    stance: Stance
    passage_id: str | None = None
    quote: str | None = None
    # The question's distinctive words: the quote must touch one (`workflows.substance`).
    terms: list[str] = Field(default_factory=list)
    question: str = ""  # its text: the quote's own words must share one of its words
    # A verifier judges meaning at finish: a judgement rule's doubt (`workflows.rules`) is kept
    # on the evidence as a concern for it, not a refusal of the record.
    judged: bool = False


class RecordEvidenceResult(BaseModel):
    evidence: Evidence | None = None
    error: str | None = None  # why the quote or passage was refused


RECORD_EVIDENCE = "record_evidence"  # the activity's registered name (worker.py)
RECORD_EVIDENCE_ACTIVITY = Activity(
    RECORD_EVIDENCE, RecordEvidenceInput, RecordEvidenceResult, "always"
)


class EvidenceData(ToolData):
    """The id assigned and the exact stored text; the host's conflicts."""

    kind: Literal["evidence"] = "evidence"
    evidence_id: str
    quote: str
    conflicts: list[str] = Field(default_factory=list)  # sentences naming both evidence ids
    # The whole sentence(s) the quote was cut from, when wider: how the verifier will read it.
    sentence: str = ""
    # The judgement rules' doubts, left to the verifier at finish (not refusals).
    concerns: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_conflicts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("conflicts", "sentence", "concerns"):
            if not data.get(name):
                data.pop(name, None)
        return data


async def run(args: RecordEvidenceArgs, tool: ToolContext) -> Executed:
    state = tool.state
    state.check_evidence(args.question_id, args.source_id, args.passage_id)
    evidence_id = state.next_evidence_id()
    recorded = await tool.activity(
        RECORD_EVIDENCE_ACTIVITY,
        RecordEvidenceInput(
            scope=tool.scope(),
            evidence_id=evidence_id,
            terms=state.question_terms(args.question_id),
            question=state.question_text(args.question_id),
            judged=tool.verifier == "model",
            **args.model_dump(),
        ),
        summary=f"record: {evidence_id} for {args.question_id}",
    )
    if recorded.evidence is None:
        return Executed(ok=False, error=recorded.error or "evidence refused")
    state.add_evidence(evidence_id, recorded.evidence)
    found = [  # the host's own check: the report must disclose both sides
        conflict.sentence()
        for conflict in gate.conflicts(state.evidence, state.sources, involving=evidence_id)
    ]
    kept = recorded.evidence
    data = EvidenceData(
        evidence_id=evidence_id,
        quote=kept.quote,
        conflicts=found,
        sentence=kept.sentence if kept.sentence != kept.quote else "",
        concerns=kept.concerns,
    )
    return Executed(data)


def describe(args: RecordEvidenceArgs, data: EvidenceData) -> str:
    return f"record {data.evidence_id} for {args.question_id} from {args.source_id}"


def cut(data: EvidenceData) -> EvidenceData:
    """The quote's start: it was shown whole when it was recorded."""
    return data.model_copy(update={"quote": first_line(data.quote, OLDER_QUOTE)})


def rests_on(args: RecordEvidenceArgs) -> str:
    """The source recorded evidence is quoted from: its page text is what the quote is read
    against, so compaction drops it last."""
    return args.source_id


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Record evidence for a question from a page you read: passage_id (the host quotes a short "
        "passage whole, a long one's sentences that hold the claim) or a verbatim quote."
    ),
    arguments=RecordEvidenceArgs,
    parameters={
        "question_id": "Its question (Q1).",
        "source_id": "Its page (S1).",
        "claim": "What the quote states.",
        "stance": "How it bears on the question.",
        "passage_id": "A passage id (S1.P4): quoted whole up to 1,000 characters; a longer one "
        "only its sentences that hold the claim (at most 3), so the claim names all you will "
        "cite it for.",
        "quote": "Verbatim page text, instead of passage_id.",
    },
    # A quote is page text: never rewritten (the evidence keeps the snapshot's own text, and
    # every check reads it through `canonical`).
    verbatim=frozenset({"quote"}),
    results=(EvidenceData,),
    runs=RECORD_EVIDENCE_ACTIVITY,
    run=run,
    describe=describe,
    compact=None,
    slimming=Slimming(cut, keep_latest=None, recent_steps=1),
    untrusted=None,
    rests_on=rests_on,
    label=NAME,
)
