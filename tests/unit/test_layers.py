"""The layers, read from the imports of every module (ast): no import runs against them.

`make lint` also runs lint-imports (import-linter, contracts in pyproject.toml): the packages'
floors, rooms that stand apart, and no import cycle inside a package. `worker.py` is a module, not
a package, so import-linter does not see it: its arrows are checked here.

- `workflows` is deterministic: it imports nothing that does I/O.
- `runtime` is the base layer: it imports no activities, no starter, no baselines.
- The ledger (`activities/ledger`) is plain SQL: no fetcher (`activities.pages`), no gate rules.
- Activities are built from small config objects (`runtime.options`), not from `Settings`.
- Product code (workflows, activities, runtime, composition, worker.py) imports no baseline,
  except the one composition root that wires the offline policy (`BASELINE_WIRING`).
- The composition root (`worker.py`) imports no CLI (`starter`), and only the CLI imports it.
- A package's `__init__` only re-exports: its code lives in named modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("workflows", "activities", "runtime", "composition", "starter", "baselines")
PRODUCT = ("workflows", "activities", "runtime", "composition", "worker")
# Modules that do I/O (or wire it): never imported by the deterministic workflow code.
IO_MODULES = ("activities", "runtime", "composition", "starter", "baselines", "worker")
IO_MODULES += ("httpx", "psycopg")
IO_MODULES += ("psycopg_pool", "openai")
GATE_RULES = ("workflows.gate", "workflows.substance")
# The composition root chooses the policy `decide` runs (the offline policy is a baseline).
BASELINE_WIRING = frozenset({"worker"})


def _modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path
    yield "worker", ROOT / "worker.py"


MODULES = dict(_modules())


def _imports(name: str) -> set[str]:
    """Every module `name` imports (also inside functions and TYPE_CHECKING blocks)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _within(module: str, prefixes: tuple[str, ...] | frozenset[str]) -> bool:
    return any(module == prefix or module.startswith(f"{prefix}.") for prefix in prefixes)


def _offending(layer: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{name} imports {module}"
        for name in MODULES
        if _within(name, layer)
        for module in _imports(name)
        if _within(module, forbidden)
    )


def test_every_layer_is_found() -> None:
    assert {"workflows.research", "activities.ledger", "runtime.settings", "worker"} <= set(MODULES)
    assert "activities.pages.extract" in _imports("activities.snapshots")  # the reader works


def test_workflows_import_nothing_that_does_io() -> None:
    assert _offending(("workflows",), IO_MODULES) == []


def test_runtime_imports_no_activities_starter_or_baselines() -> None:
    above = ("activities", "composition", "starter", "baselines", "worker")
    assert _offending(("runtime",), above) == []


def test_the_composition_root_imports_no_cli_and_only_the_cli_imports_it() -> None:
    assert _offending(("worker",), ("starter",)) == []
    below = ("workflows", "activities", "runtime", "composition", "baselines")
    assert _offending(below, ("worker",)) == []
    assert "worker" in _imports("starter.local")  # the check reads the arrow that exists


def test_the_ledger_imports_no_fetcher_and_no_gate_rules() -> None:
    assert _offending(("activities.ledger",), ("activities.pages", *GATE_RULES)) == []


def test_activities_are_built_from_small_config_objects_not_the_settings() -> None:
    """Each activity takes the options it needs (runtime.options), never the whole Settings."""
    assert _offending(("activities",), ("runtime.settings",)) == []


def test_product_code_imports_no_baseline_outside_the_composition_root() -> None:
    offending = _offending(PRODUCT, ("baselines",))
    assert [line for line in offending if line.split()[0] not in BASELINE_WIRING] == []
    # The exception is used, not stale: the composition root is where a policy is chosen.
    assert any(_within(module, ("baselines",)) for module in _imports("worker"))


@pytest.mark.parametrize(
    "name", sorted(name for name, path in MODULES.items() if path.name == "__init__.py")
)
def test_package_init_files_only_re_export(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    defined = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assert defined == [], f"{MODULES[name].relative_to(ROOT)} defines {defined}"
