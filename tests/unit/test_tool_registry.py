"""The tool registry: a spec with a missing or clashing part is refused with every problem named,
and what is derived from the specs (schemas, labels, where activities run, how stored results and
arguments read back) is what the model and the workflow have always had."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, TypeAdapter

from workflows.models import ToolCall
from workflows.tools import (
    REGISTRY,
    EvidenceData,
    GateFailed,
    GatePassed,
    PageWindow,
    Registry,
    SearchArgs,
    SearchData,
    ToolData,
    ToolSpec,
    tool_schemas,
)
from workflows.tools import read_page as read_page_tool
from workflows.tools import search_web as search_tool
from workflows.tools.read_page import READ_PAGE
from workflows.tools.record_evidence import RECORD_EVIDENCE
from workflows.tools.search_web import SEARCH_WEB
from workflows.transcript import ToolResult, TranscriptEntry

SEARCH = search_tool.SPEC
READ = read_page_tool.SPEC


def test_the_four_tools_are_registered_in_the_order_the_model_is_offered_them() -> None:
    assert REGISTRY.names() == ["search_web", "read_page", "record_evidence", "finish_research"]
    assert [tool["function"]["name"] for tool in tool_schemas()] == REGISTRY.names()
    assert Registry([REGISTRY.get(name) for name in REGISTRY.names()])  # each spec is complete


def test_every_parameter_the_model_is_offered_is_described_and_kind_is_not_offered() -> None:
    for tool in tool_schemas():
        properties = tool["function"]["parameters"]["properties"]
        assert properties, tool["function"]["name"]
        for name, schema in properties.items():
            assert schema.get("description"), f"{tool['function']['name']}.{name}"
    assert '"kind"' not in json.dumps(tool_schemas())


def test_a_spec_missing_a_part_cannot_be_written() -> None:
    fields = {field.name: getattr(SEARCH, field.name) for field in dataclasses.fields(SEARCH)}
    del fields["compact"]  # every part is said, "none" included
    with pytest.raises(TypeError, match="compact"):
        ToolSpec(**fields)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"parameters": {}}, "parameter 'query' has no description"),
        ({"parameters": {"query": " "}}, "parameter 'query' has an empty description"),
        ({"parameters": {"query": "q", "page": "p"}}, "'page' is described but is no parameter"),
        ({"description": ""}, "it has no description"),
        ({"label": ""}, "it has no trace label"),
        ({"name": "Search Web"}, "its name must be lower-case letters"),
        ({"results": ()}, "it declares no result model"),
        ({"arguments": BaseModel}, "its argument model is not a ToolArgs"),
        ({"verbatim": frozenset({"quote"})}, "verbatim 'quote' is no parameter"),
    ],
)
def test_an_incomplete_spec_is_refused_naming_what_is_missing(
    change: dict[str, Any], problem: str
) -> None:
    spec = dataclasses.replace(SEARCH, **change)
    with pytest.raises(ValueError, match="incomplete") as refused:
        Registry([spec])
    assert problem in str(refused.value)


def test_a_result_needs_its_own_kind() -> None:
    class Untagged(ToolData):
        value: str

    class Clashing(ToolData):
        kind: str = "search_results"

    registry = Registry([SEARCH])
    for model, problem in [(Untagged, "has no kind"), (Clashing, "has no kind")]:
        spec = dataclasses.replace(SEARCH, name="other", results=(model,))
        assert any(problem in text for text in registry.problems(spec))
    taken = dataclasses.replace(SEARCH, name="other")
    assert "result kind 'search_results' is taken" in registry.problems(taken)
    assert "a tool of that name is registered already" in registry.problems(SEARCH)


def test_labels_and_where_each_activity_runs_come_from_the_specs() -> None:
    assert REGISTRY.label("read_page") == "read_page"
    assert REGISTRY.label("drop_tables") == "unknown" and REGISTRY.label("") == "(none)"
    runs = {
        name: (spec.runs.name, spec.runs.local, spec.runs.heartbeat)
        for name in REGISTRY.names()
        if (spec := REGISTRY.get(name)) is not None and spec.runs is not None
    }
    assert runs == {
        "search_web": (SEARCH_WEB, "when_search_is_local", True),
        "read_page": (READ_PAGE, "when_page_is_local", True),
        "record_evidence": (RECORD_EVIDENCE, "always", False),
    }


def test_stored_results_read_back_by_their_kind_alone() -> None:
    window = {"source_id": "S1", "url": "https://a.example/", "passages": []}
    cases: list[tuple[dict[str, Any], type[ToolData]]] = [
        ({"kind": "search_results", "results": []}, SearchData),
        ({"kind": "page_window", **window}, PageWindow),
        ({"kind": "evidence", "evidence_id": "E001", "quote": "q"}, EvidenceData),
        ({"kind": "gate_failed", "gaps": ["g"], "finish_attempts_left": 1}, GateFailed),
        ({"kind": "gate_passed", "passed": True}, GatePassed),
    ]
    for stored, model in cases:
        read = ToolResult.model_validate({"ok": True, "data": stored}).data
        assert type(read) is model
        again = ToolResult.model_validate_json(ToolResult(ok=True, data=read).model_dump_json())
        assert again.data == read and f'"kind":"{read.kind}"' in again.model_dump_json()
    with pytest.raises(ValueError, match="does not match any of the expected tags"):
        ToolResult.model_validate({"ok": True, "data": {"kind": "nope"}})
    with pytest.raises(ValueError, match="Unable to extract tag using discriminator 'kind'"):
        ToolResult.model_validate({"ok": True, "data": {"results": []}})  # no guess by its fields


def test_the_results_union_is_made_from_the_registered_tools() -> None:
    class Listed(ToolData):
        kind: Literal["listed"] = "listed"

    listing = dataclasses.replace(SEARCH, name="list_things", results=(Listed,))
    read = TypeAdapter(Registry([SEARCH, listing]).results())
    assert type(read.validate_python({"kind": "listed"})) is Listed
    assert type(read.validate_python({"kind": "search_results", "results": []})) is SearchData
    with pytest.raises(ValueError, match="does not match any of the expected tags"):
        TypeAdapter(Registry([SEARCH, READ]).results()).validate_python({"kind": "listed"})
    assert Registry([SEARCH]).results() is SearchData  # a union of one is its member


def test_stored_arguments_read_back_as_the_named_tool_s() -> None:
    entry = TranscriptEntry(
        step=1,
        call=ToolCall(name="search_web", arguments='{"query": "q"}'),
        result=ToolResult(ok=True, data=SearchData(results=[])),
        args=SearchArgs(query="q"),
    )
    again = TranscriptEntry.model_validate_json(entry.model_dump_json())
    assert again == entry and type(again.args) is SearchArgs
    assert '"args":{"query":"q"}' in entry.model_dump_json(), "arguments carry no kind"
    with pytest.raises(ValueError, match="arguments of an unknown tool"):
        TranscriptEntry.model_validate(
            {**entry.model_dump(), "call": {"name": "drop_tables"}, "args": {"query": "q"}}
        )
