"""ResearchWorkflow: the deterministic, bounded investigation loop of DESIGN.md."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import VersioningBehavior
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    # `import workflows.x as x`, not `from workflows import x`: the sandbox passes a module through
    # only when its own name is imported. `from workflows import x` imports the package (already
    # loaded inside the sandbox, with this module) and loads `x` afresh for every run: measured,
    # a run's sandbox took 56 ms of CPU to create, 15 ms with these passed through.
    import workflows.calling as calling
    import workflows.continuation as continuation
    import workflows.contracts as contracts
    import workflows.details as details
    import workflows.lanes as lanes
    import workflows.outcomes as outcomes
    import workflows.tools.finish_research as finish_research
    import workflows.tracing as tracing
    from workflows.activity import Activity, In, Out
    from workflows.cleaning import MAX_TEXT_CHARS, clean
    from workflows.composer import compose
    from workflows.continuation import Continuation
    from workflows.details import STATUS_KEY as STATUS_KEY  # the search attributes, by name
    from workflows.details import STOP_REASON_KEY as STOP_REASON_KEY
    from workflows.details import VERIFIED_KEY as VERIFIED_KEY
    from workflows.dispatch import Handled, ToolDispatcher, describe_step
    from workflows.ending import Outcome
    from workflows.models import (
        Brief,
        Decision,
        EscalateInput,
        EscalateResult,
        ExtendLimitsInput,
        FinishNowInput,
        GuidanceInput,
        Limits,
        Progress,
        RunResult,
        RunStatus,
        SeedsAdded,
        SeedUrlsInput,
        StepNote,
        StopReason,
        ToolCall,
    )
    from workflows.scope import RunScope
    from workflows.state import RunState
    from workflows.tool_base import ToolArgs
    from workflows.tools import bounded_call, check_seeds
    from workflows.transcript import ToolResult, TranscriptEntry
    from workflows.validation import INVALID_INPUT, read_brief, refuse_update, seeds_problem


LIMITS_REFUSED = "LimitsRefused"  # the error type of a refused extend_limits update
RECENT_STEPS = continuation.RECENT_ENTRIES  # step lines the progress query carries
NO_HOST = "invalid.invalid"  # the host of the stand-in brief of a run whose brief is invalid
NOT_STARTED = contracts.StartRunResult()  # what the workflow knows of its worker before start_run


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
        valid = read if isinstance(read, Brief) else Brief(question="-", allowed_hosts=[NO_HOST])
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
        self._started: contracts.StartRunResult | None = None  # what start_run recorded
        self._upserted: tuple[str, ...] | None = None
        self._verified: bool | None = None  # a completed run: was its meaning checked by a model
        self._turn_start = 0  # the first step of the latest turn (its results are shown whole)
        self._deadline = outcomes.Deadline()  # the deadline's one timer
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
                    self._started = self._tools.started = self._carried.started
                    self._publish()  # the Web UI's details of this execution from its start
                else:
                    await outcomes.cancellable(self._start())
                    await outcomes.cancellable(check_seeds(self._tools))
                self._outcome = await self._investigate()
            except asyncio.CancelledError:
                # Cancellation is not a crash: leave a composed report, then end CANCELLED.
                self._outcome = Outcome(
                    status=RunStatus.CANCELLED, stop_reason=StopReason.CANCELLED
                )
                if self._started is None:
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
        )
        self._state.writer = started.execution_id
        self._started = self._tools.started = started
        self._publish()

    # ------------------------------------------------------------ the loop

    async def _investigate(self) -> Outcome:
        state = self._state
        if lanes.starts_fixed(self._started or NOT_STARTED, state):  # `workflows.lanes`
            only = (self._started or NOT_STARTED).lane == lanes.FIXED
            with tracing.lane(lanes.FIXED, state.counters.steps) as span:
                self._turn_start = 1  # the composing call reads every passage the lane read
                outcome = await self._ended(lanes.fixed_lane(self, escalates=not only))
                tracing.lane_left(span, state.counters.steps, state.escalation)
            if outcome is not None:
                return outcome
        lanes.enter_agent(state)
        with tracing.lane(lanes.AGENT, state.counters.steps):
            while True:
                outcome = await self._ended(self._turn())
                if outcome is not None:
                    return outcome

    async def _ended(self, running: Awaitable[Outcome | None]) -> Outcome | None:
        """What a turn (or the fixed lane) came to; an ended run's last step rows are recorded
        in the loop (one the ledger refuses ends the run by cause)."""
        try:
            outcome = await outcomes.cancellable(running)
            if outcome is not None:
                await outcomes.cancellable(self._flush_records())
        except ActivityError as error:
            return outcomes.failed(error, self._state.seconds_left(workflow.now()) <= 0)
        return outcome

    async def _turn(self) -> Outcome | None:
        """Check the bounds, take one model turn, run its tool call."""
        stop = self._state.tripped(workflow.now())
        if stop is not None:
            return await self.stopped(stop)
        if self._continues():
            # Signals and updates in flight finish here (their effect is carried); a bound one
            # of them tripped (finish_now) ends the run in this execution.
            await workflow.wait_condition(workflow.all_handlers_finished)
            stop = self._state.tripped(workflow.now())
            if stop is not None:
                return await self.stopped(stop)
            await self._flush_records()  # the next execution starts from recorded steps
            self._continue_as_new()
        decision = await self.compose(agent=True)
        return decision if isinstance(decision, Outcome) else await self._act(decision)

    async def compose(self, *, agent: bool = False) -> Decision | Outcome:
        """One model call: the agent's turn, or the fixed lane's composing call."""
        decision = await self._decide(compose=not agent)  # its transcript from the ledger
        if isinstance(decision, Outcome):
            return decision
        if decision.over_context:
            return outcomes.stopped(StopReason.CONTEXT_LIMIT)
        self._state.add_usage(decision.usage)
        tracing.tokens(decision.usage.input_tokens, decision.usage.output_tokens)
        self._publish()  # the Web UI's details count the tokens as `research status` does
        return decision

    async def stopped(self, stop: StopReason) -> Outcome:
        """A bound tripped, or an operator asked to finish: the composed report may still pass."""
        if stop is not StopReason.OPERATOR_FINISH:
            return outcomes.stopped(stop)
        state = self._state
        report = compose(state.brief, state.evidence, state.sources, stop, state.finish_reason)
        return await finish_research.operator_finish(report, self._tools)

    def _continues(self) -> bool:
        """Whether the run continues as new before this turn (`workflows.continuation`)."""
        info = workflow.info()
        return continuation.should_continue(
            self._started or NOT_STARTED,
            self._state.counters.steps - self._steps_before,
            info.get_current_history_size(),
            info.get_current_history_length(),
            info.is_continue_as_new_suggested(),
        )

    def _continue_as_new(self) -> None:
        """Continue as a new execution of this run, carrying its whole state (raises)."""
        state, context = self._state, self._root.get_span_context()
        carried = Continuation(
            state=continuation.carried_state(state),
            started=self._started or NOT_STARTED,
            turn_start=self._turn_start,
            execution=(self._carried.execution + 1) if self._carried is not None else 2,
            steps_before=state.counters.steps,
            upserted=self._upserted,
            trace=continuation.TraceParent(trace_id=context.trace_id, span_id=context.span_id),
        )
        tracing.continued(self._root, state.counters, carried.execution)
        workflow.continue_as_new(args=[state.brief, carried])

    async def _decide(self, *, compose: bool = False) -> Decision | Outcome:
        state = self._state
        records = list(self._unrecorded)
        scope = RunScope.turn_of(
            self._run_id,
            self._execution,
            state.next_model_call(),
            state.counters.steps,
            state.writer,
            rows=contracts.rows_before(records),
        )
        request = state.decide_input(scope, records, self._turn_start, workflow.now())
        request.compose = compose
        call = asyncio.ensure_future(
            self._call(
                contracts.DECIDE_ACTIVITY,
                request,
                summary=contracts.with_records(f"decide: turn {request.scope.turn}", records),
            )
        )
        # Waiting on the model races the deadline (the activity's own timeout ends a little
        # later) and an operator's finish_now, which ends the run at once, as a cancel does.
        finish = asyncio.ensure_future(workflow.wait_condition(lambda: state.finish_requested))
        try:
            racing: list[asyncio.Future[Any]] = [call, self._deadline.timer(state), finish]
            await workflow.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            outcomes.abandon(call)  # the run is being cancelled: leave no model call running
            raise
        finally:
            outcomes.abandon(finish)
        if not call.done() and state.finish_requested:
            # Not cancelled: a cancel racing the answer is refused by the server (the activity
            # is no longer known); the answer, when it comes, is not read, and once the run has
            # ended its heartbeat stops the call.
            outcomes.unread(call)
            return await self.stopped(StopReason.OPERATOR_FINISH)
        if not call.done():
            outcomes.abandon(call)
            return outcomes.stopped(StopReason.DEADLINE)
        decision = call.result()
        del self._unrecorded[: len(records)]  # the decide recorded them
        if not decision.over_context:  # a model answered: count it
            self._state.count_model_call(request.scope.turn)
            # The ledger holds this turn under that execution (the first activity of a continued
            # or reset execution forks it): a reset from here forks from it.
            self._state.writer = decision.execution_id or self._state.writer
        return decision

    async def _act(self, decision: Decision) -> Outcome | None:
        problem = outcomes.malformed(decision)
        if problem:
            self.refuse(decision, problem)
            return None
        self._turn_start = self._state.counters.steps + 1
        for index, requested in enumerate(decision.tool_calls):
            stop = self._state.tripped(workflow.now()) if index else None
            if stop is not None:  # a later call of a parallel turn meets a bound
                return await self.stopped(stop)
            handled = await self.step(requested)
            if handled.outcome is not None:
                return handled.outcome
        return None

    def refuse(self, decision: Decision, problem: str) -> None:
        """A model reply no call can be run from: a refused step, its text kept as the call."""
        call = ToolCall(name="", arguments=clean(decision.text, MAX_TEXT_CHARS))
        self._state.take_step()
        with tracing.tool_step("", "", self._state.counters.steps) as span:
            self._record(call, self._tools.result(ok=False, error=problem), None, span)

    async def step(self, requested: ToolCall) -> Handled:
        """One call (the model's, or the fixed lane's): a step spent, run, recorded."""
        self._state.take_step()
        self._publish()  # the step in flight, as the progress query counts it
        call = bounded_call(requested)
        with tracing.tool_step(call.name, call.id, self._state.counters.steps) as span:
            handled = await self._tools.dispatch(call)
            if handled.args is None:  # refused unread: junk may not fill the model's context
                call = call.model_copy(update={"arguments": call.arguments[:MAX_TEXT_CHARS]})
            self._record(call, handled.result, handled.args, span)
        return handled

    def _record(
        self, call: ToolCall, result: ToolResult, args: ToolArgs | None, span: tracing.Span
    ) -> None:
        """The step into the transcript; its row goes with the next decide (`_unrecorded`)."""
        state = self._state
        entry = TranscriptEntry(step=state.counters.steps, call=call, result=result, args=args)
        state.transcript.append(entry)
        summary = describe_step(call, result, args)
        step, turn = state.counters.steps, state.counters.model_calls
        scope = RunScope.record_of(self._run_id, self._execution, step, turn, state.writer)
        self._unrecorded.append(contracts.StepRecord.of(scope, entry, summary))
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
        state, tools = self._state, self._tools
        checked = outcomes.checked(outcome, tools.verifier, tools.verifier_name)
        if outcome.status is RunStatus.COMPLETED:  # how its meaning was checked is always said
            self._verified = checked.mode == "model"
        report = state.final_report(
            outcome.status, outcome.stop_reason, outcome.report, outcome.detail
        )
        records, rows = list(self._unrecorded), contracts.rows_before(self._unrecorded)
        scope = RunScope.end_of(self._run_id, self._execution, state.counters, state.writer, rows)
        saved = await self._call(
            contracts.SAVE_REPORT_ACTIVITY,
            state.save_input(scope, outcome, report, checked, records, workflow.now()),
            summary=contracts.with_records(f"save report: {outcome.status}", records),
        )
        self._unrecorded.clear()
        tracing.outcome(
            self._root, outcome.status, outcome.stop_reason, state.counters, len(state.evidence)
        )
        self._report_markdown = saved.markdown
        self._publish()
        verifier = checked.verifier if self._verified else ""
        return state.result(self._run_id, outcome, report, self._verified, verifier)

    # ------------------------------------------------------------ plumbing

    @property
    def state(self) -> RunState:
        return self._state

    async def _call(self, activity: Activity[In, Out], request: In, *, summary: str) -> Out:
        """Run an activity as its spec says (`workflows.calling`): local or regular, its heartbeat,
        and its timeouts, which never reach past the run's deadline unless it is uncapped."""
        left = self._state.seconds_left(workflow.now())
        options = calling.options(activity, request, self._started or NOT_STARTED, left)
        in_loop = self._started is not None and self._outcome is None  # not start, not save
        return await calling.execute(activity, request, options, summary, in_loop=in_loop)

    def _publish(self) -> None:
        progress = self.progress()
        if self._report_markdown:  # the run ended: the Web UI shows its outcome, then its report
            shown = details.ended(progress, self._report_markdown, self._verified)
            workflow.set_current_details(shown)
        else:
            workflow.set_current_details(details.running(progress))
        if self._started is None or not self._started.search_attributes:
            return
        lanes = progress.lanes if self._started.lane else []  # a run recorded before lanes: none
        values = details.attribute_values(progress, lanes)
        if values == self._upserted:
            return  # unchanged: no command, no history event
        self._upserted = values
        workflow.upsert_search_attributes(details.search_attributes(values, self._verified))

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
        status = outcome.status if outcome else RunStatus.RUNNING
        stop = outcome.stop_reason if outcome else None
        return state.progress(self._run_id, status, stop, notes, workflow.now())

    @workflow.signal
    def add_guidance(self, guidance: GuidanceInput) -> None:
        self._state.add_guidance(guidance.text)

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
        self._state.request_finish(request.reason)

    @workflow.signal
    def escalate(self, request: EscalateInput) -> None:
        """Deeper work: a run in the fixed lane continues as the agent before its next step (one
        that cannot is logged: `escalate_run`, the update, answers why)."""
        lanes.escalate_signal(self._state, request.reason, self._escalation_refused())

    @workflow.update
    def escalate_run(self, request: EscalateInput) -> EscalateResult:
        """The escalate signal as an update: it answers what the run does, or refuses saying why."""
        return lanes.escalate(self._state, request.reason)

    @escalate_run.validator
    def _validate_escalate(self, request: EscalateInput) -> None:
        refuse_update(self._escalation_refused(), lanes.ESCALATION_REFUSED)

    def _escalation_refused(self) -> str:
        started = self._carried.started if self._carried is not None else self._started
        ended = self._outcome is not None or bool(self._invalid)
        return lanes.escalation_refused(self._state, started, ended, workflow.now())

    @workflow.update
    def extend_limits(self, request: ExtendLimitsInput) -> Limits:
        limits = self._state.extend(request)
        self._publish()  # the Web UI's details show the new limits at once
        return limits

    @extend_limits.validator
    def _validate_extend(self, request: ExtendLimitsInput) -> None:
        refuse_update(self._state.extend_refused(request), LIMITS_REFUSED)
