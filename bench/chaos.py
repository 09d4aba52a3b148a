"""Chaos: investigations on a real Temporal dev server with several worker processes and a scripted
model that takes its time, while workers are SIGKILLed (at random, and aimed at the worker running
an in-flight activity or workflow task) and Temporal and PostgreSQL are each restarted once; then
every run is checked against an undisturbed reference. `make chaos` (not part of `make test`):

    .venv/bin/python -m bench.chaos [--runs 100] [--workers 2] [--kills 50] [--latency 1.0]

Everything runs locally (embedded PostgreSQL, `temporal server start-dev` with its database on disk
so a restart keeps the runs, worker.py processes, an OpenAI-compatible server playing the sample
brief's model). A run is checked for: the reference's status, stop reason, steps, model calls and
evidence quotes (the same rows, so no duplicate: every ledger table is keyed by its natural key);
counters equal to its ledger rows; and no model call asked again after its answer was saved (two
attempts racing before either saved are not told apart from a kill's retry). Beside the kills the
table counts the re-asks: of a saved answer (the guarantee: 0), of an answer the model gave that
was lost before it was saved (its worker killed, or the save failed: asked once more, paid twice),
and of a call cut off before the model answered; and how long an answer took to be saved once the
model had given it (the window a kill can fall in); and, per aimed kill by the kind of work it hit
(a workflow task, where local activities run, `decide`, `verify`), the dead time it cost its run,
read from the history (bench.recovery), beside the goal that a regular activity's kill costs no
more than a local one's (medians), with the sticky-queue timeouts the histories hold. The figures
are also written, dated, with the machine's cores and load, to bench/results/chaos.json; the exit
code is 1 when any run differs, a saved answer is asked again, or the undisturbed reference does
not complete.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from activities.search import index_corpus
from bench.recovery import LOCAL, Aim, dead_time, settled, sticky_timeouts, targets
from composition.ledger import open_database, open_ledger
from runtime.database import apply_migrations
from runtime.settings import PROJECT_ROOT, Settings
from runtime.temporal import DevServer, connect, start_dev_server
from starter.briefs import load_brief
from starter.figures import Measurement
from starter.local import DEMO_BRIEF
from tests.conftest import free_port
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, harborq_script, serve
from tests.fakes.postgres import restart_postgres, stop_postgres
from workflows.models import Brief, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

TAG = re.compile(r"\[(chaos-\d+)\]")
RESTARTED = {"temporal": False, "postgres": False}  # which restarts happened (for the table)
POLL = 0.5
AIM_SECONDS = 30.0  # an aimed kill waits this long for work to hit, then kills at random
SETTLE_SECONDS = 90.0  # the storm waits this long at most for an aimed kill's run to recover


# ---------------------------------------------------------------- the scripted model


@dataclass
class Ask:
    """One request for a run's turn: when it was asked and when the model answered it (None: the
    asking worker was gone first)."""

    run_id: str
    turn: int
    asked: float  # wall-clock time, comparable with the ledger's recorded_at
    request: int  # id() of the request's messages, as the fake server keeps them
    answered: float | None = None  # None too when the answer found its asker gone


class SlowModel:
    """The sample brief's model, answering after `latency` seconds; it notes when each run's turn
    was asked and answered, to prove no saved answer is asked again."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.asks: list[Ask] = []
        self.server: FakeOpenAI | None = None  # set by _serving
        self._lock = threading.Lock()

    def __call__(self, turn: int, messages: list[Message]) -> Reply:
        found = TAG.search(str(messages[:2]))
        ask = Ask(found.group(1) if found else "?", turn, time.time(), id(messages))
        with self._lock:
            self.asks.append(ask)
        time.sleep(self.latency)
        reply = harborq_script(turn, messages)
        ask.answered = time.time()
        return reply


# ---------------------------------------------------------------- the fleet


