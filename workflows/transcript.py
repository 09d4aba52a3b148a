"""The transcript (pure): the envelope every tool's result goes back to the model in, and each step
as the model is shown it.

It sits above the tools: a result is one of the registered tools' result models, read back from
JSON (the ledger's steps, a workflow history) by its `kind` alone (the registry's union), and a
step's arguments read back as the argument model of the tool its call names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, SerializeAsAny, model_validator

from workflows.models import Budget, ToolCall
from workflows.tool_base import ToolArgs
from workflows.tools.registry import REGISTRY

if TYPE_CHECKING:  # to the type checker: the base every member of the union derives from
    from workflows.tool_base import ToolData as AnyToolData
else:  # at run time the union itself: pydantic reads a stored result by its kind
    AnyToolData = REGISTRY.results()


class ToolResult(BaseModel):
    """The one envelope every tool returns to the model."""

    ok: bool
    data: AnyToolData | None = None
    error: str | None = None
    insufficient: bool = False
    budget: Budget = Field(default_factory=Budget)


class TranscriptEntry(BaseModel):
    step: int
    call: ToolCall
    result: ToolResult
    # The validated arguments; None when the call was refused before they were valid. Readers
    # use these, never the raw text. Read back as the arguments of the tool `call` names.
    args: SerializeAsAny[ToolArgs] | None = None

    @model_validator(mode="before")
    @classmethod
    def _arguments_of_the_named_tool(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("args"), dict):
            call = value.get("call")
            name = call.get("name") if isinstance(call, dict) else getattr(call, "name", "")
            value = {**value, "args": REGISTRY.read_arguments(str(name or ""), value["args"])}
        return value
