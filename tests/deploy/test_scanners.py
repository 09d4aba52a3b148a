"""The scanners, offline: checkov on infra/ (Bicep) and the Dockerfile, hadolint on the Dockerfile.

checkov lives in its own environment, .venv/checkov (`make test` and `make lint` install it): it
pins packages (packaging<24, ...) the project's environment holds newer. Every check checkov
skips is skipped in a `// checkov:skip=ID: reason` comment next to the resource, and every such
comment must still match a check checkov runs, so no stale excuse stays behind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runtime.settings import PROJECT_ROOT
from tests.conftest import installed_binary

CHECKOV = Path(sys.executable).parent.parent / "checkov" / "bin" / "checkov"
_SKIP = re.compile(r"//\s*checkov:skip=(CKV\w+):\s*(.*)$")


def _checkov(*target: str, framework: str) -> dict[str, Any]:
    if not CHECKOV.exists():
        pytest.fail(f"checkov is not installed at {CHECKOV}: run `make test` (it installs it)")
    # No mapping download from the vendor's platform, no external modules: offline, like CI
    # (PYTHONPATH carries the test network guard into the child).
    env = {name: os.environ[name] for name in ("PATH", "HOME", "PYTHONPATH") if name in os.environ}
    env |= {"BC_SKIP_MAPPING": "TRUE", "CHECKOV_NO_OUTPUT_COLOR": "1"}
    done = subprocess.run(
        [str(CHECKOV), *target, "--framework", framework, "--skip-download", "-o", "json"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="module")
def bicep_report() -> dict[str, Any]:
    return _checkov("-d", "infra", framework="bicep")


def test_checkov_fails_no_bicep_check(bicep_report: dict[str, Any]) -> None:
    failed = [
        f"{check['check_id']} {check['resource']} ({check['file_path']})"
        for check in bicep_report["results"]["failed_checks"]
    ]
    assert failed == []
    assert bicep_report["summary"]["parsing_errors"] == 0
    assert bicep_report["summary"]["passed"] >= 10


def test_every_skipped_check_is_justified_and_still_needed(bicep_report: dict[str, Any]) -> None:
    written = set()
    for path in sorted((PROJECT_ROOT / "infra").rglob("*.bicep")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if match := _SKIP.search(line):
                assert len(match[2]) > 30, f"{path.name}: {match[1]} needs a reason"
                written.add((f"/{path.relative_to(PROJECT_ROOT / 'infra')}", match[1]))
    skipped = {
        (check["file_path"], check["check_id"])
        for check in bicep_report["results"]["skipped_checks"]
    }
    assert written and written == skipped


def test_checkov_fails_no_dockerfile_check() -> None:
    report = _checkov("-f", "Dockerfile", framework="dockerfile")
    failed = [check["check_id"] for check in report["results"]["failed_checks"]]

    assert failed == []
    assert report["results"]["skipped_checks"] == []


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    done = subprocess.run(
        [installed_binary("hadolint"), "--no-color", "Dockerfile"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert (done.returncode, done.stdout) == (0, "")
