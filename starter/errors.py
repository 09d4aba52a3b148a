"""The one error type a command raises: a sentence for the user and the process exit code."""

from __future__ import annotations

# Exit codes (docs/operations.md): 0 done (a run completed), 1 failed or a run did not complete,
# 2 bad input: a usage error, a bad brief or file, or an ID that names no run (`no_such_run`).
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_RUN = EXIT_USAGE


class CliError(Exception):
    """Printed as `error: <message>` on one line; never a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def no_such_run(run_id: str) -> CliError:
    """The one sentence (and exit code) of every command given an ID that names no run, whether
    it looked in Temporal (status, cancel, signal, extend, replay) or in the ledger (report,
    export, audit, rerun)."""
    return CliError(f"no run with id {run_id}: `research runs` lists the recent runs", EXIT_NO_RUN)
