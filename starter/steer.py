"""Steering a running run: `signal` (guidance, seed, escalate, finish), `extend` and `cancel`.

Each checks what it was given before it connects, and none waits unbounded: while no worker
polls the run's task queue the run cannot answer, so the command says so at once (within
`NO_WORKER_CHECK`) and that the run takes the request when a worker starts.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio.client import (
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)

from runtime.settings import Settings
from starter.errors import EXIT_USAGE, CliError
from starter.progress import NO_WORKER_CHECK, no_worker_sentence, polling_workers
from starter.status import existing_run, refuse_ended
from workflows.hosts import has_credentials, seed_problem, url_host, without_credentials
from workflows.models import (
    LIMIT_CEILINGS,
    EscalateInput,
    ExtendLimitsInput,
    FinishNowInput,
    GuidanceInput,
    RefusedSeed,
    RunResult,
    SeedsAdded,
    SeedUrlsInput,
)

# A polled run answers an update within milliseconds; a busy or stuck worker gets this long.
ANSWER_SECONDS = 10.0


@dataclass(frozen=True)
class Steered:
    """A running run, and whether a worker polls its task queue (True when Temporal cannot
    tell: no warning is better than a wrong one)."""

    handle: WorkflowHandle[Any, RunResult]
    task_queue: str
    polled: bool

    def waiting(self) -> str:
        """What a request to a run no worker serves does: it waits at the server."""
        return (
            f"{no_worker_sentence(self.task_queue, 'run ' + self.handle.id)}; the request waits "
            "at the Temporal server and takes effect then"
        )


async def steered(settings: Settings, run_id: str) -> Steered:
    """The running run `run_id` (an ended one is a one-sentence error) and its workers."""
    run = await existing_run(settings, run_id)
    await refuse_ended(run)
    pollers = await polling_workers(run.client, run.task_queue, NO_WORKER_CHECK)
    return Steered(run.handle, run.task_queue, pollers is None or bool(pollers))


async def signal(settings: Settings, args: argparse.Namespace) -> int:
    from workflows.research import ResearchWorkflow

    if args.signal == "seed":
        return await add_seeds(settings, args.id, args.urls)
    if args.signal == "guidance":
        text = " ".join(args.text).strip()
        if not text:
            raise CliError("guidance needs a text for the model to read", EXIT_USAGE)
        guidance = GuidanceInput(text=text)  # its length checked too, before connecting
        run = await steered(settings, args.id)
        await run.handle.signal(ResearchWorkflow.add_guidance, guidance)
    elif args.signal == "escalate":
        request = EscalateInput(reason=args.reason)  # its length checked before connecting
        return await escalate(await steered(settings, args.id), request)
    else:
        run = await steered(settings, args.id)
        await run.handle.signal(ResearchWorkflow.finish_now, FinishNowInput(reason=args.reason))
    print(f"Sent {args.signal} to run {args.id}")
    _warn_unless_polled(run)
    return 0


async def cancel(settings: Settings, args: argparse.Namespace) -> int:
    run = await steered(settings, args.id)
    await run.handle.cancel()
    print(f"Cancellation requested for run {args.id}: it saves a partial report and ends cancelled")
    _warn_unless_polled(run)
    return 0


def _warn_unless_polled(run: Steered) -> None:
    if not run.polled:
        print(f"warning: {run.waiting()}", file=sys.stderr)


async def escalate(run: Steered, request: EscalateInput) -> int:
    """`research signal ID escalate`: the run answers what it does, or refuses in one sentence
    why it cannot (exit 1). With no worker polling, the `escalate` signal waits in the run's
    history instead, and a run that cannot act on it says why in the worker's log."""
    from workflows.research import ResearchWorkflow

    run_id = run.handle.id
    if not run.polled:
        await run.handle.signal(ResearchWorkflow.escalate, request)
        print(f"Sent escalate to run {run_id}")
        print(f"warning: {run.waiting()} (a refusal is in the worker's log)", file=sys.stderr)
        return 0
    timeout = timedelta(seconds=ANSWER_SECONDS)
    try:
        answer = await run.handle.execute_update(
            ResearchWorkflow.escalate_run, request, rpc_timeout=timeout
        )
    except WorkflowUpdateFailedError as error:
        raise CliError(f"run {run_id} refused to escalate: {_refusal(error)}") from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise _unanswered(run_id) from None
    print(f"Sent escalate to run {run_id}: {answer.message}")
    return 0


async def add_seeds(settings: Settings, run_id: str, urls: list[str]) -> int:
    """`research signal ID seed URL...`: a URL no run could read is refused before connecting
    (with none left, nothing connects)."""
    if len(_unfit(urls)) == len(urls):
        return await seed(None, run_id, urls)
    run = await steered(settings, run_id)
    return await seed(run, run_id, urls)


