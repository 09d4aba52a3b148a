"""`make clean` deletes every run's ledger and history: it says so and asks first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from runtime.settings import PROJECT_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def clean(
    folder: Path, *variables: str, answer: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-s", "-f", str(PROJECT_ROOT / "Makefile"), "clean", *variables],
        cwd=folder,
        input=answer,
        stdin=None if answer is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def state(tmp_path: Path) -> Path:
    (tmp_path / ".research" / "pg").mkdir(parents=True)
    (tmp_path / ".research" / "temporal.db").write_text("runs")
    return tmp_path / ".research"


def test_clean_says_what_it_deletes_and_keeps_it_without_a_yes(state: Path) -> None:
    done = clean(state.parent)

    assert done.returncode != 0
    assert "This deletes .research/: the embedded PostgreSQL ledger (every run" in done.stdout
    assert "kept .research/" in done.stdout
    assert (state / "temporal.db").exists()


def test_clean_deletes_after_a_yes_or_with_force(state: Path) -> None:
    assert clean(state.parent, answer="no\n").returncode != 0
    assert state.exists()

    assert clean(state.parent, answer="yes\n").stdout.endswith("deleted .research/\n")
    assert not state.exists()

    state.mkdir()
    assert clean(state.parent, "FORCE=1").returncode == 0
    assert not state.exists()


def test_clean_refuses_while_postgresql_runs_there(state: Path) -> None:
    (state / "pg" / "postmaster.pid").write_text("4242\n")

    done = clean(state.parent, "FORCE=1")

    assert done.returncode != 0
    assert "stop research dev (or the worker) first" in done.stdout
    assert state.exists()
