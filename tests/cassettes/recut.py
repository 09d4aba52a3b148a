"""Re-cut every cassette's outcome.json from its recorded calls against the current host:
`python -m tests.cassettes.recut` (runs tests/system/test_cassettes.py with RESEARCH_RECUT_CASSETTES
set; needs what the system tests need: the Temporal CLI and the embedded PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cassettes import RECUT


def main() -> int:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "tests/system/test_cassettes.py"]  # fmt: skip
    return subprocess.call(command, env={**os.environ, RECUT: "1"})


if __name__ == "__main__":
    sys.exit(main())
