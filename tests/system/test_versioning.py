"""Worker Versioning, once end to end: a run started on build A keeps A's decisions while build B
(one decision rule changed, tests/system/build_b.py) takes the new runs; each replays against its
own build and not against the other's; `research rerun` works on runs of both builds.

Real worker processes on a real Temporal dev server and PostgreSQL; a scripted OpenAI-compatible
model per build (build A's holds its third turn, so the run is mid-flight when B is promoted).
The promotion is the operator's command: `temporal worker deployment set-current-version`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.api.workflowservice.v1 import DescribeWorkerDeploymentRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT, Settings, code_build_id
from runtime.versioning import make_current
from starter.history import history_chain
from starter.local import DEMO_BRIEF
from tests.conftest import installed_binary
from tests.fakes.openai_server import FakeOpenAI, harborq_script, serve
from tests.system.build_b import STEPS_ON_B
from tests.system.conftest import WorkerProcess, cli_env, research
from workflows.models import RunResult, RunStatus, StopReason

pytestmark = [pytest.mark.system, pytest.mark.timeout(420)]

BUILD_B = "wf-b-test"
HELD_TURN = 3  # build A's run waits here for its third model answer while B is promoted


async def test_a_run_keeps_its_build_while_the_next_build_takes_new_runs(
    dev_server: WorkflowEnvironment, embedded_pg_url: str, corpus_ledger: Ledger, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:6]
    address = dev_server.client.service_client.config.target_host
    deployment = f"research-versioning-{tag}"
    env = cli_env(
        TEMPORAL_ADDRESS=address,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-versioning-{os.getpid()}-{tag}",
        RESEARCH_DEPLOYMENT_NAME=deployment,
        RESEARCH_STATE_DIR=str(tmp_path / "state"),
        RESEARCH_MODEL_PROVIDER="openai",
        OPENAI_API_KEY="sk-test-versioning-not-a-real-key",
        PYTHONUNBUFFERED="1",
    )
    model_a, model_b = FakeOpenAI(harborq_script), FakeOpenAI(harborq_script)
    model_a.hold_turn = HELD_TURN
    on_a, on_b = f"research-on-a-{tag}", f"research-on-b-{tag}"
    with serve(model_a) as url_a, serve(model_b) as url_b:
        # Build A's run continues as new every 3 steps: its later executions, started after B
        # was promoted, stay on A (a pinned run's continue-as-new keeps its build).
        env_a = env | {"OPENAI_BASE_URL": url_a, "RESEARCH_CONTINUE_AS_NEW_STEPS": "3"}
        env_b = env | {"OPENAI_BASE_URL": url_b, "RESEARCH_BUILD_ID": BUILD_B}
        with _worker(env_a) as worker_a:  # the first build of the deployment: current at once
            assert f"(version {deployment}.{code_build_id()}, current)" in worker_a.said
            started = research(env_a, "start", str(DEMO_BRIEF), "--id", on_a)
            assert started.returncode == 0, started.stdout + started.stderr
            assert model_a.held.wait(60), "build A's run never reached its third turn"
            with _worker(env_b, "-m", "tests.system.build_b", "worker") as worker_b:
                assert "not current: pinned runs only until promoted" in worker_b.said
                _promote(address, deployment, BUILD_B)
                second = research(env_b, "start", str(DEMO_BRIEF), "--id", on_b, "--wait")
                model_a.release.set()  # build A's run goes on, B current all the while
                handle = dev_server.client.get_workflow_handle(on_a, result_type=RunResult)
                first: RunResult = await handle.result()
                reruns = {run: research(env_b, "rerun", run, "--json") for run in (on_a, on_b)}

    # Build A's run made A's decisions to the end: the scripted model's seven steps.
    assert (first.status, first.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert first.counters.steps == 7
    # Build B took the new run and its changed rule stopped it.
    assert f"Status: incomplete | Stop: step_limit\nSteps: {STEPS_ON_B} |" in second.stdout
    client = dev_server.client
    assert await _builds(client, on_a) == {code_build_id()}  # every workflow task on A
    assert len(await history_chain(client, on_a)) == 3  # in three executions
    assert await _builds(client, on_b) == {BUILD_B}
    assert len(model_a.requests) == 7 and len(model_b.requests) == STEPS_ON_B

    # Each replays against its own build, and would not against the other's.
    assert research(env, "replay", on_a).stdout.startswith(f"replays cleanly: {on_a}")
    assert _replay_on_b(env, on_b).stdout.startswith(f"replays cleanly: {on_b}")
    assert research(env, "replay", on_b).stdout.startswith(f"diverges: {on_b}")
    assert _replay_on_b(env, on_a).stdout.startswith(f"diverges: {on_a}")

    # Reruns start on the current build (B) and ask no model: B's own run again, identically;
    # A's run under B's rule, which shows what the new build changes.
    rerun_b = reruns[on_b]
    assert rerun_b.returncode == 0, rerun_b.stdout + rerun_b.stderr
    assert json.loads(rerun_b.stdout)["identical"] is True
    rerun_a = reruns[on_a]
    assert rerun_a.returncode == 1, rerun_a.stdout + rerun_a.stderr
    compared = json.loads(rerun_a.stdout)
    assert (compared["source"]["status"], compared["rerun"]["status"]) == (
        "completed",
        "incomplete",
    )
    assert len(compared["rerun"]["steps"]) == STEPS_ON_B
    assert compared["rerun"]["steps"] == compared["source"]["steps"][:STEPS_ON_B]
    assert len(model_a.requests) == 7 and len(model_b.requests) == STEPS_ON_B


class _Worker(WorkerProcess):
    @property
    def said(self) -> str:
        return "".join(self.output)


@contextmanager
def _worker(env: dict[str, str], *args: str) -> Iterator[_Worker]:
    process = _Worker(env, *args)
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()
        if process.process.stdout is not None:
            process.process.stdout.close()


def _promote(address: str, deployment: str, build_id: str) -> None:
    """What an operator runs to send new runs to a build (docs/operations.md)."""
    promoted = subprocess.run(
        [installed_binary("temporal"), "worker", "deployment", "set-current-version",
         "--address", address, "--deployment-name", deployment, "--build-id", build_id, "--yes"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert promoted.returncode == 0, promoted.stdout + promoted.stderr


def _replay_on_b(env: dict[str, str], target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.system.build_b", "replay", target],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


async def _builds(client: Client, run_id: str) -> set[str]:
    """The build ids that completed the run's workflow tasks, as its histories (every execution)
    record them."""
    return {
        event.workflow_task_completed_event_attributes.deployment_version.build_id
        for history in await history_chain(client, run_id)
        for event in history.events
        if event.HasField("workflow_task_completed_event_attributes")
    }


async def test_the_embedded_stack_takes_over_from_an_older_build(
    dev_server: WorkflowEnvironment, embedded_pg_url: str, tmp_path: Path
) -> None:
    """A later build waits for its promotion; with `take_over` (the embedded stack's own worker on
    its dev server) it routes new runs to itself, whatever build was current."""
    deployment = f"research-take-over-{uuid.uuid4().hex[:6]}"
    env = cli_env(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-take-over-{os.getpid()}",
        RESEARCH_DEPLOYMENT_NAME=deployment,
        RESEARCH_STATE_DIR=str(tmp_path / "state"),
        PYTHONUNBUFFERED="1",
    )
    new = Settings.from_env(env | {"RESEARCH_BUILD_ID": "wf-new"})
    with (
        _worker(env | {"RESEARCH_BUILD_ID": "wf-old"}) as old_worker,
        _worker(env | {"RESEARCH_BUILD_ID": "wf-new"}) as new_worker,
    ):
        assert f"(version {deployment}.wf-old, current)" in old_worker.said
        assert f"(version {deployment}.wf-new, not current" in new_worker.said
        assert await make_current(dev_server.client, new, take_over=False) is False
        assert await _current(dev_server.client, deployment) == "wf-old"
        assert await make_current(dev_server.client, new, take_over=True) is True
        assert await _current(dev_server.client, deployment) == "wf-new"


async def _current(client: Client, deployment: str) -> str:
    described = await client.workflow_service.describe_worker_deployment(
        DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=deployment)
    )
    return described.worker_deployment_info.routing_config.current_deployment_version.build_id
