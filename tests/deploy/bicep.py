"""Reading Bicep as pycep-parser parses it (the parser checkov uses), for the wiring tests.

pycep turns a file into nested dicts: parameters, variables, resources, modules, outputs. An
expression is a plain string (a name, or a literal: pycep does not tell them apart), a string
with `${...}` interpolations, or an `operator` / `function` node. `render` writes an expression
back as text (`identity.outputs.principalId`), `expand` replaces variable names by their values
and flattens `concat` and both branches of a conditional, so a list built from pieces reads whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pycep import BicepParser

from runtime.settings import PROJECT_ROOT

INFRA = PROJECT_ROOT / "infra"


@dataclass(frozen=True)
class Bicep:
    path: Path
    tree: dict[str, Any]

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.tree.get("parameters", {}))

    @property
    def variables(self) -> dict[str, Any]:
        return {name: spec["value"] for name, spec in self.tree.get("variables", {}).items()}

    @property
    def outputs(self) -> dict[str, Any]:
        return {name: spec["value"] for name, spec in self.tree.get("outputs", {}).items()}

    @property
    def modules(self) -> dict[str, Any]:
        return dict(self.tree.get("modules", {}))

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        """Resources of one type, by symbolic name, with their body (a condition's body too)."""
        found = {}
        for name, resource in self.tree.get("resources", {}).items():
            if resource["type"] == kind:
                config = resource["config"]
                found[name] = config["config"] if "condition" in config else config
        return found

    def resource(self, kind: str) -> dict[str, Any]:
        (only,) = self.resources(kind).values()
        return only

    def expand(self, node: Any) -> Any:
        if isinstance(node, str) and node in self.variables:
            return self.expand(self.variables[node])
        if isinstance(node, list):
            return [self.expand(item) for item in node]
        if isinstance(node, dict) and "function" in node and node["function"]["type"] == "concat":
            parts = [self.expand(part) for part in node["function"]["parameters"].values()]
            return [item for part in parts for item in part]
        if isinstance(node, dict) and "operator" in node:
            operator = node["operator"]
            if operator["type"] == "conditional":
                branches = operator["operands"]
                true, false = (self.expand(branches[key]) for key in ("true_value", "false_value"))
                if isinstance(true, list) and isinstance(false, list):
                    return true + false
        if isinstance(node, dict) and "operator" not in node and "function" not in node:
            return {key: self.expand(value) for key, value in node.items()}
        return node


@cache
def parse(relative: str) -> Bicep:
    path = INFRA / relative
    return Bicep(path, BicepParser().parse(file_path=path))


def render(node: Any) -> str:
    """An expression as text: names joined by dots, functions as `name(args)`."""
    if isinstance(node, dict) and "operator" in node:
        operator = node["operator"]
        operands = operator["operands"]
        if operator["type"] == "property_accessor":
            return f"{render(operands['operand_1'])}.{render(operands['operand_2'])}"
        return f"{operator['type']}({', '.join(render(value) for value in operands.values())})"
    if isinstance(node, dict) and "function" in node:
        function = node["function"]
        arguments = ", ".join(render(value) for value in function["parameters"].values())
        return f"{function['type']}({arguments})"
    return str(node)


def module_files() -> list[str]:
    return [str(path.relative_to(INFRA)) for path in sorted(INFRA.rglob("*.bicep"))]
