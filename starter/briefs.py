"""Read and validate a brief file before anything contacts Temporal: errors are one sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from starter.errors import EXIT_USAGE, CliError
from workflows.models import Brief


def load_brief(path: str | Path) -> Brief:
    """The validated brief, or CliError(exit 2): `brief NAME: <what is wrong>`."""
    name = str(path)
    try:
        return Brief.model_validate(_read_json(Path(path)))
    except _BriefProblem as problem:
        raise CliError(f"brief {name}: {problem}", EXIT_USAGE) from None
    except ValidationError as error:
        raise CliError(f"brief {name}: {describe_validation(error)}", EXIT_USAGE) from None


class _BriefProblem(Exception):
    pass


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _BriefProblem("no such file") from None
    except IsADirectoryError:
        raise _BriefProblem("is a directory, not a JSON file") from None
    except UnicodeDecodeError:
        raise _BriefProblem("is not UTF-8 text") from None
    except OSError as error:
        raise _BriefProblem(f"cannot be read ({error.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _BriefProblem(
            f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None


def describe_validation(error: ValidationError) -> str:
    """The first problem as one sentence: a validator's own words, or `field X: <message>`."""
    return _one_line(_describe(error.errors(include_url=False)[0]))


def _describe(detail: ErrorDetails) -> str:
    location = ".".join(str(part) for part in detail["loc"])
    kind = detail["type"]
    message = detail["msg"]
    if kind in ("value_error", "assertion_error"):
        return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if not location:
        return "the brief must be a JSON object with question and allowed_hosts"
    if kind == "missing":
        return f"field {location} is required"
    if kind == "extra_forbidden":
        return f"field {location} is not a brief field (check its spelling)"
    return f"field {location}: {message}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
