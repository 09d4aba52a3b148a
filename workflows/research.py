"""ResearchWorkflow: the deterministic, bounded investigation loop of DESIGN.md."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any, TypeVar

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import (
    RetryPolicy,
    SearchAttributeKey,
    SearchAttributeUpdate,
    VersioningBehavior,
)
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, RetryState
from temporalio.exceptions import TimeoutError as ActivityTimeout

with workflow.unsafe.imports_passed_through():
    # `import workflows.x as x`, not `from workflows import x`: the sandbox passes a module through
    # only when its own name is imported. `from workflows import x` imports the package (already
    # loaded inside the sandbox, with this module) and loads `x` afresh for every run: measured,
    # a run's sandbox took 56 ms of CPU to create, 15 ms with these passed through.
    import workflows.continuation as continuation
    import workflows.contracts as contracts
    import workflows.gate as gate
    import workflows.tools.finish_research as finish_research
    import workflows.tracing as tracing
    import workflows.verification as verification
    from workflows.cleaning import (
        MAX_CALLS_PER_TURN,
        MAX_ERROR_CHARS,
        MAX_TEXT_CHARS,
        as_text,
        clean,
    )
    from workflows.composer import compose, unaccepted
    from workflows.continuation import Continuation
    from workflows.contracts import In, Out
    from workflows.dispatch import Outcome, ToolDispatcher, describe_step
    from workflows.hosts import url_host
    from workflows.models import (
        UNVERIFIED,
        Brief,
        Decision,
        ExtendLimitsInput,
        FinishNowInput,
        GuidanceInput,
        Limits,
        Progress,
        Report,
        ResultQuote,
        RunResult,
        RunStatus,
        SeedsAdded,
        SeedUrlsInput,
        StepNote,
        StopReason,
        ToolCall,
        ToolResult,
        TranscriptEntry,
    )
    from workflows.scope import RunScope
    from workflows.state import RunState
    from workflows.tool_base import ToolArgs
    from workflows.tools import REGISTRY, FinishArgs, bounded_call
    from workflows.validation import INVALID_INPUT, read_brief, seeds_problem
    from workflows.verification import Verification

T = TypeVar("T")

STATUS_KEY = SearchAttributeKey.for_keyword("ResearchStatus")
STOP_REASON_KEY = SearchAttributeKey.for_keyword("ResearchStopReason")
# Set when a run completes: true when a verifier model checked its meaning, false when the rules
# alone passed it (no verifier: `offline`, `fixed`, RESEARCH_VERIFIER_PROVIDER=off).
VERIFIED_KEY = SearchAttributeKey.for_bool("ResearchVerified")

ACTIVITY_TIMEOUT = timedelta(seconds=60)
# A local activity runs inside the workflow task's lifetime: an attempt gets less time.
LOCAL_TIMEOUT = timedelta(seconds=30)
# A model call's attempt: the worker's RESEARCH_MODEL_TIMEOUT_SECONDS (recorded by start_run) plus
# the ledger work around the call, so the activity cuts a slow call itself, once, and Temporal
# never asks a model again while it is still answering (the heartbeat notices a lost worker).
# DECIDE_TIMEOUT: a worker that recorded no model timeout.
DECIDE_TIMEOUT = timedelta(seconds=120)
DECIDE_LEDGER_WORK = timedelta(seconds=30)
# The verifier asks one model call per claim (a report's findings and its answer), in turn; a
# retry asks only the claims left (each verdict is kept as it comes), and the deadline caps it.
VERIFY_TIMEOUT = timedelta(seconds=600)
DEADLINE_GRACE = timedelta(seconds=5)  # decide's own timeout fires after the deadline timer
WRAP_UP_TIMEOUT = timedelta(seconds=30)  # saving the report after a bound tripped
MAX_GUIDANCE = 10  # operator guidance kept (newest)
LIMITS_REFUSED = "LimitsRefused"  # the error type of a refused extend_limits update
MAX_REASON_CHARS = 500  # an operator's finish_now reason, as the report shows it
RECENT_STEPS = continuation.RECENT_ENTRIES  # step lines the progress query carries
# Retry by cause: infrastructure faults (a lost worker, a timeout, a database restarting) are
# retried until the run's deadline (schedule-to-close), not a fixed count; what a retry cannot fix
# fails at once: errors raised non-retryable (a provider's refusal, a refused ledger write) and
# programming errors. A provider's Retry-After still sets the next delay.
RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=0,
    non_retryable_error_types=[  # bugs: the same input fails the same way again
        "TypeError",
        "AttributeError",
        "NameError",
        "AssertionError",
        "NotImplementedError",
        "ValidationError",
        "KeyError",
        "IndexError",
        "ValueError",
        "ZeroDivisionError",
    ],
)
# start_run and save_report are not capped by the deadline: they get this many timeouts.
UNCAPPED_ATTEMPTS = 5
# A regular activity that waits (model, search, page) heartbeats; a lost worker shows in seconds.
# Measured: 6 s let 100 runs on one saturated worker time out healthy calls (10 in one bench, each
# a model call asked again); 8 s, none, and a killed call runs again after 9.5 s (median, chaos).
HEARTBEAT = timedelta(seconds=8)
HEARTBEATING = frozenset(
    {contracts.DECIDE, contracts.VERIFY}
)  # and the tools' activities that say so
LEDGER_ACTIVITIES = frozenset({contracts.START_RUN, contracts.RECORD_STEP, contracts.SAVE_REPORT})


# Pinned: a run keeps the worker deployment version (the build) it started on to its end; a
# changed decision ships as a new version, not as a `workflow.patched` branch (docs/operations.md).
@workflow.defn(
    name="ResearchWorkflow",
    failure_exception_types=[ValidationError],
    versioning_behavior=VersioningBehavior.PINNED,
)
class ResearchWorkflow:
    # Input that is not a valid brief (or no input) decodes as plain JSON (pydantic tries Brief
    # first, strictly; `read_brief` validates it laxly, as a plain `Brief` hint would have), so
    # the run fails with the brief's own problem and still answers queries: had
    # decoding raised, the SDK would make no workflow object, and every later query (the CLI's,
    # the Web UI's) would fail with "Expected workflow input. This is a Python SDK bug." in the
    # worker log.
    #
    # `carried`: a run that continued as new (`workflows.continuation`) starts its next execution
    # with its state; a run started by a client never passes it.
    @workflow.init
    def __init__(self, brief: Brief | Any = None, carried: Continuation | None = None) -> None:
        read = read_brief(brief)
        self._invalid = read if isinstance(read, str) else ""
        # A stand-in the handlers can work on until `run` fails (never shown: queries say why).
        valid = (
            read
            if isinstance(read, Brief)
            else Brief(question="-", allowed_hosts=["invalid.invalid"])
        )
        self._carried = carried if carried is not None and not self._invalid else None
        if self._carried is not None:
            self._state = self._carried.state
        else:
            self._state = RunState.begin(valid, workflow.now())
        self._run_id = workflow.info().workflow_id
        self._execution = workflow.info().run_id  # a reset's new execution has its own
        self._outcome: Outcome | None = None
        self._root = tracing.NO_SPAN
        self._report_markdown = ""  # set when the report is saved
        self._tools = ToolDispatcher(
            self._state, self._run_id, self._execution, self._call, workflow.now
        )
        self._search_attributes = False
        self._started = False
        self._local_model = False
        self._decide_timeout = DECIDE_TIMEOUT
        self._local_search = False
        self._local_hosts: frozenset[str] = frozenset()
        self._upserted: tuple[str, str] | None = None
        self._verified: bool | None = None  # a completed run: was its meaning checked by a model
        self._turn_start = 0  # the first step of the latest turn (its results are shown whole)
        self._timer: asyncio.Future[None] | None = None
        self._timer_limit = 0
        self._started_with = contracts.StartRunResult()  # what start_run recorded
        self._steps_before = 0  # steps taken by the executions before this one
        # Steps taken since the last decide, their rows not written yet: the next decide records
        # them first, so a step is two activations, not three. The loop's last steps are flushed
        # before it ends; the report's save carries what a failure or a cancel left.
        self._unrecorded: list[contracts.StepRecord] = []
        if self._carried is not None:
            self._steps_before = self._carried.steps_before
            self._turn_start = self._carried.turn_start
            self._upserted = self._carried.upserted

    @workflow.run
    async def run(
        self, brief: Brief | Any = None, carried: Continuation | None = None
    ) -> RunResult:
        if not self._invalid:  # a seed the fetcher would refuse, started past `research start`
            self._invalid = seeds_problem(self._state.brief) or ""
        if self._invalid:
            raise ApplicationError(self._invalid, type=INVALID_INPUT, non_retryable=True)
        # One trace per investigation: this span is its root, every activity runs below it (a
        # continued execution's root is a child of the execution's before it).
        parent = self._carried.trace if self._carried is not None else None
        questions = len(self._state.brief.questions)
        with tracing.investigation(self._run_id, questions, parent) as self._root:
            try:
                if self._carried is not None:
                    self._take_started(self._carried.started)
                    self._publish()  # the Web UI's details of this execution from its start
                else:
                    await _cancellable(self._start())
                self._outcome = await self._investigate()
            except asyncio.CancelledError:
                # Cancellation is not a crash: leave a composed report, then end CANCELLED.
                self._outcome = Outcome(
                    status=RunStatus.CANCELLED, stop_reason=StopReason.CANCELLED
                )
                if not self._started:
                    await self._start()
                await self._wrap_up(self._outcome)
                raise
            return await self._wrap_up(self._outcome)

    async def _start(self) -> None:
        brief = self._state.brief
        started = await self._call(
            contracts.START_RUN_ACTIVITY,
            contracts.StartRunInput(
                scope=RunScope.start(self._run_id, self._execution),
                brief=brief,
                started_at=self._state.started_at.isoformat(),
                first_execution_id=workflow.info().first_execution_run_id,
            ),
            summary=f"start: {brief.question[:80]}",
            capped=False,
        )
        self._state.writer = started.execution_id
        self._take_started(started)
        self._publish()

    def _take_started(self, started: contracts.StartRunResult) -> None:
        """What start_run recorded (this execution's, or the first one's, carried)."""
        self._started = True
        self._started_with = started
        self._search_attributes = started.search_attributes
        self._local_search = started.local_search
        self._local_hosts = frozenset(started.local_hosts)
        self._local_model = started.local_model
        if started.model_timeout_seconds > 0:
            seconds = timedelta(seconds=started.model_timeout_seconds)
            self._decide_timeout = seconds + DECIDE_LEDGER_WORK
        self._tools.verifier, self._tools.verifier_name = started.verifier, started.verifier_name

    # ------------------------------------------------------------ the loop

    async def _investigate(self) -> Outcome:
        while True:
            try:
                outcome = await _cancellable(self._turn())
                if outcome is not None:  # the last steps' rows, in the loop: one the ledger
                    await _cancellable(self._flush_records())  # refuses ends the run by cause
            except ActivityError as error:
                return _failed(error, self._state.seconds_left(workflow.now()) <= 0)
            if outcome is not None:
                return outcome

    async def _turn(self) -> Outcome | None:
        """Check the bounds, take one model turn, run its tool call."""
        stop = self._state.tripped(workflow.now())
        if stop is not None:
            return await self._stopped(stop)
        if self._continues():
            # Signals and updates in flight finish here (their effect is carried); a bound one
            # of them tripped (finish_now) ends the run in this execution.
            await workflow.wait_condition(workflow.all_handlers_finished)
            stop = self._state.tripped(workflow.now())
            if stop is not None:
                return await self._stopped(stop)
            await self._flush_records()  # the next execution starts from recorded steps
            self._continue_as_new()
        decision = await self._decide()  # decide builds the transcript from the ledger
        if isinstance(decision, Outcome):
            return decision
        if decision.over_context:
            return Outcome(status=RunStatus.INCOMPLETE, stop_reason=StopReason.CONTEXT_LIMIT)
        self._state.add_usage(decision.usage)
        tracing.tokens(decision.usage.input_tokens, decision.usage.output_tokens)
        self._publish()  # the Web UI's details count the tokens as `research status` does
        return await self._act(decision)

    async def _stopped(self, stop: StopReason) -> Outcome:
        """A bound tripped, or an operator asked to finish: the composed report may still pass."""
        if stop is not StopReason.OPERATOR_FINISH:
            return Outcome(status=RunStatus.INCOMPLETE, stop_reason=stop)
        state = self._state
        report = compose(state.brief, state.evidence, state.sources, stop, state.finish_reason)
        submitted, verified = _as_finish(report), self._tools.verifier == "model"
        verdict = gate.check(
            submitted, state.evidence, state.sources, state.brief, composed=True, verifier=verified
        )
        checked = Verification()  # a composed report is labelled as such; a verifier may read it
        passed = verdict.passed
        if passed and verified:  # a completed report's findings are checked for meaning too
            checked = Verification(mode="model", verifier=self._tools.verifier_name)
            checked.verdicts = await finish_research.verify_claims(
                submitted, self._tools, verdict, composed=True
            )
            passed = not verification.gaps(checked.verdicts)
        status = RunStatus.COMPLETED if passed else RunStatus.INCOMPLETE
        return Outcome(  # the operator's reason is the result's message: what was composed with
            status=status,
            stop_reason=stop,
            report=report,
            verification=checked,
            detail=state.finish_reason,
        )

    def _continues(self) -> bool:
        """Whether the run continues as new before this turn (`workflows.continuation`)."""
        info = workflow.info()
        return continuation.should_continue(
            self._started_with,
            self._state.counters.steps - self._steps_before,
            info.get_current_history_size(),
            info.get_current_history_length(),
            info.is_continue_as_new_suggested(),
        )

    def _continue_as_new(self) -> None:
        """Continue as a new execution of this run, carrying its whole state (raises)."""
        state = self._state
        context = self._root.get_span_context()
        carried = Continuation(
            state=continuation.carried_state(state),
            started=self._started_with,
            turn_start=self._turn_start,
            execution=(self._carried.execution + 1) if self._carried is not None else 2,
            steps_before=state.counters.steps,
            upserted=self._upserted,
            trace=continuation.TraceParent(trace_id=context.trace_id, span_id=context.span_id),
        )
        tracing.continued(self._root, state.counters, carried.execution)
        workflow.continue_as_new(args=[state.brief, carried])

    def _context_budget(self) -> int:
        state = self._state
        fixed = len(state.brief.model_dump_json()) + sum(map(len, state.guidance))
        fixed += sum(len(url) + 2 for url in state.added_seeds())
        return state.limits.max_context_chars - fixed

    async def _decide(self) -> Decision | Outcome:
        state = self._state
        steps, records = state.counters.steps, list(self._unrecorded)
        request = contracts.DecideInput(
            scope=RunScope.turn_of(
                self._run_id,
                self._execution,
                state.next_model_call(),
                steps,
                state.writer,
                rows=_rows_before(records),
            ),
            brief=self._state.brief,
            guidance=list(self._state.guidance),
            seeds=self._state.added_seeds(),
            budget=self._state.budget(workflow.now()),
            watermark=steps,
            context_budget=self._context_budget(),
            turn_start=self._turn_start,
            records=records,
        )
        call = asyncio.ensure_future(
            self._call(
                contracts.DECIDE_ACTIVITY,
                request,
                timeout=self._decide_timeout,
                grace=DEADLINE_GRACE,
                summary=_with_records(f"decide: turn {request.scope.turn}", records),
            )
        )
        # Waiting on the model races the deadline (the activity's own timeout ends a little
        # later) and an operator's finish_now, which ends the run at once, as a cancel does.
        finish = asyncio.ensure_future(workflow.wait_condition(lambda: state.finish_requested))
        try:
            racing: list[asyncio.Future[Any]] = [call, self._deadline_timer(), finish]
            await workflow.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            _abandon(call)  # the run is being cancelled: do not leave the model call running
            raise
        finally:
            _abandon(finish)
        if not call.done() and state.finish_requested:
            # Not cancelled: a cancel racing the answer is refused by the server (the activity
            # is no longer known); the answer, when it comes, is not read, and once the run has
            # ended its heartbeat stops the call.
            _unread(call)
            return await self._stopped(StopReason.OPERATOR_FINISH)
        if not call.done():
            _abandon(call)
            return Outcome(status=RunStatus.INCOMPLETE, stop_reason=StopReason.DEADLINE)
        decision = call.result()
        del self._unrecorded[: len(records)]  # the decide recorded them
        if not decision.over_context:  # a model answered: count it
            self._state.count_model_call(request.scope.turn)
            # The ledger holds this turn under that execution (the first activity of a continued
            # or reset execution forks it): a reset from here forks from it.
            self._state.writer = decision.execution_id or self._state.writer
        return decision

    def _deadline_timer(self) -> asyncio.Future[None]:
        """The run's deadline as one timer, made again only when an update moved the deadline."""
        limit = self._state.limits.deadline_seconds
        if self._timer is None or self._timer_limit != limit:
            if self._timer is not None:
                self._timer.cancel()
            seconds = max(self._state.seconds_left(workflow.now()), 0.0)
            # Labelled in the Web UI; a timer's summary is metadata, not part of the command.
            summary = f"deadline: {limit} s after the start"
            self._timer = asyncio.ensure_future(workflow.sleep(seconds, summary=summary))
            self._timer_limit = limit
        return self._timer

    async def _act(self, decision: Decision) -> Outcome | None:
        problem = _malformed(decision)
        if problem:
            call = ToolCall(name="", arguments=clean(decision.text, MAX_TEXT_CHARS))
            self._state.take_step()
            with tracing.tool_step("", "", self._state.counters.steps) as span:
                result = self._tools.result(ok=False, error=problem)
                self._record(call, result, None, span)
            return None
        self._turn_start = self._state.counters.steps + 1
        for index, requested in enumerate(decision.tool_calls):
            stop = self._state.tripped(workflow.now()) if index else None
            if stop is not None:  # a later call of a parallel turn meets a bound
                return await self._stopped(stop)
            self._state.take_step()
            self._publish()  # the step in flight, as the progress query counts it
            call = bounded_call(requested)
            with tracing.tool_step(call.name, call.id, self._state.counters.steps) as span:
                handled = await self._tools.dispatch(call)
                if handled.args is None:  # refused unread: junk may not fill the model's context
                    call = call.model_copy(update={"arguments": call.arguments[:MAX_TEXT_CHARS]})
                self._record(call, handled.result, handled.args, span)
            if handled.outcome is not None:
                return handled.outcome
        return None

    def _record(
        self, call: ToolCall, result: ToolResult, args: ToolArgs | None, span: tracing.Span
    ) -> None:
        """The step into the transcript; its row goes with the next decide (`_unrecorded`)."""
        state = self._state
        entry = TranscriptEntry(step=state.counters.steps, call=call, result=result, args=args)
        state.transcript.append(entry)
        summary = describe_step(call, result, args)
        self._unrecorded.append(
            contracts.StepRecord(
                scope=RunScope.record_of(
                    self._run_id,
                    self._execution,
                    state.counters.steps,
                    state.counters.model_calls,
                    state.writer,
                ),
                tool=call.name,
                arguments=call.arguments,
                ok=result.ok,
                error=_step_error(result),
                insufficient=result.insufficient,
                summary=summary,
                entry=entry,
            )
        )
        outcome = "refused" if not result.ok else "insufficient" if result.insufficient else "ok"
        tracing.step_done(span, call.name, state.counters.steps, outcome, result.error)
        self._publish()

    async def _flush_records(self) -> None:
        """Record the steps no decide has recorded yet, each in its own `record_step` (the
        first may be a reset's first activity: every step's work is done, not only its own)."""
        state = self._state
        while self._unrecorded:
            step, turn = self._unrecorded[0].scope.step, self._unrecorded[0].scope.turn
            scope = RunScope.record_of(
                self._run_id, self._execution, step, turn, state.writer, state.counters.steps
            )
            record = self._unrecorded[0].model_copy(update={"scope": scope})
            recorded = await self._call(
                contracts.RECORD_STEP_ACTIVITY,
                record,
                summary=contracts.step_line(step, record.tool),
            )
            state.writer = recorded.execution_id or state.writer
            del self._unrecorded[0]

    # ------------------------------------------------------------ ending

    async def _wrap_up(self, outcome: Outcome) -> RunResult:
        state = self._state
        checked, tools = outcome.verification, self._tools
        completed = outcome.status is RunStatus.COMPLETED
        if completed and not checked.mode:  # a composed report the rules alone passed
            checked = Verification(mode=tools.verifier, verifier=tools.verifier_name)
        if completed:  # how its meaning was checked is said wherever its outcome is shown
            self._verified = checked.mode == "model"
        report = outcome.report or compose(
            state.brief, state.evidence, state.sources, outcome.stop_reason, outcome.detail
        )
        if report.composed and outcome.status is not RunStatus.COMPLETED:
            report = unaccepted(report, state.evidence, state.submitted)
        records = list(self._unrecorded)
        saved = await self._call(
            contracts.SAVE_REPORT_ACTIVITY,
            contracts.SaveReportInput(
                scope=RunScope.end_of(
                    self._run_id,
                    self._execution,
                    state.counters,
                    state.writer,
                    rows=_rows_before(records),
                ),
                status=outcome.status,
                stop_reason=outcome.stop_reason,
                report=report,
                counters=state.counters,
                finished_at=workflow.now().isoformat(),
                verification=checked,
                records=records,
            ),
            timeout=WRAP_UP_TIMEOUT,
            capped=False,
            summary=_with_records(f"save report: {outcome.status}", records),
        )
        self._unrecorded.clear()
        tracing.outcome(
            self._root, outcome.status, outcome.stop_reason, state.counters, len(state.evidence)
        )
        self._report_markdown = saved.markdown
        self._publish()
        cited = [eid for finding in report.findings for eid in finding.evidence_ids]
        families = gate.source_families(
            sorted({state.evidence[e].source_id for e in cited if e in state.evidence}),
            state.sources,
        )
        return RunResult(
            run_id=self._run_id,
            status=outcome.status,
            stop_reason=outcome.stop_reason,
            counters=state.counters,
            evidence_count=len(state.evidence),
            source_count=len(state.sources),
            independent_sources=len(families),
            report=report,
            message=outcome.detail,
            verified=self._verified,
            verifier=checked.verifier if self._verified else "",
            quotes=[
                ResultQuote(
                    id=item.id,
                    question_id=item.question_id,
                    stance=item.stance,
                    quote=item.quote,
                    url=state.sources[item.source_id].url
                    if item.source_id in state.sources
                    else "",
                )
                for item in state.evidence.values()
            ],
        )

    # ------------------------------------------------------------ plumbing

    async def _call(
        self,
        activity: contracts.Activity[In, Out],
        request: In,
        *,
        summary: str,
        timeout: timedelta = ACTIVITY_TIMEOUT,  # noqa: ASYNC109 (activity timeout)
        capped: bool = True,
        grace: timedelta = timedelta(0),
    ) -> Out:
        """Run an activity; its timeout never reaches past the run's deadline."""
        name, result_type = activity.name, activity.result
        if name == contracts.VERIFY:  # called by the finish tool, which names no timeout
            timeout = VERIFY_TIMEOUT
        total = timeout * UNCAPPED_ATTEMPTS
        heartbeat = (
            HEARTBEAT if name in HEARTBEATING | REGISTRY.activities(heartbeat=True) else None
        )
        if capped:
            left = timedelta(seconds=max(self._state.seconds_left(workflow.now()), 1.0)) + grace
            timeout, total = min(timeout, left), min(total, left)
        if self._is_local(name, request):
            try:
                local: Out = await workflow.execute_local_activity(
                    name,
                    request,
                    result_type=result_type,
                    start_to_close_timeout=min(timeout, LOCAL_TIMEOUT),
                    schedule_to_close_timeout=total,
                    retry_policy=RETRY,
                    summary=summary,
                )
            except (ApplicationError, ActivityTimeout) as failure:
                in_loop = self._started and self._outcome is None  # not start_run, not the save
                if not in_loop:
                    raise
                raise _local_failure(name, failure) from failure
            return local
        result: Out = await workflow.execute_activity(
            name,
            request,
            result_type=result_type,
            start_to_close_timeout=timeout,
            schedule_to_close_timeout=total,
            heartbeat_timeout=heartbeat,
            retry_policy=RETRY,
            summary=summary,
        )
        return result

    def _is_local(self, name: str, request: object) -> bool:
        """Ledger work, the local corpus search, a page read from the ledger or the corpus and a
        policy model run in the worker as local activities; real models and page reads that may
        go to the web stay regular activities. A tool's activity runs where its spec says."""
        if name in LEDGER_ACTIVITIES or name in REGISTRY.activities(local="always"):
            return True
        if name in REGISTRY.activities(local="when_search_is_local"):
            return self._local_search
        if name in REGISTRY.activities(local="when_page_is_local"):
            return isinstance(request, contracts.ReadPageInput) and (
                not request.fetch or url_host(request.url) in self._local_hosts
            )
        if name == contracts.DECIDE:
            return self._local_model
        return False

    def _publish(self) -> None:
        progress = self.progress()
        if self._report_markdown:  # the run ended: the Web UI shows its outcome, then its report
            workflow.set_current_details(self._ended_details(progress))
        else:
            self._publish_progress(progress)
        if not self._search_attributes:
            return
        values = (progress.status.value, progress.stop_reason.value if progress.stop_reason else "")
        if values == self._upserted:
            return  # unchanged: no command, no history event
        self._upserted = values
        updates: list[SearchAttributeUpdate[Any]] = [
            STATUS_KEY.value_set(values[0]),
            STOP_REASON_KEY.value_set(values[1]),
        ]
        if self._verified is not None:
            updates.append(VERIFIED_KEY.value_set(self._verified))
        workflow.upsert_search_attributes(updates)

    def _ended_details(self, progress: Progress) -> str:
        """The Web UI's details of an ended run: the run's own outcome (Temporal's badge says
        Completed for an incomplete or failed run too), the command that prints the report, and
        the report itself, quotes and all."""
        counters, stop = progress.counters, progress.stop_reason
        status = progress.status.value + (f": {UNVERIFIED}" if self._verified is False else "")
        return (
            f"**Research status: {status}** | stop: {stop.value if stop else '-'}"
            f" | steps {counters.steps}/{progress.limits.max_steps}"
            f" | evidence {progress.evidence_count} | tokens {counters.tokens}\n\n"
            f"The report in a terminal: `research report {self._run_id}` (`--json`: quotes and "
            f"URLs)\n\n---\n\n{for_web_ui(self._report_markdown)}"
        )

    def _publish_progress(self, progress: Progress) -> None:
        counters, limits = progress.counters, progress.limits
        workflow.set_current_details(  # each counter against its bound, as `start --wait` shows
            f"**step {counters.steps}/{limits.max_steps}** "
            f"searches {counters.searches}/{limits.max_searches} | "
            f"pages {counters.page_fetches}/{limits.max_page_fetches} | "
            f"evidence {progress.evidence_count} | tokens {counters.tokens}/{limits.max_tokens}\n\n"
            f"open questions: {', '.join(progress.open_questions) or 'none'}\n\n"
            f"last: {as_text(progress.last_action)}"  # model input is text, never markup
        )

    # ------------------------------------------------------------ steering

    @workflow.query
    def progress(self) -> Progress:
        if self._invalid:
            return Progress(run_id=self._run_id, status=RunStatus.FAILED, message=self._invalid)
        state, outcome = self._state, self._outcome
        notes = [
            StepNote(step=entry.step, action=describe_step(entry.call, entry.result, entry.args))
            for entry in state.transcript[-RECENT_STEPS:]
        ]
        return Progress(
            run_id=self._run_id,
            status=outcome.status if outcome else RunStatus.RUNNING,
            stop_reason=outcome.stop_reason if outcome else None,
            counters=state.counters,
            limits=state.limits,
            evidence_count=len(state.evidence),
            source_count=len(state.sources),
            open_questions=gate.open_questions(state.brief, state.evidence),
            last_action=notes[-1].action if notes else "",
            recent_steps=notes,
            seconds_left=int(state.seconds_left(workflow.now())),
        )

    @workflow.signal
    def add_guidance(self, guidance: GuidanceInput) -> None:
        # Only the most recent pieces of guidance are kept: they count against the context too.
        self._state.guidance = [*self._state.guidance, guidance.text][-MAX_GUIDANCE:]

    @workflow.signal
    def add_seed_urls(self, seeds: SeedUrlsInput) -> None:
        added = self._state.add_seeds(seeds.urls)
        for refused in added.refused:  # a signal cannot answer: `add_seeds` (the update) does
            workflow.logger.warning("seed URL %s refused: it %s", refused.url, refused.reason)

    @workflow.update
    def add_seeds(self, seeds: SeedUrlsInput) -> SeedsAdded:
        """Seed URLs the model may read from now on; the answer names each refused one and why."""
        return self._state.add_seeds(seeds.urls)

    @workflow.signal
    def finish_now(self, request: FinishNowInput) -> None:
        self._state.finish_requested = True
        # Operator text, shown in the report as text (escaped there), capped.
        self._state.finish_reason = clean(request.reason, MAX_REASON_CHARS)

    @workflow.update
    def extend_limits(self, request: ExtendLimitsInput) -> Limits:
        limits = self._state.extend(request)
        self._publish()  # the Web UI's details show the new limits at once
        return limits

    @extend_limits.validator
    def _validate_extend(self, request: ExtendLimitsInput) -> None:
        # A refusal is the operator's answer, not a fault: non-retryable, its one sentence as the
        # message (`temporal workflow update execute --name extend_limits` prints it as it is).
        try:
            self._state.model_copy(deep=True).extend(request)
        except ValueError as refused:
            raise ApplicationError(str(refused), type=LIMITS_REFUSED, non_retryable=True) from None


