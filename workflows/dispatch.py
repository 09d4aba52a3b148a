"""Tool execution inside the workflow: validate a call, run its registered tool, describe a step.

Deterministic: the only outside effects are activity calls through the workflow's caller. What a
tool does is its spec's (`workflows.tools`); this module only finds the spec and runs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from workflows import tracing
from workflows.activity import Activity, In, Out
from workflows.cleaning import MAX_ERROR_CHARS, clean, echo
from workflows.contracts import StartRunResult
from workflows.ending import Outcome
from workflows.models import ToolCall
from workflows.scope import RunScope
from workflows.state import RunState
from workflows.tool_base import InvalidCall, ToolArgs, ToolData
from workflows.tools.calls import parse_call
from workflows.tools.registry import REGISTRY
from workflows.tools.spec import Executed
from workflows.transcript import ToolResult
from workflows.verification import VerifierMode, VerifyResult

__all__ = ["ActivityCaller", "Handled", "Outcome", "ToolDispatcher", "describe_step"]


class Handled(BaseModel):
    """What one call came to: its result, the run's end if it ended it, its validated args."""

    result: ToolResult
    outcome: Outcome | None = None
    args: ToolArgs | None = None


class ActivityCaller(Protocol):
    def __call__(
        self, activity: Activity[In, Out], request: In, *, summary: str
    ) -> Awaitable[Out]: ...


class ToolDispatcher:
    """Runs calls for one run; the `ToolContext` each tool's `run` is handed."""

    def __init__(
        self,
        state: RunState,
        run_id: str,
        execution: str,
        activity: ActivityCaller,
        now: Callable[[], datetime],
    ) -> None:
        self._state = state
        self._run_id = run_id
        self._execution = execution
        self._activity = activity
        self._now = now
        # What start_run recorded (the worker's facts: how meaning is checked once the gate
        # passes); set before any call is dispatched.
        self.started = StartRunResult()

    @property
    def verifier(self) -> VerifierMode:
        return self.started.verifier

    @property
    def verifier_name(self) -> str:
        return self.started.verifier_name

    @property
    def state(self) -> RunState:
        return self._state

    def scope(self) -> RunScope:
        counters = self._state.counters
        return RunScope.tool_of(
            self._run_id, self._execution, counters.steps, counters.model_calls, self._state.writer
        )

    def activity(self, activity: Activity[In, Out], request: In, *, summary: str) -> Awaitable[Out]:
        return self._activity(activity, request, summary=summary)

    def verified(self, checked: VerifyResult) -> None:
        self._state.add_usage(checked.usage)
        tracing.tokens(checked.usage.input_tokens, checked.usage.output_tokens)
        tracing.evaluations(checked.verdicts)

    async def dispatch(self, call: ToolCall) -> Handled:
        """Run one call: a validated call's result, or its refusal with one sentence."""
        if call.refusal:  # the host refused it before it reached the workflow
            return Handled(result=self.result(ok=False, error=call.refusal))
        try:
            args = parse_call(call)
        except InvalidCall as error:
            return Handled(result=self.result(ok=False, error=str(error)))
        spec = REGISTRY.get(call.name)
        assert spec is not None  # parse_call refuses a name no tool has
        try:
            executed = await spec.run(args, self)
        except InvalidCall as error:
            return Handled(result=self.result(ok=False, error=str(error)), args=args)
        return Handled(result=self.envelope(executed), outcome=executed.outcome, args=args)

    def envelope(self, executed: Executed) -> ToolResult:
        """A tool's result as the model is shown it: with the budget left."""
        return self.result(
            ok=executed.ok,
            data=executed.data,
            error=executed.error,
            insufficient=executed.insufficient,
        )

    def result(
        self,
        *,
        ok: bool = True,
        data: ToolData | None = None,
        error: str | None = None,
        insufficient: bool = False,
    ) -> ToolResult:
        return ToolResult(
            ok=ok,
            data=data,
            error=None if error is None else clean(error, MAX_ERROR_CHARS),
            insufficient=insufficient,
            budget=self._state.budget(self._now()),
        )


def describe_step(call: ToolCall, result: ToolResult, args: ToolArgs | None) -> str:
    """One short line for progress displays: `read S2 docs.example/page (6 passages)`."""
    if not result.ok:
        return f"{echo(call.name) or '(no tool call)'}: {result.error}"[:200]
    spec = REGISTRY.get(call.name)
    if spec is None or args is None or result.data is None:  # an ok result always has all three
        return f"{echo(call.name)}: done"
    return spec.describe(args, result.data)
