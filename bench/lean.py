"""How lean the loop is: the four figures of a step's cost, in one run, as one table.

    .venv/bin/python -m bench.lean [CONCURRENT]      (make bench)

On the embedded stack (its own state folder and ports), against the demo corpus:
1. host overhead per step: offline runs of the sample brief (the model costs nothing; the offline
   policy decides in a local activity), seconds per step; beside it the same tools and policy
   called in a bare loop without Temporal; and the same for a local OpenAI-compatible server that
   answers at once (decide a regular activity, the real model's path);
2. workflow history of the demo run and of a 20-step run (events and bytes);
3. prompt tokens (characters / 4, tool schemas included) sent over a scripted 12-step
   investigation by a local OpenAI-compatible server, and what the same turns would send with no
   compaction of older results;
4. makespan of CONCURRENT runs at once (default 100) against the same server answering each call
   after 1 s, over the makespan of one run (BENCH_WORKERS=N: N worker processes, default 1); and
   the CPU those runs cost, per step and per process (the dev server, PostgreSQL, the workers,
   this process), with the makespan that CPU alone implies on this machine's cores.
Figures only: nothing here asserts a speed. The table is printed and written, dated, with the
machine's cores and load, to bench/results/lean.json (starter.figures).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import replace
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

from activities.model import ModelActivities
from activities.pages.fetch import build_http_client
from activities.research import ResearchActivities
from activities.search import CorpusSearch
from baselines.offline import decide_offline
from bench import cpu, history_shape
from runtime.settings import PROJECT_ROOT, Settings
from starter.briefs import load_brief
from starter.devstack import EmbeddedStack, embedded_stack
from starter.figures import AtMost, Measurement, Row, print_table
from starter.local import DEMO_BRIEF, background_worker
from starter.runs import new_run_id, start_run
from tests.fakes.hostile import record_passage
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve, tool
from workflows import context, contracts
from workflows.activity import Activity
from workflows.dispatch import ToolDispatcher
from workflows.models import Brief, Limits, RunResult
from workflows.scope import RunScope
from workflows.state import RunState
from workflows.tools import bounded_call
from workflows.tools.read_page import READ_PAGE
from workflows.tools.record_evidence import RECORD_EVIDENCE
from workflows.tools.search_web import SEARCH_WEB
from workflows.transcript import TranscriptEntry
from workflows.verification import VERIFY

DOCS = "https://docs.harborq.example"
MIRROR = "https://mirror.opendocs.example/harborq/dead-letter-queues.html"
RUNS = 5
# The concurrent runs are measured on each of these counts of worker processes (`worker.py`).
WORKERS = tuple(int(n) for n in os.environ.get("BENCH_WORKERS", "1 2").split())
MODEL_SECONDS = 1.0  # the concurrent runs' model answers each call after this long
RSS_EVERY = 0.5  # seconds between samples of the workers' resident memory
# Issue 26's figure for the worker with its client and fake model: the worker's goal is half.
WORKER_BEFORE_MS = 33.1


async def bench(concurrent: int) -> None:
    measurement = Measurement.begin("lean", f"python -m bench.lean {concurrent}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-lean-") as scratch:
        settings = replace(
            Settings.from_env(),
            state_dir=Path(scratch),
            temporal_address="127.0.0.1:27996",
            ui_port=28996,
            search_provider="corpus",
        )
        async with embedded_stack(settings) as stack:
            brief = load_brief(DEMO_BRIEF)
            offline = replace(stack, settings=replace(stack.settings, model_provider="offline"))
            async with background_worker(offline):
                per_step, demo_id = await _offline_steps(offline, brief)
                long_id = await _run(offline, _twenty_steps(brief))
            bare = await _bare_loop(stack, brief)
            rows.append(
                Row("host overhead per step", f"{per_step:.0f} ms", f"bare loop {bare:.1f} ms")
            )
            for label, run_id in (("demo run", demo_id), ("20-step run", long_id)):
                events, size = await _history(stack, run_id)
                goal = AtMost(300, "KB") if label == "20-step run" else None
                rows.append(
                    Row(f"history, {label}", f"{events} events, {size / 1000:.0f} KB", goal=goal,
                        value=size / 1000)
                )  # fmt: skip
            rows.append(await _shape_row(stack, "offline demo run", demo_id))
            fake = FakeOpenAI(twelve_steps)
            with serve(fake) as url:
                model = _model_stack(stack, url, "bench-model")
                async with background_worker(model):
                    await _run(model, brief)  # warm: the first run loads the openai client
                    fake.requests.clear()
                    started = time.perf_counter()
                    result = await _run(model, brief, result=True)
                    elapsed = time.perf_counter() - started
                rows.append(
                    Row(
                        "host overhead per step, HTTP model answering at once",
                        f"{elapsed * 1000 / max(result.counters.steps, 1):.0f} ms",
                        "decide a regular activity",
                    )
                )
                rows.append(await _shape_row(stack, "HTTP model run", result.run_id))
                sent, whole = _prompt_tokens(fake.requests)
                rows.append(
                    Row(
                        f"prompt tokens, scripted {result.counters.steps}-step run",
                        f"{sent:,}",
                        f"no compaction {whole:,}",
                    )
                )
            with _model_process() as (url, model_pid):
                for processes in WORKERS:
                    rows += await _concurrent(stack, brief, url, model_pid, processes, concurrent)
    print_table(rows, measurement)
    written = measurement.write(_figures(rows, concurrent))
    print(f"wrote {written}")


def _figures(rows: list[Row], concurrent: int) -> dict[str, Any]:
    return {
        "concurrent_runs": concurrent,
        "worker_processes": list(WORKERS),
        "rows": [row.as_dict() for row in rows],
    }


# ---------------------------------------------------------------- runs


def _model_stack(stack: EmbeddedStack, url: str, queue: str) -> EmbeddedStack:
    settings = replace(
        stack.settings,
        model_provider="openai",
        openai_base_url=url,
        openai_api_key="sk-bench",
        task_queue=queue,
        lane="agent",  # the loop's cost: the scripted model plays agent turns
    )
    return replace(stack, settings=settings)


async def _run(stack: EmbeddedStack, brief: Brief, *, result: bool = False) -> Any:
    run_id = new_run_id()
    done: RunResult = await (await start_run(stack.client, stack.settings, brief, run_id)).result()
    return done if result else run_id


async def _offline_steps(stack: EmbeddedStack, brief: Brief) -> tuple[float, str]:
    per_step, run_id = [], ""
    for _ in range(RUNS):
        started = time.perf_counter()
        run_id = new_run_id()
        handle = await start_run(stack.client, stack.settings, brief, run_id)
        done: RunResult = await handle.result()
        per_step.append((time.perf_counter() - started) * 1000 / max(done.counters.steps, 1))
    return statistics.median(per_step), run_id


def _twenty_steps(brief: Brief) -> Brief:
    """The sample brief with a question the corpus cannot answer: it runs to its step limit."""
    questions = [*brief.questions, brief.questions[0].model_copy(
        update={"id": "Q9", "text": "Which Harbor Queue release added quantum-safe signatures?"}
    )]  # fmt: skip
    return brief.model_copy(update={"questions": questions, "limits": Limits(max_steps=20)})


async def _history(stack: EmbeddedStack, run_id: str) -> tuple[int, int]:
    history = await stack.client.get_workflow_handle(run_id).fetch_history()
    return len(history.events), len(history.to_json())


async def _shape_row(stack: EmbeddedStack, label: str, run_id: str) -> Row:
    """Workflow tasks and events per step of a run (bench.history_shape); the goal: one task a
    step, except a step that waits on the verifier (a model call of its own)."""
    history = await stack.client.get_workflow_handle(run_id).fetch_history()
    found = history_shape.shape(history.events)
    return Row(
        f"workflow tasks per step, {label}",
        f"{found.tasks_per_step:.2f}",
        found.describe(),
        goal="one task a step (a verifier's wait apart)",
        met=set(found.extra_by_activity) <= {VERIFY},
    )


@asynccontextmanager
async def _worker_processes(stack: EmbeddedStack, count: int) -> AsyncIterator[list[int]]:
    """`count` `worker.py` processes on the stack's task queue (their pids), stopped on the way
    out."""
    s = stack.settings
    env = {
        **os.environ,
        "DATABASE_URL": stack.database_url,
        "TEMPORAL_ADDRESS": stack.temporal_address,
        "RESEARCH_TASK_QUEUE": s.task_queue,
        "RESEARCH_MODEL_PROVIDER": s.model_provider,
        "OPENAI_BASE_URL": s.openai_base_url or "",
        "OPENAI_API_KEY": s.openai_api_key or "",
        "RESEARCH_LANE": s.lane,
        "RESEARCH_CORPUS_DIR": str(s.corpus_dir),
    }
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(PROJECT_ROOT / "worker.py"),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            await worker.stdout.readline()  # "worker ready on task queue ..."
        yield [worker.pid for worker in workers]
    finally:
        for worker in workers:
            worker.terminate()
            await worker.wait()


@contextmanager
def _model_process() -> Iterator[tuple[str, int]]:
    """The scripted model answering each call after MODEL_SECONDS, in a process of its own (its
    URL and pid), so its CPU is not counted as the worker's or the client's."""
    spawn = multiprocessing.get_context("spawn")
    theirs, ours = spawn.Pipe()
    stop = spawn.Event()
    server = spawn.Process(target=_serve_model, args=(theirs, stop), daemon=True)
    server.start()
    try:
        url = str(ours.recv())
        assert server.pid is not None
        yield url, server.pid
    finally:
        stop.set()
        server.join(10)
        if server.is_alive():
            server.kill()


def _serve_model(ready: Connection, stop: EventType) -> None:
    with serve(FakeOpenAI(_slowly(twelve_steps))) as url:
        ready.send(url)
        stop.wait()


async def _concurrent(
    stack: EmbeddedStack, brief: Brief, url: str, model_pid: int, processes: int, concurrent: int
) -> list[Row]:
    """`concurrent` runs at once vs one run on `processes` worker processes: the ratio, the CPU
    per step of each process group and the workers' memory per run in flight."""
    model = _model_stack(stack, url, f"bench-slow-{processes}")
    state_dir = stack.settings.state_dir
    async with _worker_processes(model, processes) as pids:
        await _makespan(model, brief, processes)  # warm: a worker's first run loads its clients
        one, _ = await _makespan(model, brief, 1)
        idle = cpu.resident(pids)
        before = cpu.snapshot(state_dir, pids, {cpu.MODEL: model_pid})
        done = asyncio.Event()
        peak = asyncio.create_task(_peak_resident(pids, done))
        many, steps = await _makespan(model, brief, concurrent)
        used = cpu.used(before, cpu.snapshot(state_dir, pids, {cpu.MODEL: model_pid}))
        done.set()
        resident = await peak
    on = f"{processes} worker process{'es' if processes > 1 else ''}"
    rows = [
        Row(
            f"{concurrent} runs at once vs one, {on} ({MODEL_SECONDS:g} s model)",
            f"{many / one:.2f}x",
            f"{many:.1f} s vs {one:.1f} s",
            goal=AtMost(1.5),
            value=many / one,
        ),
        Row(
            f"  worker memory per run in flight, {on}",
            f"{(resident - idle) / concurrent / 1e6:.2f} MB",
            f"peak RSS {resident / 1e6:.0f} MB vs {idle / 1e6:.0f} MB idle, {concurrent} in flight",
        ),
    ]
    return rows + _cpu_rows(used, steps, many, on)


