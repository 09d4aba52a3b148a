"""The offline policy's choices, from transcripts it could be shown: jump with `find`, record the
best prose excerpt with its best sentence, look for a second source only while one is missing."""

from __future__ import annotations

import json
from typing import Any

from activities.offline import decide_offline
from workflows.contracts import DecideInput
from workflows.models import (
    Brief,
    Budget,
    FinishArgs,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    ToolArgs,
    ToolCall,
    ToolResult,
    TranscriptEntry,
)
from workflows.results import (
    EvidenceData,
    GateFailed,
    PageWindow,
    SearchData,
    SearchResultItem,
    ToolData,
    WindowPassage,
)

BRIEF = Brief.model_validate(
    {
        "question": "How does functools cache function results?",
        "questions": [{"id": "Q1", "text": "What does the typed argument of lru_cache do?"}],
        "allowed_hosts": ["docs.example"],
        "limits": {"min_sources": 2},
    }
)
PAGE = "https://docs.example/functools.html"
OTHER = "https://docs.example/whatsnew.html"
ANSWER = (
    "If typed is set to true, function arguments of different types will be cached separately. "
    "For example, f(3) and f(3.0) will be treated as distinct calls with distinct results."
)


def entry(step: int, args: ToolArgs, data: ToolData | None, ok: bool = True) -> TranscriptEntry:
    name = {
        SearchArgs: "search_web",
        ReadPageArgs: "read_page",
        RecordEvidenceArgs: "record_evidence",
        FinishArgs: "finish_research",
    }[type(args)]
    call = ToolCall(name=name, arguments=args.model_dump_json())
    return TranscriptEntry(step=step, call=call, result=ToolResult(ok=ok, data=data), args=args)


def window(source_id: str, url: str, *texts: str) -> PageWindow:
    passages = [
        WindowPassage(id=f"{source_id}.P{n}", text=text) for n, text in enumerate(texts, start=1)
    ]
    return PageWindow(source_id=source_id, url=url, passages=passages)


def next_call(*transcript: TranscriptEntry) -> tuple[str, dict[str, Any]]:
    budget = Budget(steps_left=10, searches_left=3, pages_left=5, tokens_left=10_000)
    request = DecideInput(
        run_id="r", turn=1, brief=BRIEF, transcript=list(transcript), budget=budget
    )
    call = decide_offline(request).tool_calls[0]
    return call.name, json.loads(call.arguments)


SEARCHED = entry(
    1,
    SearchArgs(query=BRIEF.questions[0].text),
    SearchData(results=[SearchResultItem(url=PAGE), SearchResultItem(url=OTHER)]),
)
FIRST_WINDOW = entry(
    2,
    ReadPageArgs(url=PAGE),
    window("S1", PAGE, "functools — Higher-order functions", "@functools.lru_cache(maxsize=128)"),
)


def test_a_window_without_the_answer_is_searched_with_find_not_paged() -> None:
    name, arguments = next_call(SEARCHED, FIRST_WINDOW)

    assert (name, arguments) == ("read_page", {"find": "lru_cach", "source_id": "S1"})


def test_after_its_finds_the_best_prose_excerpt_is_quoted_with_its_best_sentence() -> None:
    signature = "@functools.lru_cache(user_function, typed=False)"
    first = entry(3, ReadPageArgs(source_id="S1", find="lru_cach"), window("S1", PAGE, signature))
    assert next_call(SEARCHED, FIRST_WINDOW, first) == (
        "read_page",
        {"find": "argument", "source_id": "S1"},
    ), "a weak match waits for the next word"
    second = entry(
        4, ReadPageArgs(source_id="S1", find="argument"), window("S1", PAGE, signature, ANSWER)
    )

    name, arguments = next_call(SEARCHED, FIRST_WINDOW, first, second)

    assert name == "record_evidence"
    assert arguments["quote"] == ANSWER, "the signature line is not prose; sentences to 160 chars"
    assert arguments["claim"] == ANSWER.split(". ")[0] + "."


def test_a_second_source_is_sought_only_while_one_is_missing() -> None:
    found = entry(3, ReadPageArgs(source_id="S1", find="lru_cach"), window("S1", PAGE, ANSWER))
    recorded = entry(
        4,
        RecordEvidenceArgs(
            question_id="Q1", source_id="S1", claim="c", stance="supports", passage_id="S1.P1"
        ),
        EvidenceData(evidence_id="E001", quote=ANSWER),
    )
    gap = "the cited evidence comes from 1 independent source(s); at least 2 are required"
    failed = entry(
        5,
        FinishArgs(answer="a"),
        GateFailed(gaps=[gap], finish_attempts_left=2),
        ok=False,
    )

    assert next_call(SEARCHED, FIRST_WINDOW, found, recorded, failed) == (
        "read_page",
        {"url": OTHER},
    )
    strong = "With lru_cache, if typed is true, the arguments of different types are cached apart."
    other = entry(6, ReadPageArgs(url=OTHER), window("S2", OTHER, strong))
    name, arguments = next_call(SEARCHED, FIRST_WINDOW, found, recorded, failed, other)
    assert (name, arguments["source_id"]) == ("record_evidence", "S2")
    second = entry(
        7,
        RecordEvidenceArgs(
            question_id="Q1", source_id="S2", claim="c", stance="supports", passage_id="S2.P1"
        ),
        EvidenceData(evidence_id="E002", quote=strong),
    )
    name, arguments = next_call(SEARCHED, FIRST_WINDOW, found, recorded, failed, other, second)
    assert name == "finish_research"
    assert arguments["findings"][0]["evidence_ids"] == ["E001", "E002"]