async def seed(run: Steered | None, run_id: str, urls: list[str]) -> int:
    """Seed URLs: the run says which it took and why it refused each other one (exit 1 when any
    was refused). A URL with credentials is never sent."""
    unfit = _unfit(urls)
    refused = [RefusedSeed(url=without_credentials(url), reason=why) for url, why in unfit]
    sent = [url for url in urls if url not in dict(unfit)]
    added = SeedsAdded(refused=refused)
    if run is not None and run.polled:
        answer = await send_seeds(run.handle, sent)
        added = answer.model_copy(update={"refused": [*refused, *answer.refused]})
    elif run is not None:
        await _signal_seeds(run, sent)
    _print_seeds(run_id, added)
    return 1 if added.refused else 0


def _unfit(urls: list[str]) -> list[tuple[str, str]]:
    """The URLs no run could read, each with why: every check the fetcher makes without the
    network, but the run's allowed hosts (the run checks those)."""
    unfit = []
    for url in urls:
        host = url_host(url)
        problem = "carries a user name or password" if has_credentials(url) else None
        problem = problem or seed_problem(url, [host] if host else [])
        if problem:
            unfit.append((url, problem))
    return unfit


async def send_seeds(handle: WorkflowHandle[Any, RunResult], urls: list[str]) -> SeedsAdded:
    """The `add_seeds` update, answered within ANSWER_SECONDS."""
    from workflows.research import ResearchWorkflow

    timeout = timedelta(seconds=ANSWER_SECONDS)
    try:
        return await handle.execute_update(
            ResearchWorkflow.add_seeds, SeedUrlsInput(urls=urls), rpc_timeout=timeout
        )
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise _unanswered(handle.id) from None


async def _signal_seeds(run: Steered, urls: list[str]) -> None:
    """No worker serves the run: the `add_seed_urls` signal waits in its history instead (the
    run checks each URL when a worker starts; the worker's log names a refused one)."""
    from workflows.research import ResearchWorkflow

    await run.handle.signal(ResearchWorkflow.add_seed_urls, SeedUrlsInput(urls=urls))
    for url in urls:
        print(f"Sent seed URL {url} to run {run.handle.id}")
    print(
        f"warning: {run.waiting()} (a URL it refuses is named in the worker's log)",
        file=sys.stderr,
    )


def _print_seeds(run_id: str, added: SeedsAdded) -> None:
    for url in added.accepted:
        print(f"Added seed URL {url} to run {run_id}")
    for url in added.known:
        print(f"Seed URL {url} was already a seed of run {run_id}")
    for refused in added.refused:
        print(f"Refused seed URL {refused.url}: it {refused.reason}", file=sys.stderr)


async def extend(settings: Settings, args: argparse.Namespace) -> int:
    request = extend_request(args)
    from workflows.research import ResearchWorkflow

    run = await steered(settings, args.id)
    # Accepted within ANSWER_SECONDS (NO_WORKER_CHECK when no worker polls: the update then
    # waits at the server, and the run takes it when a worker starts).
    accepted = timedelta(seconds=ANSWER_SECONDS) if run.polled else NO_WORKER_CHECK
    try:
        update = await run.handle.start_update(
            ResearchWorkflow.extend_limits,
            request,
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            rpc_timeout=accepted,
        )
        limits = await update.result(rpc_timeout=timedelta(seconds=ANSWER_SECONDS))
    except WorkflowUpdateFailedError as error:
        raise CliError(f"run {args.id} refused the new limits: {_refusal(error)}") from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        if run.polled:
            raise _unanswered(args.id) from None
        print(f"Sent the new limits to run {args.id}")
        print(
            f"warning: {run.waiting()} (`research status {args.id}` shows the limits it took)",
            file=sys.stderr,
        )
        return 0
    values = ", ".join(f"{name} {value}" for name, value in limits.model_dump().items())
    print(f"Limits of run {args.id}: {values}")
    return 0


def extend_request(args: argparse.Namespace) -> ExtendLimitsInput:
    """The new limits, each a whole number from 1 to its ceiling (checked before connecting)."""
    request = ExtendLimitsInput(
        max_steps=args.steps,
        max_searches=args.searches,
        max_page_fetches=args.pages,
        max_tokens=args.tokens,
        deadline_seconds=args.deadline,
    )
    asked = request.model_dump(exclude_none=True)
    if not asked:
        raise CliError(
            "extend needs at least one of --steps --searches --pages --tokens --deadline",
            EXIT_USAGE,
        )
    for name, value in asked.items():
        ceiling = LIMIT_CEILINGS[name]
        if not 1 <= value <= ceiling:
            flag = f"--{EXTEND_FLAGS[name]}"
            raise CliError(f"{flag} must be 1 to {ceiling:,}, got {value}", EXIT_USAGE)
    return request


EXTEND_FLAGS = {
    "max_steps": "steps",
    "max_searches": "searches",
    "max_page_fetches": "pages",
    "max_tokens": "tokens",
    "deadline_seconds": "deadline",
}


def _refusal(error: WorkflowUpdateFailedError) -> str:
    """The one sentence an update's validator refused with (its ApplicationError's message)."""
    return getattr(error.cause, "message", None) or str(error.cause)


def _unanswered(run_id: str) -> CliError:
    return CliError(
        f"run {run_id} did not answer within {ANSWER_SECONDS:g} s (its workers may be busy or "
        f"stopping): the request waits at the Temporal server; `research status {run_id}` shows "
        "whether it took it"
    )
