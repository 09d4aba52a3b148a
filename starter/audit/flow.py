"""Audit checks on how the run went: steps and turns, searches, which URLs were read, bounds."""

from __future__ import annotations

from collections.abc import Iterator

import workflows.lanes as lanes
from activities.ledger.review import ModelCallRow, StepRow
from starter.audit.base import AuditData, check, numbered
from workflows.cleaning import MAX_CALLS_PER_TURN
from workflows.hosts import host_allowed, url_host
from workflows.models import StopReason

MAX_SEARCH_RESULTS = 8  # workflows.tools.search_web.SearchInput.max_results


@check("steps-numbered", "steps are numbered 1..n with no gap")
def steps_numbered(data: AuditData) -> Iterator[str]:
    yield from numbered([step.step for step in data.rows.steps], "step numbers")


@check("turns-numbered", "model-call turns are numbered 1..n with no gap")
def turns_numbered(data: AuditData) -> Iterator[str]:
    yield from numbered([call.turn for call in data.rows.model_calls], "model-call turns")


@check("steps-follow-turns", "each turn's steps are its tool calls, in order, after it")
def steps_follow_turns(data: AuditData) -> Iterator[str]:
    """The fixed lane's own steps (`workflows.lanes`) follow no tool call of a model: its
    retrieval comes before any turn, its records and its submission after its composing call."""
    calls = {call.turn: call for call in data.rows.model_calls}
    turns = [step.turn for step in data.rows.steps]
    if turns != sorted(turns):
        yield "steps go back to an earlier turn"
    for turn in sorted(set(turns)):
        steps = [step for step in data.rows.steps if step.turn == turn]
        lane = [step for step in steps if _host_made(step)]
        if turn not in calls:
            if lane == steps and turn == 0:  # the fixed lane's retrieval, before any model call
                continue
            yield f"step {steps[0].step} follows turn {turn}, which the ledger does not hold"
        elif _composing(data, turn) and _composed(steps):
            continue
        elif not _turn_matches(calls[turn], steps):
            tools = ", ".join(step.tool or "(none)" for step in steps)
            yield f"turn {turn} called {_names(calls[turn])}, its steps ran {tools}"


def _turn_matches(call: ModelCallRow, steps: list[StepRow]) -> bool:
    names = [tool_call.name for tool_call in call.tool_calls]
    tools = [step.tool for step in steps]
    if tools == [""] and len(names) != 1:
        return True  # a turn with no call, or more than it may hold: one refused step
    return bool(tools) and len(tools) <= MAX_CALLS_PER_TURN and tools == names[: len(tools)]


def _host_made(step: StepRow) -> bool:
    """A step the fixed lane made (not a model's call): its call id says so."""
    return step.entry is not None and step.entry.call.id.startswith(lanes.HOST_CALL)


def _composing(data: AuditData, turn: int) -> bool:
    """Whether `turn` is the fixed lane's composing call: a compose_report call, or whatever
    reply came to the first model call after the lane's retrieval (turn 0) of a run that
    entered the fixed lane (a malformed reply may name any tool, or none)."""
    call = next(call for call in data.rows.model_calls if call.turn == turn)
    if _names(call) == lanes.COMPOSE:
        return True
    retrieved = any(step.turn == 0 for step in data.rows.steps)
    first = min(call.turn for call in data.rows.model_calls)
    return lanes.FIXED in data.rows.run.lanes and retrieved and turn == first


def _composed(steps: list[StepRow]) -> bool:
    """The steps after a composing call: the lane's records of the cited passages and its one
    submission; or the one refused step of a malformed reply, then (the fixed lane alone,
    which does not escalate) the lane's submission of what it could read of it."""
    if steps[:1] and steps[0].tool == "" and not _host_made(steps[0]):
        after = steps[1:]
        return all(_host_made(step) for step in after) and [s.tool for s in after] in (
            [],
            ["finish_research"],
        )
    tools = [step.tool for step in steps if _host_made(step)]
    records = tools[:-1] if tools[-1:] == ["finish_research"] else tools
    return len(tools) == len(steps) and set(records) <= {"record_evidence"}


def _names(call: ModelCallRow) -> str:
    return ", ".join(tool_call.name for tool_call in call.tool_calls) or "no tool"


@check("step-outcomes", "a step that succeeded has no error; a refused one says why")
def step_outcomes(data: AuditData) -> Iterator[str]:
    for step in data.rows.steps:
        if step.ok == bool(step.error):
            yield f"step {step.step}: ok is {step.ok} and the error is {step.error!r}"


@check("step-entries", "each step's transcript entry is that step (number, tool, outcome)")
def step_entries(data: AuditData) -> Iterator[str]:
    for step in data.rows.steps:
        entry = step.entry
        if entry is None:
            continue
        shown = (entry.step, entry.call.name, entry.call.arguments, entry.result.ok)
        if shown != (step.step, step.tool, step.arguments, step.ok):
            yield f"step {step.step}: its entry shows step {entry.step}, {entry.call.name!r}"


@check("searches-are-search-steps", "every search row is a search_web step that ran, and back")
def searches_are_search_steps(data: AuditData) -> Iterator[str]:
    searched = {search.step for search in data.rows.searches}
    ran = {step.step for step in data.rows.steps if step.tool == "search_web" and step.ok}
    for step in sorted(searched - ran):
        yield f"search at step {step}: that step is not a search_web step that ran"
    for step in sorted(ran - searched):
        yield f"step {step} searched, but no search is recorded for it"


