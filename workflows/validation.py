"""Turning a pydantic ValidationError into the one sentence a user sees, and refusing an
operator's update with one (pure)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from workflows.hosts import seed_problem, without_credentials
from workflows.models import Brief

INVALID_INPUT = "InvalidInput"  # the error type of input that fails validation


def describe_validation(error: ValidationError) -> str:
    """The first problem as one sentence: a validator's own words, or `field X: <message>`."""
    return " ".join(_describe(error.errors(include_url=False)[0]).split())


def refuse_update(sentence: str, error_type: str) -> None:
    """An update validator's refusal, when there is one (`sentence`): the operator's answer, not
    a fault, so non-retryable, its one sentence the message (`temporal workflow update execute`
    prints it as it is)."""
    # Imported here: the CLI's ledger reads (`research runs`, `report`) import this module and
    # stay free of the Temporal SDK (tests/unit/test_cli_startup.py).
    from temporalio.exceptions import ApplicationError

    if sentence:
        raise ApplicationError(sentence, type=error_type, non_retryable=True)


def read_brief(raw: Any) -> Brief | str:
    """The workflow's input as a Brief (validated as the converter would: lax, so `"required": 1`
    is true), or the one sentence that says why it is not one."""
    if isinstance(raw, Brief):
        return raw
    try:
        return Brief.model_validate(raw)
    except ValidationError as error:
        return describe_validation(error)


def seeds_problem(brief: Brief) -> str | None:
    """The first of the brief's seed URLs the fetcher would refuse, as a sentence (never showing
    a user name or password), or None: the checks an operator's seed URLs get (`add_seeds`)."""
    for url in brief.seed_urls:
        problem = seed_problem(url, brief.allowed_hosts)
        if problem is not None:
            return f"seed URL {without_credentials(url)} {problem}"
    return None


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