async def _peak_resident(pids: list[int], done: asyncio.Event) -> int:
    """The largest resident memory (bytes) the processes held together until `done`."""
    peak = cpu.resident(pids)
    while not done.is_set():
        with suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), RSS_EVERY)
        peak = max(peak, cpu.resident(pids))
    return peak


async def _makespan(stack: EmbeddedStack, brief: Brief, count: int) -> tuple[float, int]:
    """Seconds until `count` runs started at once have all ended, and their steps."""
    started = time.perf_counter()
    handles = [
        await start_run(stack.client, stack.settings, brief, new_run_id()) for _ in range(count)
    ]
    results: list[RunResult] = await asyncio.gather(*(handle.result() for handle in handles))
    return time.perf_counter() - started, sum(result.counters.steps for result in results)


def _cpu_rows(used: dict[str, float], steps: int, makespan: float, on: str) -> list[Row]:
    """CPU ms per step of each process group, the workers' together, and the makespan the sum
    implies on our cores (a floor: the CPU has to be spent somewhere, however well the work
    overlaps)."""
    steps = max(steps, 1)
    rows = [
        Row(f"  CPU per step: {group}", f"{seconds * 1000 / steps:.1f} ms", f"{seconds:.1f} s")
        for group, seconds in used.items()
    ]
    workers = sum(seconds for group, seconds in used.items() if group.startswith(cpu.WORKER))
    rows.append(
        Row(
            f"  CPU per step, the worker processes, {on}",
            f"{workers * 1000 / steps:.1f} ms",
            f"half the issue's {WORKER_BEFORE_MS} ms (worker, client and model then)",
            goal=AtMost(WORKER_BEFORE_MS / 2, "ms"),
            value=workers * 1000 / steps,
        )
    )
    total, cores = sum(used.values()), cpu.cores()
    rows.append(
        Row(
            f"  CPU per step, all of these, {on} ({steps} steps)",
            f"{total * 1000 / steps:.1f} ms",
            f"floor {total / cores:.1f} s on {cores} cores (CPU / cores) vs {makespan:.1f} s",
            goal=AtMost(20, "ms"),
            value=total * 1000 / steps,
        )
    )
    return rows


