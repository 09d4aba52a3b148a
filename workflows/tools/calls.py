"""A model's tool call, checked (pure): cleaned and capped, then validated into the arguments of
the registered tool it names, or refused with one sentence."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import ValidationError

from workflows.canonical import canonical_value, direction_controls
from workflows.cleaning import (
    MAX_ARGUMENT_CHARS,
    MAX_ERROR_CHARS,
    MAX_TOOL_NAME_CHARS,
    clean,
    clean_value,
    echo,
)
from workflows.models import ToolCall
from workflows.tool_base import InvalidCall, ToolArgs
from workflows.tools.registry import REGISTRY

A = TypeVar("A", bound=ToolArgs)
MAX_NESTING = 32  # the arguments' JSON never needs more than a few levels


def bounded_call(call: ToolCall) -> ToolCall:
    """The call as it may be kept: name and arguments cleaned and capped (idempotent).

    Arguments over MAX_ARGUMENT_CHARS are cut, and `oversized` remembers their length so that
    `parse_call` refuses them instead of parsing a fragment.
    """
    arguments = clean(call.arguments)
    oversized = call.oversized or (len(arguments) if len(arguments) > MAX_ARGUMENT_CHARS else 0)
    return ToolCall(
        id=clean(call.id, MAX_TOOL_NAME_CHARS),
        name=clean(call.name, MAX_TOOL_NAME_CHARS + 1),  # one over: an unknown name, not a cut one
        arguments=arguments[:MAX_ARGUMENT_CHARS],
        oversized=oversized,
        refusal=call.refusal,
    )


def parse_call(call: ToolCall) -> ToolArgs:
    """Validate a raw call into its argument model, or raise InvalidCall with one sentence.

    Whatever the model sent (any size, nesting, number or character) ends here as a model or as
    InvalidCall: nothing else escapes.
    """
    spec = REGISTRY.get(call.name)
    if spec is None:
        known = ", ".join(REGISTRY.names())
        raise InvalidCall(f"unknown tool {echo(call.name)!r}; the tools are {known}")
    parsed: ToolArgs = parse_arguments(call, spec.arguments, spec.verbatim)
    return parsed


def parse_arguments(
    call: ToolCall, arguments: type[A], verbatim: frozenset[str] = frozenset()
) -> A:
    """`call`'s arguments validated into `arguments`, or InvalidCall with one sentence (the
    checks of `parse_call`, for a call of a known shape that no registered tool is)."""
    if call.oversized or len(call.arguments) > MAX_ARGUMENT_CHARS:
        size = call.oversized or len(call.arguments)
        raise InvalidCall(
            f"arguments of {call.name} are {size:,} characters, above the limit of "
            f"{MAX_ARGUMENT_CHARS:,}: send shorter arguments"
        )
    raw = clean_value(_json_object(call))
    controls = direction_controls(raw)
    if controls:
        raise InvalidCall(
            f"arguments of {call.name} hold the direction control {', '.join(controls[:3])}, "
            "which shows text in another order than it is stored: send plain text"
        )
    try:
        parsed: A = arguments.model_validate(canonical_value(raw, verbatim))
        return parsed
    except ValidationError as error:
        raise InvalidCall(f"invalid arguments for {call.name}: {describe(error)}") from None
    except (ValueError, TypeError):  # a validator meeting something exotic
        raise InvalidCall(f"invalid arguments for {call.name}: values of unusable shape") from None


def _json_object(call: ToolCall) -> dict[str, Any]:
    if _nesting(call.arguments) > MAX_NESTING:  # refused before the parser recurses into it
        raise InvalidCall(f"arguments of {call.name} are nested too deeply")
    try:
        raw = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as error:
        raise InvalidCall(f"arguments of {call.name} are not valid JSON: {error.msg}") from None
    except ValueError:  # a number of more digits than Python converts (int_max_str_digits)
        raise InvalidCall(f"arguments of {call.name} hold a number too long to read") from None
    if not isinstance(raw, dict):
        raise InvalidCall(f"arguments of {call.name} must be a JSON object")
    return raw


def _nesting(text: str) -> int:
    """The deepest nesting of [ and { outside JSON strings (a linear scan, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def describe(error: ValidationError) -> str:
    """One line per problem, joined: `field: message`; model input is never echoed at length."""
    parts = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(echo(str(part), 40) for part in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return clean("; ".join(parts), MAX_ERROR_CHARS - 100)
