"""The one error type a command raises: a sentence for the user and the process exit code."""

from __future__ import annotations

# Exit codes: 0 done (a run completed), 1 failed or a run did not complete, 2 bad input.
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """Printed as `error: <message>` on one line; never a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code