# ---------------------------------------------------------------- the bare loop


async def _bare_loop(stack: EmbeddedStack, brief: Brief) -> float:
    """The offline policy and the real activities in a plain loop: what a step costs without
    Temporal (median ms per step over RUNS runs)."""
    settings = replace(stack.settings, model_provider="offline")
    http = build_http_client(settings.fetch_options())
    research = ResearchActivities(
        stack.ledger, http, settings.research_options(), CorpusSearch(stack.ledger)
    )
    model = ModelActivities(settings.chat_options(), stack.ledger, None, decide_offline)
    per_step = []
    try:
        for _ in range(RUNS):
            started = time.perf_counter()
            steps = await _one_bare_run(research, model, brief)
            per_step.append((time.perf_counter() - started) * 1000 / steps)
    finally:
        await http.aclose()
    return statistics.median(per_step)


async def _one_bare_run(research: ResearchActivities, model: ModelActivities, brief: Brief) -> int:
    run_id = f"bare-{new_run_id()}"
    state = RunState.begin(brief, datetime.now(UTC))
    functions: dict[str, Callable[[Any], Any]] = {
        contracts.START_RUN: research.start_run,
        SEARCH_WEB: research.search_web,
        READ_PAGE: research.read_page,
        RECORD_EVIDENCE: research.record_evidence,
        contracts.RECORD_STEP: research.record_step,
    }

    async def call(activity: Activity[Any, Any], request: Any, **_: Any) -> Any:
        return await functions[activity.name](request)

    tools = ToolDispatcher(state, run_id, "", call, lambda: datetime.now(UTC))
    await call(
        contracts.START_RUN_ACTIVITY,
        contracts.StartRunInput(
            scope=RunScope.start(run_id, ""), brief=brief, started_at=state.started_at.isoformat()
        ),
    )
    while state.tripped(datetime.now(UTC)) is None:
        transcript = context.compact(state.transcript, state.limits.max_context_chars)
        turn, steps = state.next_model_call(), state.counters.steps
        request = contracts.DecideInput(
            scope=RunScope.turn_of(run_id, "", turn, steps, ""),
            brief=brief,
            transcript=transcript,
            budget=state.budget(datetime.now(UTC)),
            context_chars=context.size(transcript),
        )
        decision = await model.decide(request)
        state.count_model_call(turn)
        state.add_usage(decision.usage)
        state.take_step()
        call_ = bounded_call(decision.tool_calls[0])
        handled = await tools.dispatch(call_)
        state.transcript.append(
            TranscriptEntry(step=state.counters.steps, call=call_, result=handled.result,
                            args=handled.args)
        )  # fmt: skip
        await call(
            contracts.RECORD_STEP_ACTIVITY,
            contracts.StepRecord(
                scope=RunScope.record_of(
                    run_id, "", state.counters.steps, state.counters.model_calls, ""
                ),
                tool=call_.name,
                arguments=call_.arguments,
                ok=handled.result.ok,
            ),
        )
        if handled.outcome is not None:
            break
    return max(state.counters.steps, 1)