_NUMBERED = re.compile(r"^(\d+)\. (.*)$")
_UNDER_ITEM = re.compile(r"^ {3}(\S.*)$")
_FENCE = re.compile(r"^(`{3,})")


def for_web_ui(markdown: str) -> str:
    """The report as the Web UI's current details render it: that renderer shows a numbered list
    (`1. finding` with its indented verifier line) as one run-on paragraph, so each numbered item
    and each line under it becomes a paragraph of its own (`**1.** finding`). A fenced block (a
    quote) is left as it is. The report in the ledger and in `research report` is unchanged."""
    lines: list[str] = []
    in_item = False  # the lines under a numbered item, until a line that is not
    fence = ""  # the fence of the code block (a quote) the line is in: its text stays as it is
    for line in markdown.split("\n"):
        numbered, under = _NUMBERED.match(line), _UNDER_ITEM.match(line)
        opened = _FENCE.match(line)
        if fence or opened:
            lines.append(line)
            closes = fence and re.fullmatch(rf"`{{{len(fence)},}}\s*", line)
            fence = "" if closes else fence or (opened[1] if opened else "")
            in_item = False
            continue
        if numbered:
            lines += ["", f"**{numbered[1]}.** {numbered[2]}"]
        elif under and in_item:
            lines += ["", under[1]]
            continue
        else:
            lines.append(line)
        in_item = bool(numbered)
    return "\n".join(lines)


