"""A long investigation: 1,000 steps, continued as new every 100, as one run.

    .venv/bin/python -m bench.long_run [STEPS]      (make bench)

On the embedded stack (its own state folder and ports), against the demo corpus, with a local
OpenAI-compatible server that answers at once from a script (decide a regular activity, the real
model's path): the sample brief with raised limits (STEPS steps, default 1,000), read three
sources, record four quotes, then search now and then and re-read stored sources until the last
turn, which finishes with the four quotes. Printed and written, dated, with the machine's cores
and load, to bench/results/long_run.json:

- how the run ended (status, stop reason) and its counters beside its limits (every bound held);
- its executions (continue-as-new), each one's events and bytes, the largest beside the goal
  "<5 MB";
- whether every execution's history replays against the code (`research replay`'s function);
- `research audit` of the run against the ledger and the whole chain of histories.

Once the transcript no longer fits the context (older results compacted), decide folds its oldest
steps into a digest (`workflows.context.fold`), so the prompt stays within max_context_chars
whatever the step count; the run may still meet a bound (max_tokens, the context) before its last
step, and then ends there with that stop reason, as any run does. Figures only: nothing here
asserts a speed or a size.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.lean import twelve_steps
from runtime.settings import Settings
from starter.audit import AuditData, run_checks
from starter.briefs import load_brief
from starter.devstack import EmbeddedStack, embedded_stack
from starter.figures import Measurement
from starter.history import history_chain, history_facts
from starter.local import DEMO_BRIEF, background_worker
from starter.replay import replay_history
from starter.review import ledger_for, load_rows
from starter.runs import new_run_id, start_run
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve, tool
from workflows.models import Brief, Limits, RunResult

GOAL_BYTES = 5_000_000
FINDS = ["redrive", "attempts", "timeout", "visibility", "dead-letter", "default", "queue"]
QUERIES = ["dead-letter queue", "visibility timeout", "redrive", "delivery attempts", "retention"]
# The context each turn may show. Bounded at 200,000 characters, a turn costs this model about
# 28,000 tokens, so the token bound (10M, its ceiling) ended the 1,000-step run at step 358
# (measured); at 50,000 a turn costs about 9,600 (9.6M over 1,000 steps, measured). 40,000 leaves
# the token bound a margin.
CONTEXT_CHARS = 40_000


def long_script(steps: int) -> Any:
    """The twelve-step reader's first eleven turns, then searches (every 12th turn, within the
    search limit) and re-reads of its three sources, and its finish on the last turn."""

    def answer(turn: int, sent: list[Message]) -> Reply:
        if turn <= 11:
            return twelve_steps(turn, sent)
        if turn >= steps:
            return twelve_steps(12, sent)  # the finish, citing the four quotes
        if turn % 12 == 0:
            return tool("search_web", query=QUERIES[turn // 12 % len(QUERIES)])
        source = f"S{turn % 3 + 1}"
        return tool("read_page", source_id=source, find=FINDS[turn % len(FINDS)])

    return answer


def long_brief(brief: Brief, steps: int) -> Brief:
    limits = Limits(
        max_steps=steps,
        max_searches=100,
        max_page_fetches=20,
        max_tokens=10_000_000,
        deadline_seconds=3_600,
        max_context_chars=CONTEXT_CHARS,
    )
    return brief.model_copy(update={"limits": limits})


async def bench(steps: int) -> None:
    measurement = Measurement.begin("long_run", f"python -m bench.long_run {steps}")
    with tempfile.TemporaryDirectory(prefix="bench-long-") as scratch:
        settings = replace(
            Settings.from_env(),
            state_dir=Path(scratch),
            temporal_address="127.0.0.1:27994",
            ui_port=28994,
            search_provider="corpus",
        )
        async with embedded_stack(settings) as stack:
            brief = long_brief(load_brief(DEMO_BRIEF), steps)
            with serve(FakeOpenAI(long_script(steps))) as url:
                model = _model_stack(stack, url)
                async with background_worker(model):
                    run_id = new_run_id()
                    began = time.perf_counter()
                    handle = await start_run(model.client, model.settings, brief, run_id)
                    result: RunResult = await handle.result()
                    elapsed = time.perf_counter() - began
            figures = await _figures(model, run_id, brief, result, elapsed)
    _print(figures)
    written = measurement.write(figures)
    print(f"wrote {written}")


def _model_stack(stack: EmbeddedStack, url: str) -> EmbeddedStack:
    settings = replace(
        stack.settings,
        model_provider="openai",
        openai_base_url=url,
        openai_api_key="sk-bench",
        task_queue="bench-long",
        lane="agent",  # a long agent loop: the scripted model plays agent turns
    )
    return replace(stack, settings=settings)


async def _figures(
    stack: EmbeddedStack, run_id: str, brief: Brief, result: RunResult, elapsed: float
) -> dict[str, Any]:
    histories = await history_chain(stack.client, run_id)
    sizes = [len(history.to_json()) for history in histories]
    replayed = [await replay_history(history) for history in histories]
    async with ledger_for(stack.settings) as ledger:
        rows = await load_rows(ledger, run_id)
    audit = run_checks(AuditData(rows, history_facts(histories)))
    limits, counters = brief.limits, result.counters
    shown = [call.context_chars for call in rows.model_calls]
    latest = histories[-1].events[0].workflow_execution_started_event_attributes
    latest_id = latest.original_execution_run_id
    bounds = {
        "steps": (counters.steps, limits.max_steps),
        "searches": (counters.searches, limits.max_searches),
        "page_fetches": (counters.page_fetches, limits.max_page_fetches),
        "tokens": (counters.tokens, limits.max_tokens),
    }
    return {
        "run_id": run_id,
        "status": result.status.value,
        "stop_reason": result.stop_reason.value,
        "steps": counters.steps,
        "model_calls": counters.model_calls,
        "evidence": result.evidence_count,
        "bounds": {name: {"used": used, "limit": limit} for name, (used, limit) in bounds.items()},
        "bounds_held": all(used <= limit for used, limit in bounds.values()),
        "executions": len(histories),
        "events": [len(history.events) for history in histories],
        "history_bytes": sizes,
        "largest_history_bytes": max(sizes),
        "goal_largest_history_bytes": GOAL_BYTES,
        "largest_under_goal": max(sizes) < GOAL_BYTES,
        "replayed": sum(problem is None for problem in replayed),
        "replay_problems": [problem for problem in replayed if problem is not None],
        "audit_checks": len(audit),
        "audit_failed": [r.check.name for r in audit if r.failed],
        "ledger_steps": len(rows.steps),
        # What each turn showed (folded once over the budget: `workflows.context.fold`).
        "context_chars_last_turn": shown[-1] if shown else 0,
        "context_chars_max": max(shown, default=0),
        "context_chars_limit": limits.max_context_chars,
        "tokens_per_step": round(counters.tokens / max(counters.steps, 1)),
        "ledger_execution_is_latest": rows.run.execution_id == latest_id,
        "seconds": round(elapsed, 1),
        "ms_per_step": round(elapsed * 1000 / max(counters.steps, 1), 1),
    }


def _print(figures: dict[str, Any]) -> None:
    steps, executions = figures["steps"], figures["executions"]
    largest = figures["largest_history_bytes"]
    rows = [
        ("run", f"{figures['status']} ({figures['stop_reason']})", f"{steps} steps"),
        ("bounds held", str(figures["bounds_held"]), _bounds(figures["bounds"])),
        ("executions (continue-as-new every 100 steps)", str(executions), ""),
        (
            "largest execution history",
            f"{largest / 1_000_000:.2f} MB",
            f"goal <5 MB: {'met' if figures['largest_under_goal'] else 'NOT met'}",
        ),
        ("histories that replay", f"{figures['replayed']} of {executions}", ""),
        (
            "audit (ledger vs the chain of histories)",
            f"{figures['audit_checks'] - len(figures['audit_failed'])} of "
            f"{figures['audit_checks']} ok",
            ", ".join(figures["audit_failed"]) or "",
        ),
        (
            "transcript shown, largest turn",
            f"{figures['context_chars_max']:,} chars",
            f"of max_context_chars {figures['context_chars_limit']:,}; last turn "
            f"{figures['context_chars_last_turn']:,}; {figures['tokens_per_step']:,} tokens a step",
        ),
        ("time", f"{figures['seconds']} s", f"{figures['ms_per_step']} ms a step"),
    ]
    width = max(len(row[0]) for row in rows)
    print(f"\n{'what':{width}} | measured | beside it")
    for what, measured, beside in rows:
        print(f"{what:{width}} | {measured} | {beside}")
    events = ", ".join(
        f"{e} ev / {b / 1000:.0f} KB"
        for e, b in zip(figures["events"], figures["history_bytes"], strict=True)
    )
    print(f"executions: {events}")


def _bounds(bounds: dict[str, dict[str, int]]) -> str:
    return ", ".join(f"{name} {b['used']}/{b['limit']}" for name, b in bounds.items())


if __name__ == "__main__":
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000))
