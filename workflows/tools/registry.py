"""The registered tools (pure), and everything derived from them: names, JSON schemas, argument
models, the union of result models stored results read back as, dispatch, step lines, compaction,
prompt slimming, untrusted text and trace labels.

Adding a tool is one module declaring its `ToolSpec` plus its entry in `REGISTRY` below.
"""

from __future__ import annotations

import functools
import json
import operator
import re
import typing
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import Field

from workflows.cleaning import MAX_TOOL_NAME_CHARS
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools import finish_research, read_page, record_evidence, search_web
from workflows.tools.spec import ToolSpec

AnySpec = ToolSpec[Any, Any]
NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# JSON-schema keywords a model does not need to choose its arguments (the host caps and checks
# every argument itself): labels, defaults, length and range limits.
_NOT_SENT = frozenset(
    {"title", "default", "maxLength", "minLength", "maximum", "minimum", "additionalProperties"}
)


class Registry:
    """Tools by name, in the order they are listed (the order the model is offered them); fixed
    once made, as the union of their results (`results`) is."""

    def __init__(self, specs: Iterable[AnySpec] = ()) -> None:
        self._specs: dict[str, AnySpec] = {}
        self._kinds: dict[str, AnySpec] = {}
        for spec in specs:
            self._add(spec)
        self._schemas = json.dumps([_schema(spec) for spec in self._specs.values()])

    def _add(self, spec: AnySpec) -> None:
        """Add a tool; a spec with a missing or clashing part is refused, every problem named."""
        problems = self.problems(spec)
        if problems:
            raise ValueError(f"tool spec {spec.name!r} is incomplete: {'; '.join(problems)}")
        self._specs[spec.name] = spec
        for model in spec.results:
            self._kinds[kind_of(model)] = spec

    def problems(self, spec: AnySpec) -> list[str]:
        """What keeps `spec` from being registered here ([]: nothing)."""
        found = []
        if not NAME.match(spec.name) or len(spec.name) > MAX_TOOL_NAME_CHARS:
            found.append("its name must be lower-case letters, digits and _, at most 64")
        if spec.name in self._specs:
            found.append("a tool of that name is registered already")
        if not spec.description.strip():
            found.append("it has no description")
        if not spec.label.strip():
            found.append("it has no trace label")
        found += _argument_problems(spec)
        found += self._result_problems(spec)
        if spec.runs is not None and not spec.runs.name:
            found.append("its activity has no name")
        return found

    def _result_problems(self, spec: AnySpec) -> list[str]:
        if not spec.results:
            return ["it declares no result model"]
        found = []
        for model in spec.results:
            if not _has_kind(model):
                found.append(f"result {model.__name__} has no kind (a Literal with its default)")
                continue
            kind = kind_of(model)
            if kind in self._kinds or [kind_of(m) for m in spec.results].count(kind) > 1:
                found.append(f"result kind {kind!r} is taken")
        return found

    # ------------------------------------------------------------ derived

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> AnySpec | None:
        return self._specs.get(name)

    def of(self, data: ToolData | None) -> AnySpec | None:
        """The tool a result came from, by its kind (None: no data, or of no registered tool)."""
        return None if data is None else self._kinds.get(data.kind)

    def argument_models(self) -> dict[str, type[ToolArgs]]:
        return {name: spec.arguments for name, spec in self._specs.items()}

    def results(self) -> Any:
        """Every registered tool's result models as one type, told apart by their `kind`: what a
        stored result reads back as (`workflows.transcript.ToolResult`)."""
        models = [model for spec in self._specs.values() for model in spec.results]
        if len(models) == 1:  # a union of one is its member (pydantic wants two to discriminate)
            return models[0]
        return Annotated[functools.reduce(operator.or_, models), Field(discriminator="kind")]

    def read_arguments(self, name: str, value: Any) -> ToolArgs:
        """A stored call's validated arguments, read as the argument model of the tool it named."""
        if isinstance(value, ToolArgs):
            return value
        spec = self._specs.get(name)
        if spec is None:
            raise ValueError(f"arguments of an unknown tool {name[:40]!r}")
        arguments: ToolArgs = spec.arguments.model_validate(value)
        return arguments

    def label(self, name: str) -> str:
        """A tool name fit for a metric label or a span name: a registered tool's label, else
        `unknown` (the name is the model's text: it may be anything, and every distinct value
        would be a new series)."""
        spec = self._specs.get(name)
        return spec.label if spec is not None else "unknown" if name else "(none)"

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style function tool definitions, generated from the specs once (a fresh copy
        each call) and kept lean (`_lean`): the same bytes every turn, and fewer."""
        schemas: list[dict[str, Any]] = json.loads(self._schemas)
        return schemas


def kind_of(model: type[ToolData]) -> str:
    """The `kind` a result model declares (its field's default), "" when it declares none."""
    field = model.model_fields.get("kind")
    default = field.default if field is not None else None
    return default if isinstance(default, str) else ""


def _has_kind(model: type) -> bool:
    if not (isinstance(model, type) and issubclass(model, ToolData)) or not kind_of(model):
        return False
    return typing.get_origin(model.model_fields["kind"].annotation) is typing.Literal


def _argument_problems(spec: AnySpec) -> list[str]:
    if not (isinstance(spec.arguments, type) and issubclass(spec.arguments, ToolArgs)):
        return ["its argument model is not a ToolArgs"]
    fields, described = set(spec.arguments.model_fields), set(spec.parameters)
    found = [f"parameter {name!r} has no description" for name in sorted(fields - described)]
    found += [f"{name!r} is described but is no parameter" for name in sorted(described - fields)]
    found += [f"verbatim {name!r} is no parameter" for name in sorted(spec.verbatim - fields)]
    found += [
        f"parameter {name!r} has an empty description"
        for name, text in spec.parameters.items()
        if not text.strip()
    ]
    return found


def _schema(spec: AnySpec) -> dict[str, Any]:
    return function_schema(spec.name, spec.description, spec.arguments, spec.parameters)


def function_schema(
    name: str, description: str, arguments: type[ToolArgs], parameters: Mapping[str, str]
) -> dict[str, Any]:
    """An OpenAI-style function definition of an argument model, made as the tools' are (lean,
    every parameter described): the tools', and the fixed lane's compose_report."""
    schema = _lean(arguments.model_json_schema())
    for field, text in parameters.items():
        schema["properties"][field]["description"] = text
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


def _lean(schema: Any) -> Any:
    """The schema without _NOT_SENT keywords, an optional `X or null` written as X."""
    if isinstance(schema, list):
        return [_lean(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        other = next(option for option in options if option != {"type": "null"})
        rest = {key: value for key, value in schema.items() if key != "anyOf"}
        return _lean({**rest, **other})
    return {
        key: _lean(value)
        for key, value in schema.items()
        if not (key in _NOT_SENT and not isinstance(value, dict))  # a keyword, not a field
    }


REGISTRY = Registry(
    [
        search_web.SPEC,
        read_page.SPEC,
        record_evidence.SPEC,
        finish_research.SPEC,
    ]
)


def tool_schemas() -> list[dict[str, Any]]:
    """The registered tools' function definitions, as the provider sends them."""
    return REGISTRY.schemas()
