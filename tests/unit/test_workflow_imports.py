"""The workflow's own modules reach Temporal's sandbox passed through, not loaded afresh per run."""

from __future__ import annotations

import ast
from pathlib import Path

import workflows.research


def test_the_workflow_imports_its_modules_by_their_own_names() -> None:
    # The sandbox passes a module through only when it is imported by its own name: with
    # `from workflows import gate`, every run would execute gate.py (and its models) again inside
    # the sandbox (measured: 56 ms of CPU to create a run's sandbox instead of 15 ms).
    tree = ast.parse(Path(workflows.research.__file__).read_text(encoding="utf-8"))
    from_package = [
        ", ".join(alias.name for alias in node.names)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "workflows"
    ]
    assert from_package == [], f"import these as `import workflows.x as x`: {from_package}"