@dataclass
class Fleet:
    """`size` worker.py processes kept up: a killed one is replaced at once."""

    env: dict[str, str]
    size: int
    log: Path
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self) -> None:
        while len(self.processes) < self.size:
            self._spawn()

    def _spawn(self) -> None:
        with self.log.open("ab") as out:
            process = subprocess.Popen(
                [sys.executable, str(PROJECT_ROOT / "worker.py")],
                env=self.env,
                cwd=PROJECT_ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.processes[process.pid] = process

    def kill(self, pid: int | None = None) -> int | None:
        """SIGKILL `pid` (one of ours), or a random worker; start its replacement."""
        self.processes = {p: proc for p, proc in self.processes.items() if proc.poll() is None}
        if pid is None or pid not in self.processes:
            if not self.processes:
                return None
            pid = random.choice(sorted(self.processes))
        self.processes.pop(pid).send_signal(signal.SIGKILL)
        self._spawn()
        return pid

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


# ---------------------------------------------------------------- one chaos session


@dataclass
class Kill:
    at: float  # time.time(), comparable with the histories' event times
    kind: str  # "aimed" or "random"
    aim: Aim | None = None  # aimed: the activity attempt or workflow task it hit
    recovered_after: float | None = None  # aimed: seconds of dead time (bench.recovery)

    @property
    def activity(self) -> str:
        return self.aim.kind if self.aim else ""


@dataclass
class Outcome:
    run_id: str
    seconds: float
    result: RunResult | None
    error: str = ""


async def chaos(args: argparse.Namespace) -> int:
    measurement = Measurement.begin("chaos", "python -m bench.chaos " + _options(args))
    random.seed(args.seed)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chaos-") as scratch:
        state = Path(scratch)
        settings = Settings(
            state_dir=state,
            temporal_address=f"127.0.0.1:{free_port()}",
            ui_port=free_port(),
            task_queue="chaos",
        )
        model = SlowModel(args.latency)
        async with _stack(settings) as (database_url, server_box), _serving(model) as model_url:
            client = await connect(replace(settings, temporal_address=server_box[0].address))
            env = _worker_env(settings, database_url, server_box[0].address, model_url)
            fleet = Fleet(env, args.workers, state / "workers.log")
            fleet.start()
            try:
                brief = load_brief(DEMO_BRIEF)
                print("reference run (undisturbed) ...", flush=True)
                reference = await _run(client, settings, brief, "chaos-0")
                done = reference.result
                if done is None or (done.status, done.stop_reason) != (
                    RunStatus.COMPLETED,
                    StopReason.COVERAGE_GATE_PASSED,
                ):  # a reference that failed would make every equally failed run "match"
                    why = reference.error or (done and f"{done.status} / {done.stop_reason}")
                    print(f"the undisturbed reference run did not complete: {why}", file=sys.stderr)
                    return 1
                print(f"  {done.status} in {reference.seconds:.1f} s", flush=True)
                outcomes, kills = await _storm(args, client, settings, brief, fleet, server_box)
                slowest = max(outcomes, key=lambda o: o.seconds)
                gaps = await _gaps(client, slowest.run_id)
                run_ids = [reference.run_id, *(o.run_id for o in outcomes)]
                sticky = await _recoveries(client, kills, run_ids)
            finally:
                fleet.stop()
            problems = await _verify(database_url, reference, outcomes)
            reasks = _reasks(database_url, model)
            problems += reasks.saved
    rows = _table(args, time.monotonic() - began, reference, outcomes, kills, problems, reasks)
    rows += _recovery_rows(kills, sticky)
    _print(rows)
    for problem in problems[:30]:
        print(f"problem: {problem}")
    figures = {"rows": [{"what": what, "figure": figure} for what, figure in rows]}
    print(f"wrote {measurement.write(figures | {'problems': problems[:30]})}")
    print(f"\nthe slowest run, {slowest.run_id} ({slowest.seconds:.0f} s): waits over 3 s")
    for line in gaps:
        print(f"  {line}")
    return 1 if problems else 0


async def _storm(
    args: argparse.Namespace,
    client: Client,
    settings: Settings,
    brief: Brief,
    fleet: Fleet,
    server_box: list[DevServer],
) -> tuple[list[Outcome], list[Kill]]:
    kills: list[Kill] = []
    running: dict[str, WorkflowHandle[Any, Any]] = {}
    gate = asyncio.Semaphore(args.concurrency)
    restarted = RESTARTED

    async def one(number: int) -> Outcome:
        async with gate:
            run_id = f"chaos-{number}"
            return await _run(client, settings, brief, run_id, running)

    tasks = [asyncio.create_task(one(n)) for n in range(1, args.runs + 1)]
    started = time.monotonic()
    while not all(task.done() for task in tasks) and time.monotonic() - started < args.budget:
        await asyncio.sleep(random.uniform(args.interval / 2, args.interval * 1.5))
        if len(kills) >= args.kills:
            continue
        # the restarts come a third and two thirds of the way, in kills or in runs ended
        done = max(len(kills) / args.kills, sum(task.done() for task in tasks) / args.runs)
        if not restarted["temporal"] and done >= 1 / 3:
            restarted["temporal"] = True
            print("restarting Temporal ...", flush=True)
            server_box[0] = await _restart_temporal(settings, server_box[0])
            continue
        if not restarted["postgres"] and done >= 2 / 3:
            restarted["postgres"] = True
            print("restarting PostgreSQL ...", flush=True)
            await asyncio.to_thread(restart_postgres, settings.state_dir / "pg")
            continue
        aimed, task = len(kills) % 2 == 0, len(kills) % 4 == 2  # aimed: activity, task alike
        kill = await _kill(client, fleet, running, aimed=aimed, task=task)
        if kill is not None:
            kills.append(kill)
            print(f"kill {len(kills)}: {kill.kind} {kill.activity}", flush=True)
        if kill is not None and kill.aim is not None:
            await _settled(client, kill.aim, kill.at)
    outcomes = list(await asyncio.gather(*tasks))
    return outcomes, kills


async def _kill(
    client: Client,
    fleet: Fleet,
    running: dict[str, WorkflowHandle[Any, Any]],
    *,
    aimed: bool,
    task: bool,
) -> Kill | None:
    """Aimed: SIGKILL the worker running a started activity of an open run or, with `task`, a
    started workflow task (where local activities run; bench.recovery.targets), waiting up to
    AIM_SECONDS for one (the fleet may be starting) and taking the other kind after half of it;
    else, or when none came, a random worker."""
    began = time.monotonic()
    while aimed and time.monotonic() - began < AIM_SECONDS:
        either = time.monotonic() - began > AIM_SECONDS / 2
        aim = await _aim(client, fleet, running, task=task, either=either)
        if aim is not None:
            fleet.kill(aim.pid)
            return Kill(time.time(), "aimed", aim)
        await asyncio.sleep(POLL)
    victim = fleet.kill()
    return Kill(time.time(), "random") if victim else None


async def _aim(
    client: Client,
    fleet: Fleet,
    running: dict[str, WorkflowHandle[Any, Any]],
    *,
    task: bool,
    either: bool,
) -> Aim | None:
    """Work of an open run that one of our workers is doing now: an activity, or with `task` a
    workflow task; with `either`, whichever comes first."""
    for run_id in random.sample(sorted(running), len(running)):
        handle = running.get(run_id)  # a run may end (and leave `running`) while we look
        if handle is None:
            continue
        try:
            found = await targets(client, await handle.describe())
        except RPCError:
            continue
        for aim in found:
            if aim.pid in fleet.processes and (either or (aim.kind == LOCAL) == task):
                return aim
    return None


async def _settled(client: Client, aim: Aim, killed_at: float) -> None:
    """Wait (up to SETTLE_SECONDS) until the aimed kill's run has moved past the work it hit: the
    next kill or restart then falls outside the recovery it measures, which is the kill's own."""
    handle = client.get_workflow_handle(aim.run_id)
    while time.time() - killed_at < SETTLE_SECONDS:
        await asyncio.sleep(POLL)
        try:
            history = await handle.fetch_history()
        except RPCError:
            continue
        if settled(history.events, aim):
            return


async def _recoveries(client: Client, kills: list[Kill], run_ids: list[str]) -> list[float]:
    """Each aimed kill's dead time, from its run's history (None: it missed); and the seconds each
    workflow task of every run waited on a sticky queue before timing out there."""
    histories = {
        run_id: list((await client.get_workflow_handle(run_id).fetch_history()).events)
        for run_id in run_ids
    }
    for kill in kills:
        if kill.aim is not None:
            kill.recovered_after = dead_time(histories[kill.aim.run_id], kill.aim, kill.at)
    return [wait for events in histories.values() for wait in sticky_timeouts(events)]


async def _run(
    client: Client,
    settings: Settings,
    brief: Brief,
    run_id: str,
    running: dict[str, WorkflowHandle[Any, Any]] | None = None,
) -> Outcome:
    tagged = brief.model_copy(update={"question": f"{brief.question} [{run_id}]"})
    started = time.monotonic()
    handle = await client.start_workflow(
        ResearchWorkflow.run, tagged, id=run_id, task_queue=settings.task_queue
    )
    if running is not None:
        running[run_id] = handle
    try:
        while True:  # a result call may fail while Temporal restarts: ask again
            try:
                result: RunResult = await handle.result()
                return Outcome(run_id, time.monotonic() - started, result)
            except RPCError:
                await asyncio.sleep(POLL)
    except Exception as error:
        return Outcome(run_id, time.monotonic() - started, None, f"{type(error).__name__}: {error}")
    finally:
        if running is not None:
            running.pop(run_id, None)


async def _gaps(client: Client, run_id: str) -> list[str]:
    """Where a run waited: each history event that came more than 3 s after the one before."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    lines: list[str] = []
    previous = None
    for event in history.events:
        at = event.event_time.ToDatetime()
        if previous is not None and (at - previous[0]).total_seconds() > 3:
            waited = (at - previous[0]).total_seconds()
            lines.append(f"{waited:5.1f} s  {previous[1]} -> {EventType.Name(event.event_type)}")
        previous = (at, EventType.Name(event.event_type))
    return lines


# ---------------------------------------------------------------- restarts


async def _restart_temporal(settings: Settings, server: DevServer) -> DevServer:
    server.stop()
    await asyncio.sleep(1.0)
    return await start_dev_server(settings)  # the same database file: every run is still there


# ---------------------------------------------------------------- checks


async def _verify(database_url: str, reference: Outcome, outcomes: list[Outcome]) -> list[str]:
    problems: list[str] = []
    expected = _shape(reference.result)
    with psycopg.connect(database_url) as connection:
        ref_quotes = _quotes(connection, reference.run_id)
        for outcome in outcomes:
            if outcome.result is None:
                problems.append(f"{outcome.run_id}: no result ({outcome.error})")
                continue
            if _shape(outcome.result) != expected:
                problems.append(f"{outcome.run_id}: {_shape(outcome.result)} != {expected}")
            if _quotes(connection, outcome.run_id) != ref_quotes:
                problems.append(f"{outcome.run_id}: its evidence quotes differ")
            problems += _rows_match(connection, outcome.run_id, outcome.result)
    return problems


def _shape(result: RunResult | None) -> tuple[Any, ...]:
    assert result is not None
    c = result.counters
    return (result.status, result.stop_reason, c.steps, c.model_calls, c.searches, c.page_fetches)


def _quotes(connection: psycopg.Connection[Any], run_id: str) -> list[tuple[str, str]]:
    rows = connection.execute(
        "SELECT question_id, quote FROM research.evidence WHERE run_id = %s ORDER BY evidence_id",
        (run_id,),
    ).fetchall()
    return [(str(q), str(text)) for q, text in rows]


def _rows_match(connection: psycopg.Connection[Any], run_id: str, result: RunResult) -> list[str]:
    counts = connection.execute(
        """SELECT (SELECT count(*) FROM research.steps WHERE run_id = %(r)s),
                  (SELECT count(*) FROM research.model_calls WHERE run_id = %(r)s),
                  (SELECT count(*) FROM research.searches WHERE run_id = %(r)s),
                  (SELECT count(*) FROM research.evidence WHERE run_id = %(r)s),
                  (SELECT count(*) FROM research.reports WHERE run_id = %(r)s)""",
        {"r": run_id},
    ).fetchone()
    assert counts is not None
    c = result.counters
    wanted = (c.steps, c.model_calls, c.searches, result.evidence_count, 1)
    return [] if tuple(counts) == wanted else [f"{run_id}: rows {tuple(counts)} != {wanted}"]


@dataclass
class Reasks:
    """Each ask of a turn after its first, by what became of the ask before it."""

    saved: list[str] = field(default_factory=list)  # asked after the answer was saved: a problem
    lost_before_save: int = 0  # the model had answered; the answer was never saved
    cut_off: int = 0  # the asking worker was gone before the model answered
    save_seconds: list[float] = field(default_factory=list)  # answered -> saved, per saved turn


def _reasks(database_url: str, model: SlowModel) -> Reasks:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT run_id, turn, recorded_at FROM research.model_calls"
        ).fetchall()
    saved_at = {(str(run), int(turn)): at.timestamp() for run, turn, at in rows}
    assert model.server is not None
    gone = {id(body["messages"]) for body in model.server.hung_up}
    for ask in model.asks:  # the model answered, but the worker that asked had been killed
        if ask.request in gone:
            ask.answered = None
    by_turn: dict[tuple[str, int], list[Ask]] = {}
    for ask in sorted(model.asks, key=lambda ask: ask.asked):
        by_turn.setdefault((ask.run_id, ask.turn), []).append(ask)
    found = Reasks()
    for key, asks in by_turn.items():
        saved = saved_at.get(key)
        if saved is not None:  # the answer saved is the last one the model gave before it
            given = [a.answered for a in asks if a.answered is not None and a.answered <= saved]
            if given:
                found.save_seconds.append(saved - max(given))
        for before, again in itertools.pairwise(asks):
            if saved is not None and again.asked > saved:
                found.saved.append(
                    f"{key[0]} turn {key[1]} asked {again.asked - saved:.1f} s after it was saved"
                )
            elif before.answered is not None and before.answered <= again.asked:
                found.lost_before_save += 1
            else:
                found.cut_off += 1
    return found


# ---------------------------------------------------------------- the stack


@contextlib.asynccontextmanager
async def _stack(settings: Settings) -> AsyncIterator[tuple[str, list[DevServer]]]:
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with open_database(settings) as url:
        await asyncio.to_thread(apply_migrations, url)
        async with open_ledger(url) as ledger:
            await index_corpus(ledger, settings.corpus_dir, max_chars=settings.max_snapshot_chars)
        server = await start_dev_server(settings)
        box = [server]
        try:
            yield url, box
        finally:
            box[0].stop()
    stop_postgres(settings.state_dir / "pg")  # after a restart pgserver no longer knows it


@contextlib.asynccontextmanager
async def _serving(model: SlowModel) -> AsyncIterator[str]:
    model.server = FakeOpenAI(model)
    with serve(model.server) as url:
        yield url


def _worker_env(
    settings: Settings, database_url: str, address: str, model_url: str
) -> dict[str, str]:
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}
    env = {name: value for name, value in os.environ.items() if name in keep}
    env.update(
        TEMPORAL_ADDRESS=address,
        DATABASE_URL=database_url,
        RESEARCH_TASK_QUEUE=settings.task_queue,
        RESEARCH_STATE_DIR=str(settings.state_dir),
        RESEARCH_MODEL_PROVIDER="openai",
        OPENAI_BASE_URL=model_url,
        OPENAI_API_KEY="sk-chaos-not-a-real-key",
        RESEARCH_LANE="agent",  # the scripted model plays agent turns
        RESEARCH_SEARCH_PROVIDER="corpus",
        PYTHONPATH=str(PROJECT_ROOT),
        PYTHONUNBUFFERED="1",
    )
    return env


# ---------------------------------------------------------------- the table


def _table(
    args: argparse.Namespace,
    elapsed: float,
    reference: Outcome,
    outcomes: list[Outcome],
    kills: list[Kill],
    problems: list[str],
    reasks: Reasks,
) -> list[tuple[str, str]]:
    done = [o for o in outcomes if o.result is not None]
    aimed = [k for k in kills if k.kind == "aimed"]
    added = sum(max(o.seconds - reference.seconds, 0.0) for o in done)
    by_activity: dict[str, int] = {}
    for kill in aimed:
        by_activity[kill.activity] = by_activity.get(kill.activity, 0) + 1
    rows = [
        ("runs", f"{len(outcomes)} ({len(done)} ended, {args.workers} workers)"),
        (
            "kills",
            f"{len(kills)} ({len(aimed)} aimed: {by_activity}, {len(kills) - len(aimed)} random)",
        ),
        ("re-asks of a saved answer", str(len(reasks.saved))),
        ("re-asks of an answer lost before saving", str(reasks.lost_before_save)),
        ("re-asks of a call cut off before its answer", str(reasks.cut_off)),
        (
            "answer to saved",
            f"median {statistics.median(reasks.save_seconds) * 1000:.0f} ms, "
            f"max {max(reasks.save_seconds) * 1000:.0f} ms"
            if reasks.save_seconds
            else "-",
        ),
        (
            "restarts",
            f"Temporal {int(RESTARTED['temporal'])}, PostgreSQL {int(RESTARTED['postgres'])}",
        ),
        ("elapsed", f"{elapsed:.0f} s"),
        (
            "runs as the reference",
            f"{len(done) - len({p.split(':')[0] for p in problems})} of {len(outcomes)}",
        ),
        ("problems", str(len(problems))),
        ("reference run", f"{reference.seconds:.1f} s"),
        (
            "runs under chaos",
            f"median {statistics.median(o.seconds for o in done):.1f} s, "
            f"slowest {max(o.seconds for o in done):.1f} s"
            if done
            else "-",
        ),
        (
            "time over the reference",
            f"{added:.0f} s over all runs, {added / max(len(kills), 1):.1f} s per kill "
            "(kills, both restarts and the load of concurrent runs together)",
        ),
    ]
    return rows


def _recovery_rows(kills: list[Kill], sticky: list[float]) -> list[tuple[str, str]]:
    """Recovery per aimed kill by the kind of work it hit (bench.recovery), beside the goal: a run
    whose regular activity was killed recovers no slower than one whose workflow task was."""
    recovered: dict[str, list[float]] = {}
    missed: Counter[str] = Counter()
    for kill in kills:
        if kill.recovered_after is not None:
            recovered.setdefault(kill.activity, []).append(kill.recovered_after)
        elif kill.aim is not None:
            missed[kill.activity] += 1
    rows = []
    for kind in sorted(recovered.keys() | missed.keys(), key=lambda kind: (kind != LOCAL, kind)):
        seconds = recovered.get(kind, [])
        counted = f"{len(seconds)} kills, {missed[kind]} missed"
        figure = (
            f"median {statistics.median(seconds):.1f} s, max {max(seconds):.1f} s"
            if seconds
            else "-"
        )
        rows.append((f"recovery per aimed kill: {kind}", f"{figure} ({counted})"))
    regular = [second for kind, seconds in recovered.items() if kind != LOCAL for second in seconds]
    local = recovered.get(LOCAL, [])
    goal = "- (no kill of one of the kinds counted)"
    if regular and local:
        met = "met" if statistics.median(regular) <= statistics.median(local) else "NOT met"
        goal = (
            f"{met}: regular activities {statistics.median(regular):.1f} s, "
            f"local {statistics.median(local):.1f} s (medians)"
        )
    rows.append(("goal: regular-activity recovery no slower than local", goal))
    rows.append(
        ("sticky-queue timeouts in the histories", f"{len(sticky)}, {sum(sticky):.0f} s waited")
    )
    return rows


def _print(rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print()
    print(f"| {'chaos':{width}} | figure |")
    print(f"|{'-' * (width + 2)}|---|")
    for name, value in rows:
        print(f"| {name:{width}} | {value} |")


def _options(args: argparse.Namespace) -> str:
    return " ".join(f"--{name} {value}" for name, value in vars(args).items())


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10, help="runs in flight at once")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--interval", type=float, default=3.0, help="mean seconds between kills")
    parser.add_argument("--latency", type=float, default=1.0, help="model seconds per call")
    parser.add_argument("--budget", type=float, default=1200.0, help="seconds of chaos at most")
    parser.add_argument("--seed", type=int, default=7)
    return asyncio.run(chaos(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
