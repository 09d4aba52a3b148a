"""The services `research dev` and `research demo` start (the Temporal dev server, the embedded
PostgreSQL) never inherit a provider key: read from /proc while they run."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from runtime.settings import Settings
from runtime.temporal import DevServerError
from starter.devstack import embedded_stack
from tests.conftest import free_port

SECRET = "sk-child-environment-0123456789"
VARIABLES = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "SERPER_API_KEY", "AZURE_CLIENT_SECRET")


def _environment(pid: int) -> bytes:
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"PATH=" in environ, f"the environment of {pid} reads empty: nothing was checked"
    return environ


def _temporal_pid(state_dir: Path) -> int:
    """The dev server started for this state folder (its --db-filename lies inside it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"start-dev" in command and str(state_dir).encode() in command:
            return int(entry.name)
    raise AssertionError("no Temporal dev server runs for this state folder")


async def _assert_children_clean(state: Path) -> None:
    postmaster = int((state / "pg" / "postmaster.pid").read_text().split()[0])
    temporal = _temporal_pid(state)
    assert SECRET.encode() not in _environment(postmaster), "PostgreSQL inherited a key"
    assert SECRET.encode() not in _environment(temporal), "Temporal inherited a key"
    # An ordinary child inherits it. It says "up" from the process it stays (no exec after):
    # /proc/<pid>/environ reads empty while a process is being replaced by exec.
    control = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import time; print('up', flush=True); time.sleep(30)",
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert control.stdout is not None and await control.stdout.readline() == b"up\n"
        assert SECRET.encode() in _environment(control.pid), "the control has the key"
    finally:
        control.kill()
        await control.wait()


@pytest.mark.system
@pytest.mark.timeout(120)
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
async def test_embedded_services_start_without_provider_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.setenv(name, SECRET)
    for attempt in range(3):  # a free port taken by another process in between: try others
        state = tmp_path / f"state-{attempt}"
        settings = replace(
            Settings.from_env({}),
            state_dir=state,
            temporal_address=f"127.0.0.1:{free_port()}",
            ui_port=free_port(),
        )
        try:
            async with embedded_stack(settings):
                await _assert_children_clean(state)
            break
        except DevServerError:
            if attempt == 2:
                raise

    assert all(os.environ[name] == SECRET for name in VARIABLES), "this process keeps its own"
