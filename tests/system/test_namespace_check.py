"""A worker on a namespace without the search attributes a run writes stops at start-up with one
sentence saying how to add them, instead of serving runs that each fail at their last workflow
task (when the outcome is written to `ResearchVerified`, say)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from temporalio.testing import WorkflowEnvironment

from runtime.settings import PROJECT_ROOT
from runtime.temporal import SEARCH_ATTRIBUTES
from tests.conftest import installed_binary


@pytest.fixture(scope="module")
async def bare_server() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server whose namespace has only the first of the run's search attributes."""
    name, kind = SEARCH_ATTRIBUTES[0].split("=")
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=installed_binary("temporal"),
        dev_server_log_level="error",
        dev_server_extra_args=["--search-attribute", f"{name}={kind}"],
    )
    try:
        yield env
    finally:
        await env.shutdown()


def _worker(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "worker.py"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


async def test_a_namespace_without_the_attributes_stops_the_worker_in_one_sentence(
    bare_server: WorkflowEnvironment, worker_env: dict[str, str]
) -> None:
    address = bare_server.client.service_client.config.target_host
    done = _worker(worker_env | {"TEMPORAL_ADDRESS": address})
    missing = [attribute.split("=") for attribute in SEARCH_ATTRIBUTES[1:]]
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: namespace default lacks the search attributes "), lines
    for name, kind in missing:
        assert f"{name} ({kind})" in lines[-1]
        assert f"--name {name} --type {kind}" in lines[-1]
    assert SEARCH_ATTRIBUTES[0].split("=")[0] not in lines[-1]
    assert "worker ready" not in done.stdout


async def test_turning_the_attributes_off_skips_the_check(
    bare_server: WorkflowEnvironment, worker_env: dict[str, str]
) -> None:
    """RESEARCH_SEARCH_ATTRIBUTES=0: runs write none, so the same namespace serves."""
    address = bare_server.client.service_client.config.target_host
    env = worker_env | {"TEMPORAL_ADDRESS": address, "RESEARCH_SEARCH_ATTRIBUTES": "0"}
    process = subprocess.Popen(  # noqa: ASYNC220 (a test driving a worker process)
        [sys.executable, "worker.py"], cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert "worker ready on task queue" in process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