@check("search-results-ranked", "each search's results are ranked 1..n, at most 8")
def search_results_ranked(data: AuditData) -> Iterator[str]:
    for search in data.rows.searches:
        ranks = [result.rank for result in search.results]
        yield from numbered(ranks, f"ranks of the search at step {search.step}")
        if len(ranks) > MAX_SEARCH_RESULTS:
            yield f"the search at step {search.step} kept {len(ranks)} results"


@check("search-results-allowed", "every search result kept is on an allowed host")
def search_results_allowed(data: AuditData) -> Iterator[str]:
    for search in data.rows.searches:
        for result in search.results:
            if not host_allowed(result.url, data.brief_hosts):
                yield f"search at step {search.step}: {result.url} is not on an allowed host"


@check("reads-were-offered", "every URL read was a seed or a result of an earlier search")
def reads_were_offered(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        found_before = any(
            result.url == source.url
            for search in data.rows.searches
            if search.searched_at <= source.fetched_at
            for result in search.results
        )
        if source.url not in data.seeds and not found_before:
            note = "" if data.history else " (without the history, signalled seeds are not known)"
            yield f"{source.source_id}: {source.url} was neither a seed nor an earlier result{note}"


@check("reads-on-allowed-hosts", "every URL read, and where it redirected, is on an allowed host")
def reads_on_allowed_hosts(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        for url in filter(None, (source.url, source.final_url)):
            if not host_allowed(url, data.brief_hosts):
                yield f"{source.source_id}: {url} is not on an allowed host"
        if source.final_url and source.host != url_host(source.final_url):
            yield f"{source.source_id}: host {source.host} is not {source.final_url}'s"


@check("evidence-after-read", "each piece of evidence was recorded after its page was read")
def evidence_after_read(data: AuditData) -> Iterator[str]:
    for evidence in data.rows.evidence:
        recorded = data.step_recording(evidence)
        read = data.step_reading(evidence.source_id)
        source = data.source(evidence.source_id)
        if recorded is None:
            if not (data.loose_last_turn and evidence is data.rows.evidence[-1]):
                yield f"{evidence.id}: no step recorded it"  # (a loose end may leave one)
        elif read is None or read.step >= recorded.step:
            yield f"{evidence.id}: recorded at step {recorded.step}, before a step read its source"
        elif source is None or source.fetched_at > evidence.recorded_at:
            yield f"{evidence.id}: recorded before {evidence.source_id} was stored"


# ---------------------------------------------------------------- bounds


@check("bound-steps", "no step beyond the step limit")
def bound_steps(data: AuditData) -> Iterator[str]:
    yield from _within(data, "steps", data.rows.run.counters.steps, data.limits.max_steps)


@check("bound-searches", "no search beyond the search limit")
def bound_searches(data: AuditData) -> Iterator[str]:
    yield from _within(data, "searches", len(data.rows.searches), data.limits.max_searches)


@check("bound-pages", "no page fetch beyond the page limit")
def bound_pages(data: AuditData) -> Iterator[str]:
    fetched, limit = len(data.rows.sources), data.limits.max_page_fetches
    yield from _within(data, "page fetches", fetched, limit)


@check("bound-finish-attempts", "no finish attempt beyond the finish limit")
def bound_finish_attempts(data: AuditData) -> Iterator[str]:
    attempts, limit = data.rows.run.counters.finish_attempts, data.limits.max_finish_attempts
    yield from _within(data, "finish attempts", attempts, limit)


@check("bound-tokens", "no model turn started after the token limit was reached")
def bound_tokens(data: AuditData) -> Iterator[str]:
    before_last = sum(call.usage().counted() for call in data.rows.model_calls[:-1])
    yield from _within(data, "tokens before the last turn", before_last, data.limits.max_tokens - 1)


def _within(data: AuditData, what: str, used: int, limit: int) -> Iterator[str]:
    if used > limit:
        note = "" if data.history else " (without the history, raised limits are not known)"
        yield f"{used} {what}, above the limit of {limit}{note}"


def _finish_attempts(entered: list[str], limit: int) -> int:
    """The finish attempts a run had: the brief's limit, or one when it ran the fixed lane
    alone (`"lane": "fixed"`), which submits what it composed once and ends there."""
    return 1 if entered == [lanes.FIXED] else limit


@check("stop-reason-holds", "the stop reason agrees with the counters and the last step")
def stop_reason_holds(data: AuditData) -> Iterator[str]:
    run, limits = data.rows.run, data.limits
    counters, last = run.counters, (data.rows.steps[-1] if data.rows.steps else None)
    finished = last is not None and last.tool == "finish_research" and last.ok
    expected: dict[str, bool] = {
        StopReason.STEP_LIMIT: counters.steps >= limits.max_steps,
        StopReason.TOKEN_LIMIT: counters.tokens >= limits.max_tokens,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED: counters.finish_attempts
        >= _finish_attempts(run.lanes, limits.max_finish_attempts),
        StopReason.COVERAGE_GATE_PASSED: finished,
    }
    if run.stop_reason is not None and not expected.get(run.stop_reason, True):
        yield f"stopped for {run.stop_reason}, which the counters and steps do not show"
    if finished and run.stop_reason != StopReason.COVERAGE_GATE_PASSED:
        yield f"the last step passed the gate, but the run stopped for {run.stop_reason}"
