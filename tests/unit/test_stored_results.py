"""Every tool result the repository holds recorded (histories, exports) reads back by its `kind`:
a history's transcript entries carry their kind as stored; an export's steps from before results
had a kind get their tool's as they are read (`starter.export.with_result_kind`, the twin of
migration 023_step_result_kinds)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from starter.export import load_export, with_result_kind
from workflows.tools import REGISTRY
from workflows.transcript import TranscriptEntry

TESTS = Path(__file__).parent.parent
HISTORIES = sorted((TESTS / "histories").glob("*.json")) + sorted(
    TESTS.glob("exports/*/history*.json")
)
EXPORTS = sorted(path.parent for path in TESTS.glob("exports/*/run.json"))


def _payloads(value: Any) -> Iterator[Any]:
    """The JSON values of a history's payloads, wherever they sit in its events."""
    if isinstance(value, dict):
        metadata = value.get("metadata")
        encoding = metadata.get("encoding", "") if isinstance(metadata, dict) else ""
        if isinstance(value.get("data"), str) and base64.b64decode(encoding) == b"json/plain":
            yield json.loads(base64.b64decode(value["data"]))
            return
        for item in value.values():
            yield from _payloads(item)
    elif isinstance(value, list):
        for item in value:
            yield from _payloads(item)


def _entries(value: Any) -> Iterator[dict[str, Any]]:
    """The transcript entries in a payload (decide's records, a continuation's tail, ...)."""
    if isinstance(value, dict):
        if {"step", "call", "result"} <= value.keys() and isinstance(value["result"], dict):
            yield value
        for item in value.values():
            yield from _entries(item)
    elif isinstance(value, list):
        for item in value:
            yield from _entries(item)


def _check(entry: TranscriptEntry) -> None:
    data = entry.result.data
    if data is not None:
        spec = REGISTRY.of(data)
        assert spec is not None and spec.name == entry.call.name, (entry.step, data.kind)


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.name)
def test_every_result_in_a_recorded_history_carries_its_kind(path: Path) -> None:
    history = json.loads(path.read_text(encoding="utf-8"))
    entries = [entry for payload in _payloads(history) for entry in _entries(payload)]
    for stored in entries:
        data = stored["result"].get("data")
        assert data is None or "kind" in data, f"step {stored['step']} of {path.name}"
        _check(TranscriptEntry.model_validate(stored))


def test_the_recorded_histories_hold_results() -> None:
    """The test above reads something: the openai histories carry decide's step records."""
    entries = [
        entry
        for path in HISTORIES
        for payload in _payloads(json.loads(path.read_text(encoding="utf-8")))
        for entry in _entries(payload)
    ]
    assert sum(entry["result"].get("data") is not None for entry in entries) >= 20


@pytest.mark.parametrize("folder", EXPORTS, ids=lambda folder: folder.name)
def test_every_step_of_a_recorded_export_reads_back_with_its_kind(folder: Path) -> None:
    rows, _ = load_export(folder)
    entries = [step.entry for step in rows.steps if step.entry is not None]
    assert len(entries) == len(rows.steps) > 0
    for entry in entries:
        _check(entry)


def test_a_step_stored_before_kinds_gets_its_tool_s_kind() -> None:
    def step(name: str, data: dict[str, Any] | None) -> dict[str, Any]:
        return {"step": 1, "entry": {"call": {"name": name}, "result": {"ok": True, "data": data}}}

    def kind(row: dict[str, Any]) -> str | None:
        data = row["entry"]["result"]["data"]
        return None if data is None else data.get("kind")

    assert kind(with_result_kind(step("search_web", {"results": []}))) == "search_results"
    assert kind(with_result_kind(step("read_page", {"source_id": "S1"}))) == "page_window"
    assert kind(with_result_kind(step("record_evidence", {"quote": "q"}))) == "evidence"
    assert kind(with_result_kind(step("finish_research", {"passed": True}))) == "gate_passed"
    assert kind(with_result_kind(step("finish_research", {"gaps": []}))) == "gate_failed"
    tagged = step("search_web", {"kind": "page_window"})
    assert with_result_kind(tagged) == tagged, "a stored kind is kept"
    assert kind(with_result_kind(step("drop_tables", {"x": 1}))) is None
    assert with_result_kind(step("search_web", None)) == step("search_web", None)
    assert with_result_kind({"step": 1, "entry": None}) == {"step": 1, "entry": None}
