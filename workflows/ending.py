"""How a run ends (pure data): its status, the reason, the report and how its meaning was checked.
What decides it is elsewhere: a tool (`finish_research`), a bound (`workflows.state`), a failure
the loop reads (`workflows.outcomes`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.models import Report, RunStatus, StopReason
from workflows.verification import Verification


class Outcome(BaseModel):
    """How a run ends: its status, the reason, and the report (None: compose one)."""

    status: RunStatus
    stop_reason: StopReason
    report: Report | None = None
    detail: str = ""
    verification: Verification = Field(default_factory=Verification)
