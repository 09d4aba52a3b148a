"""What every tool shares below the registry (pure): the base of its arguments and its results.

A tool's result models each carry a `kind` (`Literal`), the key that tells them apart when they
are read back from JSON (the ledger's steps, a workflow history); a tool's arguments are told
apart by the name of the tool they were sent to. The registry (`workflows.tools.registry`) fills
the two tables below as it registers each tool; this module stays a leaf, so the data contract
(`workflows.models`) can name these bases without importing the tools.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidatorFunctionWrapHandler


class InvalidCall(ValueError):
    """The call cannot be executed; the message is returned to the model as the tool error."""


class ToolArgs(BaseModel):
    """The base of every tool's argument model (what the model sent, validated)."""

    model_config = ConfigDict(extra="forbid")


class ToolData(BaseModel):
    """The base of every tool's result model (the envelope's `data`): each sets `kind`."""

    model_config = ConfigDict(extra="forbid")

    kind: str

    def error_detail(self) -> str | None:
        """What the ledger's step error adds to the tool's error (None: nothing)."""
        return None


_DATA_KINDS: dict[str, type[ToolData]] = {}  # kind -> result model, in registration order
_ARGUMENTS: dict[str, type[ToolArgs]] = {}  # tool name -> argument model


def register_kinds(
    name: str, arguments: type[ToolArgs], results: tuple[type[ToolData], ...]
) -> None:
    """Make a tool's arguments and results readable back from JSON (the registry calls it)."""
    _ARGUMENTS[name] = arguments
    for model in results:
        _DATA_KINDS[kind_of(model)] = model


def unregister_kinds(name: str, results: tuple[type[ToolData], ...]) -> None:
    _ARGUMENTS.pop(name, None)
    for model in results:
        _DATA_KINDS.pop(kind_of(model), None)


def kind_of(model: type[ToolData]) -> str:
    """The `kind` a result model declares (its field's default), "" when it declares none."""
    field = model.model_fields.get("kind")
    default = field.default if field is not None else None
    return default if isinstance(default, str) else ""


def read_data(value: Any, handler: ValidatorFunctionWrapHandler) -> ToolData:
    """The result model a stored `data` object is, by its `kind`. Data stored before results had
    a kind (older ledger rows and histories) is read as the one model its fields fit, as it was
    then (each forbids unknown fields)."""
    if isinstance(value, ToolData):
        return value
    if not isinstance(value, dict):
        raise ValueError("tool data must be an object")
    kinds = _tables()[0]
    if "kind" in value:
        model = kinds.get(value["kind"]) if isinstance(value["kind"], str) else None
        if model is None:
            raise ValueError(f"tool data of unknown kind {str(value['kind'])[:40]!r}")
        return model.model_validate(value)
    for model in kinds.values():
        try:
            return model.model_validate(value)
        except ValueError:
            continue
    raise ValueError("tool data of no known kind")


def read_arguments(name: str, value: Any) -> ToolArgs:
    """A stored call's validated arguments, read as the argument model of the tool it named."""
    if isinstance(value, ToolArgs):
        return value
    model = _tables()[1].get(name)
    if model is None:
        raise ValueError(f"arguments of an unknown tool {name[:40]!r}")
    return model.model_validate(value)


def _tables() -> tuple[dict[str, type[ToolData]], dict[str, type[ToolArgs]]]:
    if not _ARGUMENTS:  # read before anything imported the tools: they register as they load
        importlib.import_module("workflows.tools")
    return _DATA_KINDS, _ARGUMENTS