def _with_records(summary: str, records: list[contracts.StepRecord]) -> str:
    """An activity's summary, with a line per step it records ("step N: tool", as `record_step`
    is summarised: the audit reads them from a local activity's marker)."""
    return "\n".join([summary, *(contracts.step_line(r.scope.step, r.tool) for r in records)])


def _rows_before(records: list[contracts.StepRecord]) -> int | None:
    """The last step with its row written when `records` go with an activity (None: all)."""
    return records[0].scope.step - 1 if records else None


def _abandon(call: asyncio.Future[Any]) -> None:
    """Cancel a call whose answer is no longer wanted, and take its (cancelled) outcome, so asyncio
    does not log "Task exception was never retrieved" for it."""
    call.cancel()
    call.add_done_callback(lambda done: done.cancelled() or done.exception())


def _unread(call: asyncio.Future[Any]) -> None:
    """Leave a call whose answer is no longer wanted, taking its outcome when it comes."""
    call.add_done_callback(lambda done: done.cancelled() or done.exception())


def _local_failure(name: str, failure: ApplicationError | ActivityTimeout) -> ActivityError:
    """A local activity's failure as the ActivityError a regular activity's failure arrives as."""
    retry_state: RetryState | None = RetryState.TIMEOUT
    if isinstance(failure, ApplicationError):
        retry_state = RetryState.NON_RETRYABLE_FAILURE if failure.non_retryable else None
    return ActivityError(
        f"local activity {name} failed",
        scheduled_event_id=0,
        started_event_id=0,
        identity="",
        activity_type=name,
        activity_id="",
        retry_state=retry_state,
    )