# ---------------------------------------------------------------- the scripted model


def twelve_steps(turn: int, sent: list[Message]) -> Reply:
    """A competent reader of the sample brief: 12 steps, three sources."""
    dead_letter = f"{DOCS}/guides/dead-letter-queues.html"
    visibility = f"{DOCS}/concepts/visibility-timeout.html"
    steps: dict[int, Callable[[], Reply]] = {
        1: lambda: tool("search_web", query="dead-letter queue delivery attempts"),
        2: lambda: tool("read_page", url=dead_letter),
        3: lambda: record_passage("Q1", "S1", "max_deliveries", "5 delivery attempts by default.")(
            sent
        ),
        4: lambda: tool("search_web", query="default visibility timeout"),
        5: lambda: tool("read_page", url=visibility),
        6: lambda: record_passage("Q2", "S2", "default visibility timeout is", "30 seconds.")(sent),
        7: lambda: tool("search_web", query="replay dead-letter queue redrive"),
        8: lambda: tool("read_page", source_id="S1", find="redrive"),
        9: lambda: record_passage("Q3", "S1", "redrive", "Messages can be replayed (redrive).")(
            sent
        ),
        10: lambda: tool("read_page", url=MIRROR),
        11: lambda: record_passage("Q1", "S3", "max_deliveries", "5 delivery attempts by default.")(
            sent
        ),
    }
    if turn in steps:
        return steps[turn]()
    return tool(
        "finish_research",
        answer="A message is dead-lettered after 5 delivery attempts; the default visibility "
        "timeout is 30 seconds; dead-lettered messages can be replayed.",
        findings=[
            {"text": "5 delivery attempts by default.", "evidence_ids": ["E001", "E004"]},
            {"text": "The default visibility timeout is 30 seconds.", "evidence_ids": ["E002"]},
            {"text": "Messages can be replayed (redrive).", "evidence_ids": ["E003"]},
        ],
    )


