"""The workflow sandbox's snippets, compiled once.

Temporal's sandboxed runner enters the sandbox by `exec` of a short source string: for every
activation and, through the command-aware data converter, for every payload's serialization
context (about 30 a step). `exec` of a string compiles it each time (about 20 us each, measured:
2-3% of a worker's CPU under `make bench`). The strings are a handful of constants (and one per
workflow class for its instance), so `compile_once` hands the runner's module an `exec` that
compiles each string once and runs the same code object: what runs in the sandbox, with which
globals, and its determinism are unchanged.

The sandbox also imports each workflow module afresh for every run it creates, through the
standard source loader. Where no bytecode is cached beside the source (`PYTHONDONTWRITEBYTECODE`,
a read-only checkout) that import compiles the module from source each time: measured, 4.5 ms for
`workflows/research.py` against 0.08 ms to load its bytecode. `compile_once` also keeps the code
of each source a loader compiles, keyed by its path and its exact bytes, so a module compiles once
per process as it would from a `.pyc`: a changed file has other bytes and compiles again, and the
module each run gets is still executed afresh in its own namespace.
"""

from __future__ import annotations

import builtins
import importlib.machinery
from functools import lru_cache
from types import CodeType
from typing import Any

from temporalio.worker.workflow_sandbox import _runner

# The runner's snippets: a few constants, and an import of each workflow class and runner.
SNIPPETS = 256
# Module sources kept compiled: the workflow modules a sandbox imports per run, with room for edits.
SOURCES = 64

_LOADER = importlib.machinery.SourceFileLoader
_source_to_code = _LOADER.source_to_code


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


@lru_cache(maxsize=SOURCES)
def module_code(data: bytes, path: str, optimize: int) -> CodeType:
    # What importlib's SourceLoader.source_to_code does with a module's bytes.
    return compile(data, path, "exec", dont_inherit=True, optimize=optimize)


def _cached_source_to_code(
    self: importlib.machinery.SourceFileLoader, data: Any, path: Any, *args: Any, **kwargs: Any
) -> CodeType:
    optimize = kwargs.get("_optimize", -1)
    if (
        isinstance(data, bytes)
        and isinstance(path, str)
        and not args
        and kwargs.keys() <= {"_optimize"}
    ):
        return module_code(data, path, optimize)
    # Any other call (a later Python's other arguments): the loader's own, uncached.
    return _source_to_code(self, data, path, *args, **kwargs)


def compile_once() -> None:
    """Make the sandboxed runner compile each snippet, and the loader each module source, once
    (idempotent; the worker and the replayer call it before they run workflows)."""
    _runner.exec = _exec  # type: ignore[attr-defined]  # the module's global shadows the builtin
    _LOADER.source_to_code = _cached_source_to_code  # type: ignore[method-assign,assignment]
