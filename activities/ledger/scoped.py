"""The ledger bound to one activity's run scope: the run and the execution its rows belong to.

`Ledger.bind(scope)` makes it, once per activity: it resolves the execution (the scope's, else the
activity's own workflow run) and, when the ledger has not seen that execution (the first activity
after a reset), forks the run at the scope's fork point first (`executions.enter`). The methods
below are the ledger's run-scoped reads and writes without the run id and execution repeated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from activities.ledger.sources import Snapshot, StoredSource, Window
from workflows.contracts import SaveReportInput, StepRecord
from workflows.models import Decision, Evidence, SearchHit, SourceRef
from workflows.scope import RunScope
from workflows.transcript import TranscriptEntry
from workflows.verification import Verdict

if TYPE_CHECKING:  # the ledger makes these; this module only names its type
    from activities.ledger import Ledger


def scope_execution(scope: RunScope) -> str | None:
    """The execution an activity's rows belong to: the scope's, else the workflow run that
    scheduled the activity; None outside a workflow (the run's current execution)."""
    if scope.execution:
        return scope.execution
    from temporalio import activity  # in a worker, where it is loaded already

    return (activity.info().workflow_run_id or None) if activity.in_activity() else None


class RunLedger:
    """The ledger's run-scoped methods for one run and one execution (None: the current)."""

    def __init__(self, ledger: Ledger, run_id: str, execution: str | None) -> None:
        self._ledger = ledger
        self.run_id = run_id
        self.execution = execution

    async def decision(self, turn: int) -> Decision | None:
        return await self._ledger.decision(self.run_id, turn, execution=self.execution)

    async def turn(
        self, turn: int, upto: int | None
    ) -> tuple[Decision | None, list[TranscriptEntry] | None]:
        """The decision recorded for `turn` and, with a watermark `upto`, the transcript up to
        it (None without one): for a named execution in one round trip."""
        if upto is None:
            return await self.decision(turn), None
        if self.execution:
            return await self._ledger.turn(self.run_id, turn, upto, execution=self.execution)
        recorded = await self.decision(turn)
        return recorded, None if recorded is not None else await self.transcript(upto)

    async def transcript(self, upto: int) -> list[TranscriptEntry]:
        return await self._ledger.transcript(self.run_id, upto, execution=self.execution)

    async def record_model_call(
        self, turn: int, decision: Decision, provider: str, context_chars: int
    ) -> bool:
        return await self._ledger.record_model_call(
            self.run_id, turn, decision, provider, context_chars, execution=self.execution
        )

    async def record_step(self, record: StepRecord) -> bool:
        return await self._ledger.record_step(record, execution=self.execution)

    async def recorded_search(self, step: int) -> tuple[str, list[SearchHit]] | None:
        return await self._ledger.recorded_search(self.run_id, step, execution=self.execution)

    async def record_search(
        self, step: int, query: str, provider: str, hits: list[SearchHit]
    ) -> list[SearchHit]:
        return await self._ledger.record_search(
            self.run_id, step, query, provider, hits, execution=self.execution
        )

    async def source(self, source_id: str, url: str | None = None) -> StoredSource | None:
        return await self._ledger.source(self.run_id, source_id, url, execution=self.execution)

    async def sources(self) -> list[SourceRef]:
        return await self._ledger.sources(self.run_id, execution=self.execution)

    async def store_source(self, source_id: str, page: Snapshot, step: int) -> SourceRef:
        return await self._ledger.store_source(
            self.run_id, source_id, page, execution=self.execution, step=step
        )

    async def store_failed_source(
        self, source_id: str, url: str, status: str, error: str, step: int
    ) -> SourceRef:
        return await self._ledger.store_failed_source(
            self.run_id, source_id, url, status, error, execution=self.execution, step=step
        )

    async def window(
        self, source_id: str, offset: int, find: str | None, size: int, chars: int
    ) -> Window:
        return await self._ledger.window(
            self.run_id, source_id, offset, find, size, chars, execution=self.execution
        )

    async def evidence_rows(self) -> list[Evidence]:
        return await self._ledger.evidence_rows(self.run_id, execution=self.execution)

    async def save_report(self, request: SaveReportInput, markdown: str) -> bool:
        return await self._ledger.save_report(request, markdown, execution=self.execution)

    async def verdicts(self, step: int) -> dict[int, Verdict]:
        return await self._ledger.verdicts(self.run_id, step, execution=self.execution)

    async def record_verdict(self, step: int, verdict: Verdict, provider: str) -> bool:
        return await self._ledger.record_verdict(
            self.run_id, step, verdict, provider, execution=self.execution
        )