def _slowly(script: Callable[[int, list[Message]], Reply]) -> Callable[[int, list[Message]], Reply]:
    def answer(turn: int, sent: list[Message]) -> Reply:
        time.sleep(MODEL_SECONDS)  # the fake server answers each request on its own thread
        return script(turn, sent)

    return answer


def _prompt_tokens(requests: list[dict[str, Any]]) -> tuple[int, int]:
    """Characters / 4 of what was sent (messages and tools), and of the same turns with every
    result rendered in full (the last request's conversation, cut at each turn)."""
    sent = sum(
        len(json.dumps(r["messages"])) + len(json.dumps(r.get("tools", []))) for r in requests
    )
    return sent // 4, _uncompacted(requests) // 4


def _uncompacted(requests: list[dict[str, Any]]) -> int:
    """Each turn's newest tool result is sent whole; put those back in place of older ones."""
    whole = [r["messages"][-1] for r in requests[1:] if r["messages"][-1].get("role") == "tool"]
    total = 0
    for request in requests:
        results = iter(whole)
        conversation = [
            next(results, message) if message.get("role") == "tool" else message
            for message in request["messages"]
        ]
        total += len(json.dumps(conversation)) + len(json.dumps(request.get("tools", [])))
    return total


if __name__ == "__main__":
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
