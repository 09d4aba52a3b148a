"""runtime.sandbox: the sandboxed runner's snippets are compiled once and run as before."""

from __future__ import annotations

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