def _failed(error: ActivityError, past_deadline: bool) -> Outcome:
    """How a run ends when an activity gave up (retried until the deadline, or refused at once):
    `provider_error` only on the provider's word; the deadline when the activity merely ran out of
    time; otherwise `infrastructure_error`, naming the activity and the last fault."""
    chain: list[BaseException] = []
    cause: BaseException | None = error.cause
    while cause is not None and len(chain) < 5:
        chain.append(cause)
        cause = cause.__cause__
    provider = next(
        (
            c
            for c in chain
            if isinstance(c, ApplicationError)
            and c.type in (contracts.PROVIDER_ERROR, contracts.PROVIDER_RETRYABLE)
        ),
        None,
    )
    # Temporal also stops early (retry state TIMEOUT) when the next back-off would land past the
    # deadline: that is running out of time too.
    out_of_time = past_deadline or error.retry_state == RetryState.TIMEOUT
    if provider is not None and not (out_of_time and not provider.non_retryable):
        return Outcome(
            status=RunStatus.FAILED, stop_reason=StopReason.PROVIDER_ERROR, detail=provider.message
        )
    faults = [c for c in chain if not isinstance(c, ActivityTimeout)]
    if out_of_time and (
        provider is not None or not faults
    ):  # nothing failed for good: time ran out
        detail = provider.message if provider is not None else ""
        return Outcome(status=RunStatus.INCOMPLETE, stop_reason=StopReason.DEADLINE, detail=detail)
    last = faults[-1] if faults else chain[-1] if chain else error
    fault = last.message if isinstance(last, ApplicationError) else str(last) or type(last).__name__
    kind = last.type if isinstance(last, ApplicationError) and last.type else type(last).__name__
    when = "until the deadline" if out_of_time else "and cannot be retried"
    detail = f"infrastructure: {error.activity_type} failed {when} ({kind}: {fault})"
    return Outcome(
        status=RunStatus.FAILED, stop_reason=StopReason.INFRASTRUCTURE_ERROR, detail=detail
    )


