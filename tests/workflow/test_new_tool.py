"""Adding a tool is one module and its entry in the registry, no other file touched: a copy of
`workflows/` gets the fixture tool `list_evidence` (tests/workflow/list_evidence.py) as
`workflows/tools/list_evidence.py` and its entry in `workflows/tools/registry.py`, and a child
pytest whose `workflows` is that copy runs tests/workflow/tool_added.py: the tool is offered to
the model, dispatched, described, recorded, read back by its kind (the registry's union of
results), compacted, rendered as untrusted page text and labelled in telemetry."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
IMPORT = "from workflows.tools import finish_research, read_page, record_evidence, search_web\n"
LAST = "        finish_research.SPEC,\n"


def with_tool(tree: Path) -> list[str]:
    """Add the fixture tool to the copy of `workflows/` in `tree`: the registry lines changed."""
    shutil.copy(HERE / "list_evidence.py", tree / "workflows" / "tools" / "list_evidence.py")
    registry = tree / "workflows" / "tools" / "registry.py"
    before = registry.read_text(encoding="utf-8")
    assert before.count(IMPORT) == 1 and before.count(LAST) == 1, "the registry's entries moved"
    after = before.replace(
        IMPORT, IMPORT.replace("finish_research,", "finish_research, list_evidence,")
    )
    after = after.replace(LAST, LAST + "        list_evidence.SPEC,\n")
    registry.write_text(after, encoding="utf-8")
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_tool_added_as_one_module_and_its_registry_entry_works_end_to_end(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "workflows", tree / "workflows", ignore=shutil.ignore_patterns("__pycache__")
    )
    changed = with_tool(tree)
    assert len([line for line in changed if line.startswith("+")]) == 2, changed  # import, SPEC
    env = {**os.environ, "PYTHONPATH": f"{tree}:{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=append",  # the copy's `workflows`, not the checkout's
            str(HERE / "tool_added.py"),
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stdout[-4000:] + child.stderr[-2000:]
    assert "3 passed" in child.stdout, child.stdout[-2000:]
