"""The workflow sandbox's snippets, compiled once.

Temporal's sandboxed runner enters the sandbox by `exec` of a short source string: for every
activation and, through the command-aware data converter, for every payload's serialization
context (about 30 a step). `exec` of a string compiles it each time (about 20 us each, measured:
2-3% of a worker's CPU under `make bench`). The strings are a handful of constants (and one per
workflow class for its instance), so `compile_once` hands the runner's module an `exec` that
compiles each string once and runs the same code object: what runs in the sandbox, with which
globals, and its determinism are unchanged.
"""

from __future__ import annotations

import builtins
from functools import lru_cache
from types import CodeType
from typing import Any

from temporalio.worker.workflow_sandbox import _runner

# The runner's snippets: a few constants, and an import of each workflow class and runner.
SNIPPETS = 256


@lru_cache(maxsize=SNIPPETS)
def compiled(source: str) -> CodeType:
    return compile(source, "<string>", "exec")


def _exec(
    source: str | CodeType,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    /,
) -> None:
    builtins.exec(compiled(source) if isinstance(source, str) else source, globals, locals)


def compile_once() -> None:
    """Make the sandboxed runner compile each snippet once (idempotent; the worker and the
    replayer call it before they run workflows)."""
    _runner.exec = _exec  # type: ignore[attr-defined]  # the module's global shadows the builtin
