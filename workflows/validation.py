"""Turning a pydantic ValidationError into the one sentence a user sees (pure)."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails


def describe_validation(error: ValidationError) -> str:
    """The first problem as one sentence: a validator's own words, or `field X: <message>`."""
    return " ".join(_describe(error.errors(include_url=False)[0]).split())


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