def _as_finish(report: Report) -> FinishArgs:
    return FinishArgs(
        answer=report.answer, findings=report.findings, limitations=report.limitations
    )


async def _cancellable(step: Awaitable[T]) -> T:
    """Await `step`, turning an activity cancelled by a workflow cancellation back into
    asyncio.CancelledError (the SDK reports it as ActivityError), so the run ends CANCELLED."""
    try:
        return await step
    except ActivityError as error:
        if isinstance(error.cause, CancelledError):
            raise asyncio.CancelledError from error
        raise


def _malformed(decision: Decision) -> str:
    """Why a turn's calls cannot run as they are ("" when they can): none, or more than allowed."""
    calls = decision.tool_calls
    sent = max(decision.tool_calls_sent, len(calls))
    if not calls:
        return "no tool call in this turn: call exactly one tool per turn"
    if sent > 1 and not decision.parallel_tool_calls:
        return f"{sent} tool calls in this turn: call exactly one tool per turn"
    if sent > MAX_CALLS_PER_TURN:
        return f"{sent} tool calls in this turn: call at most {MAX_CALLS_PER_TURN} tools per turn"
    return ""


def _step_error(result: ToolResult) -> str | None:
    """The ledger's step error: the tool's, with what its result adds (a failed finish's gaps)."""
    detail = None if result.data is None else result.data.error_detail()
    if result.error is None or detail is None:
        return result.error
    return clean(f"{result.error}: {detail}", 4 * MAX_ERROR_CHARS)
