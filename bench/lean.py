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
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
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
from starter.figures import Measurement
from starter.local import DEMO_BRIEF, background_worker
from starter.runs import new_run_id, start_run
from tests.fakes.hostile import record_passage
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve, tool
from workflows import context, contracts
from workflows.dispatch import ToolDispatcher
from workflows.models import Brief, Limits, RunResult, TranscriptEntry
from workflows.scope import RunScope
from workflows.state import RunState
from workflows.tools import bounded_call

DOCS = "https://docs.harborq.example"
MIRROR = "https://mirror.opendocs.example/harborq/dead-letter-queues.html"
RUNS = 5
WORKERS = int(os.environ.get("BENCH_WORKERS", "1"))  # worker processes for the concurrent runs


async def bench(concurrent: int) -> None:
    measurement = Measurement.begin("lean", f"python -m bench.lean {concurrent}")
    rows: list[tuple[str, str, str]] = []
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
                ("host overhead per step", f"{per_step:.0f} ms", f"bare loop {bare:.1f} ms")
            )
            for label, run_id in (("demo run", demo_id), ("20-step run", long_id)):
                events, size = await _history(stack, run_id)
                rows.append((f"history, {label}", f"{events} events, {size / 1000:.0f} KB", ""))
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
                    (
                        "host overhead per step, HTTP model answering at once",
                        f"{elapsed * 1000 / max(result.counters.steps, 1):.0f} ms",
                        "decide a regular activity",
                    )
                )
                rows.append(await _shape_row(stack, "HTTP model run", result.run_id))
                sent, whole = _prompt_tokens(fake.requests)
                rows.append(
                    (
                        f"prompt tokens, scripted {result.counters.steps}-step run",
                        f"{sent:,}",
                        f"no compaction {whole:,}",
                    )
                )
            slow = FakeOpenAI(_slowly(twelve_steps))
            with serve(slow) as url:
                model = _model_stack(stack, url, "bench-slow")
                async with background_worker(model), _more_workers(model, WORKERS - 1) as pids:
                    one, _ = await _makespan(model, brief, 1)
                    before = cpu.snapshot(settings.state_dir, pids)
                    many, steps = await _makespan(model, brief, concurrent)
                    used = cpu.used(before, cpu.snapshot(settings.state_dir, pids))
                rows.append(
                    (
                        f"{concurrent} runs at once vs one (1 s model)",
                        f"{many / one:.2f}x",
                        f"{many:.1f} s vs {one:.1f} s",
                    )
                )
                rows += _cpu_rows(used, steps, many)
    _print(rows)
    written = measurement.write(_figures(rows, concurrent))
    print(f"wrote {written}")


def _figures(rows: list[tuple[str, str, str]], concurrent: int) -> dict[str, Any]:
    table = [
        {"what": what, "measured": measured, "beside": beside} for what, measured, beside in rows
    ]
    return {"concurrent_runs": concurrent, "worker_processes": WORKERS, "rows": table}


# ---------------------------------------------------------------- runs


def _model_stack(stack: EmbeddedStack, url: str, queue: str) -> EmbeddedStack:
    settings = replace(
        stack.settings,
        model_provider="openai",
        openai_base_url=url,
        openai_api_key="sk-bench",
        task_queue=queue,
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


async def _shape_row(stack: EmbeddedStack, label: str, run_id: str) -> tuple[str, str, str]:
    """Workflow tasks and events per step of a run (bench.history_shape)."""
    history = await stack.client.get_workflow_handle(run_id).fetch_history()
    found = history_shape.shape(history.events)
    return (
        f"workflow tasks per step, {label}",
        f"{found.tasks_per_step:.2f}",
        found.describe(),
    )


@asynccontextmanager
async def _more_workers(stack: EmbeddedStack, count: int) -> AsyncIterator[list[int]]:
    """`count` more `worker.py` processes on the stack's task queue (their pids), stopped on the
    way out."""
    s = stack.settings
    env = {
        **os.environ,
        "DATABASE_URL": stack.database_url,
        "TEMPORAL_ADDRESS": stack.temporal_address,
        "RESEARCH_TASK_QUEUE": s.task_queue,
        "RESEARCH_MODEL_PROVIDER": s.model_provider,
        "OPENAI_BASE_URL": s.openai_base_url or "",
        "OPENAI_API_KEY": s.openai_api_key or "",
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


async def _makespan(stack: EmbeddedStack, brief: Brief, count: int) -> tuple[float, int]:
    """Seconds until `count` runs started at once have all ended, and their steps."""
    started = time.perf_counter()
    handles = [
        await start_run(stack.client, stack.settings, brief, new_run_id()) for _ in range(count)
    ]
    results: list[RunResult] = await asyncio.gather(*(handle.result() for handle in handles))
    return time.perf_counter() - started, sum(result.counters.steps for result in results)


def _cpu_rows(used: dict[str, float], steps: int, makespan: float) -> list[tuple[str, str, str]]:
    """CPU ms per step of each process group, and the makespan their sum implies on our cores
    (a floor: the CPU has to be spent somewhere, however well the work overlaps)."""
    steps = max(steps, 1)
    rows = [
        (f"  CPU per step: {group}", f"{seconds * 1000 / steps:.1f} ms", f"{seconds:.1f} s")
        for group, seconds in used.items()
    ]
    total, cores = sum(used.values()), cpu.cores()
    rows.append(
        (
            f"  CPU per step, all of these ({steps} steps)",
            f"{total * 1000 / steps:.1f} ms",
            f"floor {total / cores:.1f} s on {cores} cores (CPU / cores) vs {makespan:.1f} s",
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
        contracts.SEARCH_WEB: research.search_web,
        contracts.READ_PAGE: research.read_page,
        contracts.RECORD_EVIDENCE: research.record_evidence,
        contracts.RECORD_STEP: research.record_step,
    }

    async def call(activity: contracts.Activity[Any, Any], request: Any, **_: Any) -> Any:
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
        time.sleep(1.0)  # the fake server answers each request on its own thread
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


def _print(rows: list[tuple[str, str, str]]) -> None:
    width = max(len(row[0]) for row in rows)
    print(f"\n{'what':{width}} | measured | beside it")
    print(f"{'-' * width}-|----------|----------")
    for what, measured, beside in rows:
        print(f"{what:{width}} | {measured} | {beside}")
    print(f"\n(messages resent each turn; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC)")


if __name__ == "__main__":
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
