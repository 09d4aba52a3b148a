"""What every tool shares at the bottom of the tools (pure): the base of its arguments and of its
results, and the refusal it raises.

A tool's result models each carry a `kind` (`Literal`), the key that tells them apart when they
are read back from JSON (the ledger's steps, a workflow history): the registry
(`workflows.tools.registry`) joins every registered tool's results into one union on it, which the
transcript (`workflows.transcript`) reads them as. A tool's arguments are told apart by the name
of the tool they were sent to.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class InvalidCall(ValueError):
    """The call cannot be executed; the message is returned to the model as the tool error."""


class ToolArgs(BaseModel):
    """The base of every tool's argument model (what the model sent, validated)."""

    model_config = ConfigDict(extra="forbid")


class ToolData(BaseModel):
    """The base of every tool's result model (the envelope's `data`): each sets `kind`."""

    model_config = ConfigDict(extra="forbid")

    kind: str

    def error_detail(self) -> str | None:
        """What the ledger's step error adds to the tool's error (None: nothing)."""
        return None
