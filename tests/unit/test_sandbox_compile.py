"""runtime.sandbox: the sandboxed runner's snippets and the modules it imports afresh are compiled
once, and run as before."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from temporalio.worker.workflow_sandbox import _runner

from runtime import sandbox


def test_the_runner_compiles_each_snippet_once_and_runs_it_each_time() -> None:
    sandbox.compile_once()
    sandbox.compile_once()  # idempotent
    assert _runner.exec is sandbox._exec  # type: ignore[attr-defined]
    source = "__seen.append(__value * 2)\n"
    seen: list[int] = []
    before = sandbox.compiled.cache_info()
    for value in (1, 2, 3):
        scope = {"__seen": seen, "__value": value}
        _runner.exec(source, scope, scope)  # type: ignore[attr-defined]
    after = sandbox.compiled.cache_info()
    assert seen == [2, 4, 6], "each call runs the code with its own globals"
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)


def test_code_objects_and_errors_pass_through() -> None:
    scope: dict[str, object] = {}
    sandbox._exec(compile("x = 1", "<string>", "exec"), scope, scope)
    assert scope["x"] == 1
    try:
        sandbox._exec("raise ValueError('inside')\n", scope, scope)
    except ValueError as error:
        assert str(error) == "inside"
    else:
        raise AssertionError("the snippet's exception is raised")


def _load_afresh(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_imported_afresh_compiles_once_per_source_and_runs_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no .pyc: the loader compiles source
    loader = importlib.machinery.SourceFileLoader  # put back as it was after this test
    monkeypatch.setattr(loader, "source_to_code", loader.source_to_code)
    sandbox.compile_once()
    path = tmp_path / "afresh.py"
    path.write_text("runs = []\nruns.append(len(runs))\n", encoding="utf-8")
    before = sandbox.module_code.cache_info()
    first, second = _load_afresh(path, "afresh"), _load_afresh(path, "afresh")
    after = sandbox.module_code.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    assert first is not second and first.runs is not second.runs, "each import runs the code anew"
    assert first.runs == second.runs == [0]
    path.write_text("runs = ['edited']\n", encoding="utf-8")
    assert _load_afresh(path, "afresh").runs == ["edited"], "other bytes compile again"
    assert not list(tmp_path.glob("__pycache__/*")), "nothing written beside the source"
