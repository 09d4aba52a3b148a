"""Read and validate a brief file before anything contacts Temporal: errors are one sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from starter.errors import EXIT_USAGE, CliError
from workflows.models import LIMIT_CEILINGS, Brief
from workflows.validation import describe_validation, seeds_problem

# A brief is a question, sub-questions, hosts and seed URLs, and must fit in a model's context:
# a file larger than the largest context allowed is refused before it is read whole.
MAX_BRIEF_BYTES = 2 * LIMIT_CEILINGS["max_context_chars"]


def load_brief(path: str | Path) -> Brief:
    """The validated brief, or CliError(exit 2): `brief NAME: <what is wrong>`."""
    name = str(path)
    try:
        brief = Brief.model_validate(_read_json(Path(path)))
        problem = seeds_problem(brief)
        if problem is not None:
            raise _BriefProblem(problem)
        return brief
    except _BriefProblem as problem:
        raise CliError(f"brief {name}: {problem}", EXIT_USAGE) from None
    except ValidationError as error:
        raise CliError(f"brief {name}: {describe_validation(error)}", EXIT_USAGE) from None


class _BriefProblem(Exception):
    pass


def _read_json(path: Path) -> Any:
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_BRIEF_BYTES + 1)
        if len(raw) > MAX_BRIEF_BYTES:
            raise _BriefProblem(
                f"is larger than {MAX_BRIEF_BYTES:,} bytes: a brief holds a question, "
                "sub-questions, hosts and seed URLs, not documents (index those with "
                "`research corpus index`)"
            )
        text = raw.decode("utf-8")
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
