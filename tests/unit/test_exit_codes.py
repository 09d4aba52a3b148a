"""The exit-code table (docs/operations.md, Exit codes) for what the parser decides, every command:
a usage error is exit 2 with argparse's usage and one `error:` line, before anything runs; --help
is 0. (No such run: tests/system/test_operator_day.py, every command on a run; 1 for a run that did
not complete: tests/system/test_operations.py; 130 for Ctrl-C: test_operator_day.)"""

from __future__ import annotations

import pytest

from starter.cli import COMMANDS, main


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_usage_error_is_exit_2_from_every_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, "--no-such-option"])

    out, err = capsys.readouterr()
    assert stopped.value.code == 2
    assert out == ""
    # argparse names the command when it has arguments of its own to complain about, else the
    # program (`research: error: unrecognized arguments: --no-such-option`).
    assert err.startswith("usage: research ")
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith("research"), err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_is_exit_0_from_every_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, "--help"])

    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: research {command}")
