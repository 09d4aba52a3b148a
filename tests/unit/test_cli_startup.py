"""`research --version` and `--help` import only the CLI's parser and the settings; a command
imports what it uses when it runs (bench/cli_startup.py measures the time; no timing here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from runtime.settings import PROJECT_ROOT
from starter.cli import COMMANDS, RUN_STATUSES, build_parser
from workflows.models import RunStatus

HEAVY = ("temporalio", "pydantic", "psycopg", "opentelemetry", "activities", "rich", "baselines")


def _loaded_after(*argv: str) -> list[str]:
    probe = (
        "import sys, json\n"
        "from starter.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return modules


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("runs", "--help")])
def test_version_and_help_import_nothing_heavy(argv: tuple[str, ...]) -> None:
    loaded = _loaded_after(*argv)

    heavy = [name for name in loaded if name.split(".")[0] in HEAVY]
    assert heavy == []


def test_the_status_choices_are_the_run_statuses() -> None:
    assert tuple(status.value for status in RunStatus) == RUN_STATUSES


def test_every_command_the_parser_knows_has_a_function() -> None:
    import importlib

    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == set(COMMANDS)
    for module, name in COMMANDS.values():
        assert callable(getattr(importlib.import_module(module), name))
