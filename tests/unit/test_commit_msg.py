"""The commit-msg hook (`.githooks/commit-msg`, installed by `make hooks`): a subject that would
not read as one plain line of `git log --oneline` is refused with a sentence saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.settings import PROJECT_ROOT

HOOKS = PROJECT_ROOT / ".githooks"
HOOK = HOOKS / "commit-msg"


def check(tmp_path: Path, message: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(HOOK), str(path)], capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(
    "message",
    [
        "Verifier judges coverage of each required question\n",
        "Move evaluation and comparison to the CLI package\n\nWhy: issue 46 item 2; stop 44 too.\n",
        "x" * 72,
        "\n\nLeading blank lines are not the subject\n",
        "Edited in an editor\n# Please enter the commit message\n# issue 46, " + "y" * 80 + "\n",
        "Verbose commit\n\n# ------------------------ >8 ------------------------\n"
        + "stop 44\n" * 3,
        "Merge branch 'arrows' into main, a subject git writes itself " + "z" * 40,
        "fixup! " + "w" * 72,
        "",
    ],
)
def test_a_plain_subject_of_at_most_72_characters_passes(tmp_path: Path, message: str) -> None:
    done = check(tmp_path, message)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("x" * 73, "the subject has 73 characters; at most 72"),
        ("Stop 44's figures and docs\n", "the subject names 'Stop 44': say what changed"),
        ("Review's mends (issue 24)\n", "the subject names 'issue 24'"),
        ("Gate refuses bare figures, Issue #46\n", "the subject names 'Issue #46'"),
        (
            "A subject wrapped\nonto a second line\n",
            "the subject is one line: leave a blank line before the body",
        ),
    ],
)
def test_a_long_wrapped_or_jargon_subject_is_refused(
    tmp_path: Path, message: str, reason: str
) -> None:
    done = check(tmp_path, message)
    assert done.returncode == 1
    assert f"commit-msg: {reason}" in done.stderr
    assert "figures, reasons and references go in the body" in done.stderr


@pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("make") is None, reason="needs git and make"
)
def test_make_hooks_installs_the_check_that_git_runs(tmp_path: Path) -> None:
    """In a fresh repository (never this checkout's config): `make hooks`, then git commits."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.invalid",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.invalid",
    }

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30
        )

    assert run("git", "init", "-q").returncode == 0
    shutil.copytree(HOOKS, tmp_path / ".githooks")
    assert run("make", "-s", "-f", str(PROJECT_ROOT / "Makefile"), "hooks").returncode == 0
    assert run("git", "config", "core.hooksPath").stdout == ".githooks\n"

    refused = run("git", "commit", "-q", "--allow-empty", "-m", "Stop 44: figures")
    assert refused.returncode != 0
    assert "the subject names 'Stop 44'" in refused.stderr
    accepted = run("git", "commit", "-q", "--allow-empty", "-m", "Record the bench figures")
    assert accepted.returncode == 0, accepted.stderr
    assert run("git", "log", "--format=%s").stdout == "Record the bench figures\n"
