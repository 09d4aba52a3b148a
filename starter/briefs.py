"""Read and validate a brief file before anything contacts Temporal: errors are one sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from starter.errors import EXIT_USAGE, CliError
from workflows.models import Brief
from workflows.validation import describe_validation


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
