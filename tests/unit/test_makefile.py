"""`make clean` deletes every run's ledger and history: it says so and asks first, in the state
folder the CLI uses. `make help` lists the targets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runtime.settings import PROJECT_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def clean(
    folder: Path, *variables: str, answer: str | None = None, state_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name != "RESEARCH_STATE_DIR"}
    if state_dir is not None:
        env["RESEARCH_STATE_DIR"] = str(state_dir)
    return subprocess.run(
        ["make", "-s", "-f", str(PROJECT_ROOT / "Makefile"), "clean", *variables],
        cwd=folder,
        env=env,
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


def test_clean_deletes_the_state_folder_research_state_dir_names(tmp_path: Path) -> None:
    default = tmp_path / ".research"
    default.mkdir()
    moved = tmp_path / "elsewhere" / "state"
    (moved / "pg").mkdir(parents=True)

    done = clean(tmp_path, "FORCE=1", state_dir=moved)

    assert done.returncode == 0, done.stdout
    assert f"This deletes {moved}/" in done.stdout
    assert not moved.exists()
    assert default.exists()  # not the folder the CLI was not using

    (moved / "pg").mkdir(parents=True)
    (moved / "pg" / "postmaster.pid").write_text("4242\n")
    refused = clean(tmp_path, "FORCE=1", state_dir=moved)
    assert refused.returncode != 0
    assert f"PostgreSQL is running on {moved}/pg" in refused.stdout


def test_make_help_lists_every_target_with_a_line() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY: (.+)$", makefile, re.MULTILINE)
    assert phony

    done = subprocess.run(
        ["make", "-s", "-f", str(PROJECT_ROOT / "Makefile"), "help"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip

    listed = {line.split()[0] for line in done.stdout.splitlines()[1:]}
    assert listed == set(phony[1].split())
