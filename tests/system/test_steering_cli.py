"""Steering a run no worker serves, as an operator types it: `start` and every steering command
say at once that no worker polls the run's task queue and that the request waits for one; when a
worker starts, the run takes every request it was sent (the new limits, guidance, the seed URL,
the escalate, the cancellation). `research runs` lists the run as pending till then. A second run
under the same id is bad input (exit 2)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT
from starter.local import DEMO_BRIEF
from tests.conftest import GUARDED_PYTHONPATH, free_port
from tests.system.conftest import WorkerProcess, demo_brief, research

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

NO_WORKER = "warning: no worker is polling task queue {queue}, so {who} waits until one starts"


async def test_every_steering_command_says_no_worker_polls_and_takes_effect_when_one_does(
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    corpus_ledger: Ledger,
    dev_client: Client,
) -> None:
    cli = worker_env  # the CLI and the worker that starts later share one task queue
    run_id = f"research-steer-{uuid.uuid4().hex[:6]}"
    queue = cli["RESEARCH_TASK_QUEUE"]

    started = research(cli, "start", str(DEMO_BRIEF), "--id", run_id)
    assert started.returncode == 0, started.stderr
    assert started.stderr.startswith(NO_WORKER.format(queue=queue, who="the run")), started.stderr

    told = research(cli, "status", run_id)  # no worker to ask: it says so, it does not wait
    assert told.returncode == 0, told.stderr
    lines = told.stdout.splitlines()
    assert lines[1] == "Status: running | Stop: -"
    said = NO_WORKER.format(queue=queue, who="the run").removeprefix("warning: ")
    assert lines[2].startswith(f"Reason: {said}"), lines

    listed = research(cli, "runs", "--json", "--limit", "100")  # Temporal's, not the ledger's
    assert listed.returncode == 0, listed.stderr
    pending = next(run for run in json.loads(listed.stdout) if run["run_id"] == run_id)
    assert (pending["status"], pending["steps"], pending["question"]) == (
        "pending",
        None,
        demo_brief().question,
    )
    table = research(cli, "runs", "--status", "pending").stdout.splitlines()
    assert table[0].split()[:2] == ["RUN", "STATUS"]
    assert [line.split()[:3] for line in table[1:]] == [[run_id, "pending", "-"]]

    again = research(cli, "start", str(DEMO_BRIEF), "--id", run_id)
    assert (again.returncode, again.stderr) == (  # bad input: exit 2, as the docs say
        2,
        f"error: a run with id {run_id} already exists: pick another --id\n",
    )

    commands = [
        ["extend", run_id, "--steps", "30"],
        ["signal", run_id, "guidance", "prefer the official docs"],
        ["signal", run_id, "seed", "https://docs.harborq.example/faq.html"],
        ["signal", run_id, "escalate", "--reason", "go deeper"],
        ["cancel", run_id],
    ]
    for command in commands:
        done = research(cli, *command)
        assert done.returncode == 0, (command, done.stderr)
        warning = NO_WORKER.format(queue=queue, who=f"run {run_id}")
        assert done.stderr.startswith(warning), (command, done.stderr)
        assert "the request waits at the Temporal server and takes effect then" in done.stderr
        assert done.stderr.count("\n") == 1

    worker = spawn_worker()
    handle = dev_client.get_workflow_handle(run_id)
    try:
        with pytest.raises(WorkflowFailureError):  # cancelled
            await handle.result()
    finally:
        worker.stop()

    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    events = (await handle.fetch_history()).events
    updated = [
        event.workflow_execution_update_completed_event_attributes.outcome
        for event in events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    ]
    assert len(updated) == 1 and b'"max_steps":30' in updated[0].success.payloads[0].data
    signals = [
        event.workflow_execution_signaled_event_attributes.signal_name
        for event in events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    ]
    assert signals == ["add_guidance", "add_seed_urls", "escalate"]


@pytest.mark.timeout(300)
def test_a_paced_demo_can_be_watched_and_steered_from_another_terminal(tmp_path: Path) -> None:
    """`research demo --pace 10` (docs/operations.md, steering) prints the commands that steer
    its run from another terminal; pasted there, they watch it, raise its limits and finish it."""
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "PYTHONPATH": GUARDED_PYTHONPATH,
        "HOME": str(tmp_path),
        "RESEARCH_STATE_DIR": str(tmp_path / "state"),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "RESEARCH_UI_PORT": str(free_port()),
        "PYTHONUNBUFFERED": "1",
    }
    demo = subprocess.Popen(
        [str(Path(sys.executable).parent / "research"), "demo", "--pace", "10"],
        cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert demo.stdout is not None
        printed = [demo.stdout.readline()]
        while "Watch and steer" not in "".join(printed[:-1]) or printed[-1].startswith("  "):
            printed.append(demo.stdout.readline())  # up to the line after the steering block
        started = next(line for line in printed if line.startswith("Started run "))
        run_id = started.split()[2].rstrip(":")
        hint = next(line.strip() for line in printed if line.strip().startswith("export "))
        other = {"PATH": env["PATH"], "PYTHONPATH": GUARDED_PYTHONPATH, "HOME": str(tmp_path)}
        other |= dict(part.split("=", 1) for part in shlex.split(hint)[1:])

        watched = research(other, "status", run_id, "--json")
        extended = research(other, "extend", run_id, "--steps", "30")
        finished = research(other, "signal", run_id, "finish")
        out, err = demo.communicate(timeout=120)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()

    assert json.loads(watched.stdout)["status"] == "running", watched.stderr
    assert extended.stdout.startswith(f"Limits of run {run_id}: max_steps 30,"), extended.stderr
    assert (finished.stdout, finished.stderr) == (f"Sent finish to run {run_id}\n", "")
    assert f"research signal {run_id} guidance" in "".join(printed)
    assert "| Stop: operator_finish" in out, out + err
