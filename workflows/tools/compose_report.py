"""`compose_report`: the fixed lane's one model call (`workflows.lanes`), not a tool the agent is
offered. The model reads the passages the lane retrieved and writes the report, each finding
citing passage ids with a claim per passage; the host records each cited passage as evidence as
`record_evidence` with `passage_id` does, then submits the report as `finish_research` does.

Its schema is made as the tools' are (`registry.function_schema`), and its reply is checked as a
tool call is (`calls.parse_arguments`): a malformed reply is a refused step.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workflows.models import MAX_ID_CHARS, Stance, ToolCall
from workflows.tool_base import InvalidCall, ToolArgs
from workflows.tools.calls import parse_arguments
from workflows.tools.registry import function_schema

NAME = "compose_report"
DESCRIPTION = (
    "Write the report from the passages shown: answer, findings each citing passage ids (S1.P4) "
    "with the claim each passage supports, and limitations."
)


class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passage_id: str = Field(max_length=MAX_ID_CHARS)
    question_id: str = Field(max_length=MAX_ID_CHARS)
    claim: str = Field(min_length=1, max_length=2_000)
    stance: Stance = "supports"

    @property
    def source_id(self) -> str:
        """The page a passage id names: `S1` of `S1.P4`."""
        return self.passage_id.split(".", 1)[0]


class ComposedFinding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=4_000)
    citations: list[Citation] = Field(min_length=1, max_length=20)


class ComposeArgs(ToolArgs):
    answer: str = Field(min_length=1, max_length=8_000)
    findings: list[ComposedFinding] = Field(default_factory=list, max_length=30)
    limitations: str = Field(default="", max_length=8_000)


PARAMETERS = {
    "answer": "The answer to the question, held to the findings.",
    "findings": "Findings, each with its text and the passages it rests on: passage_id, the "
    "question_id it answers, the claim that passage states, and its stance.",
    "limitations": "What stays open or uncertain, and where sources disagree.",
}


def schema() -> dict[str, Any]:
    """The compose_report function definition, as the provider sends it."""
    return function_schema(NAME, DESCRIPTION, ComposeArgs, PARAMETERS)


def parse(calls: list[ToolCall]) -> ComposeArgs:
    """The composing reply's arguments, or InvalidCall naming what is wrong with it."""
    if len(calls) != 1 or calls[0].name != NAME:
        names = ", ".join(call.name or "(none)" for call in calls) or "no call"
        raise InvalidCall(f"the composing reply must be one {NAME} call, it was {names}")
    return parse_arguments(calls[0], ComposeArgs)
