"""Shared readers for the deployment checks: the project's files, parsed as the tools read them."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator, Draft201909Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from runtime.settings import PROJECT_ROOT
from starter.cli import build_parser

SCHEMAS = Path(__file__).parent / "schemas"
# Variable names the worker's configuration reads (Settings.from_env, telemetry).
_VARIABLE = re.compile(
    r"^(RESEARCH|TEMPORAL|OPENAI|AZURE|SERPER|SEARXNG|APPLICATIONINSIGHTS|OTEL|DATABASE)_[A-Z0-9_]+$"
)
# Named in runtime/ without being configuration.
NOT_CONFIGURATION = {
    "OTEL_TRACES_EXPORTER": "runtime/exporters.py sets it while the Azure Monitor distro starts",
}


def variables_read() -> set[str]:
    """Every environment variable name written as a string in runtime/ or worker.py: what the
    settings and telemetry read (a name only in a message would be a longer string)."""
    found: set[str] = set()
    for path in [*sorted((PROJECT_ROOT / "runtime").glob("*.py")), PROJECT_ROOT / "worker.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and _VARIABLE.match(value):
                found.add(value)
    return found - set(NOT_CONFIGURATION)


def project_scripts() -> set[str]:
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["scripts"])


def check_image_command(command: list[str]) -> None:
    """The command exists in the image: a console script with arguments the CLI accepts,
    `python worker.py`, or `python -m` a module of a package the image holds."""
    if command[0] in project_scripts():
        build_parser().parse_args(command[1:])  # exits (SystemExit) on a wrong command
        copied = "starter"
    elif command[:2] == ["python", "worker.py"]:
        assert (PROJECT_ROOT / "worker.py").is_file()
        copied = "worker.py"
    else:
        assert command[:2] == ["python", "-m"], command
        assert importlib.util.find_spec(command[2]) is not None, command
        copied = command[2].split(".")[0]
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(rf"^COPY {re.escape(copied)}\b", dockerfile, re.M), f"the image lacks {copied}"


def load_yaml(name: str) -> Any:
    return yaml.safe_load((PROJECT_ROOT / name).read_text(encoding="utf-8"))


def _no_remote_schemas(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # tests reach no network: a remote $ref is a test failure


def validator(schema_file: str) -> Draft7Validator | Draft201909Validator:
    schema = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry(retrieve=_no_remote_schemas)  # type: ignore[call-arg]
    cls = Draft201909Validator if "2019-09" in schema.get("$schema", "") else Draft7Validator
    cls.check_schema(schema)
    return cls(schema, registry=registry)


@pytest.fixture(scope="session")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml("docker-compose.yaml")
    return loaded
