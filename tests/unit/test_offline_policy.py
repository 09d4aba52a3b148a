"""The offline policy's choices, from transcripts it could be shown: read the seeds, search the
question, open its results at the question's most telling word, settle a question only when two
pages agree on more than the question's own words (recording both), never on a mention, a copy
or code, and submit a question no two pages agree on as a limitation; and the fixed pipeline's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from baselines.fixed import decide_fixed
from baselines.offline import decide_offline
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget, Decision, RefusedSeed, ToolCall
from workflows.scope import RunScope
from workflows.tools import (
    EvidenceData,
    FinishArgs,
    PageWindow,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    SearchData,
    SearchResultItem,
    ToolArgs,
    ToolData,
    WindowPassage,
)
from workflows.transcript import ToolResult, TranscriptEntry

BRIEF = Brief.model_validate(
    {
        "question": "How does functools cache function results?",
        "questions": [{"id": "Q1", "text": "What does the typed argument of lru_cache do?"}],
        "allowed_hosts": ["docs.example", "mirror.example"],
        "limits": {"min_sources": 2},
    }
)
PAGE = "https://docs.example/functools.html"
OTHER = "https://docs.example/whatsnew.html"
MIRROR = "https://mirror.example/functools.html"
SIGNATURE = "@functools.lru_cache(user_function, typed=False)"
ANSWER = "If typed is set to true, function arguments of different types will be cached separately."
AGAIN = "With typed set to true, lru_cache keeps the results of arguments of different types apart."
MENTION = "The lru_cache decorator takes a typed argument, like the other caching decorators here."
SESSION = ">>> @lru_cache(typed=True)\n... def f(x): return x\n>>> f(3), f(3.0)"


def entry(step: int, args: ToolArgs, data: ToolData | None, ok: bool = True) -> TranscriptEntry:
    name = {
        SearchArgs: "search_web",
        ReadPageArgs: "read_page",
        RecordEvidenceArgs: "record_evidence",
        FinishArgs: "finish_research",
    }[type(args)]
    call = ToolCall(name=name, arguments=args.model_dump_json())
    return TranscriptEntry(step=step, call=call, result=ToolResult(ok=ok, data=data), args=args)


def read(
    step: int, source_id: str, url: str, *texts: str, find: str = "lru_cach"
) -> TranscriptEntry:
    """A `find` window of the page: each text a passage under the function's signature."""
    passages = [
        WindowPassage(id=f"{source_id}.P{n}", text=text, section=SIGNATURE)
        for n, text in enumerate(texts, start=1)
    ]
    window = PageWindow(source_id=source_id, url=url, passages=passages)
    return entry(step, ReadPageArgs(url=url, find=find), window)


def recorded(step: int, evidence_id: str, source_id: str, quote: str) -> TranscriptEntry:
    args = RecordEvidenceArgs(
        question_id="Q1", source_id=source_id, claim=quote, stance="supports", quote=quote
    )
    return entry(step, args, EvidenceData(evidence_id=evidence_id, quote=quote))


def next_call(
    *transcript: TranscriptEntry,
    policy: Callable[[DecideInput], Decision] = decide_offline,
    brief: Brief = BRIEF,
    seeds: tuple[str, ...] = (),
    steps_left: int = 10,
    unreadable: tuple[str, ...] = (),
) -> tuple[str, dict[str, Any]]:
    budget = Budget(steps_left=steps_left, searches_left=3, pages_left=5, tokens_left=10_000)
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""),
        brief=brief,
        transcript=list(transcript),
        budget=budget,
        seeds=list(seeds),
        unreadable_seeds=[
            RefusedSeed(url=url, reason="could not be read: 404") for url in unreadable
        ],
    )
    call = policy(request).tool_calls[0]
    return call.name, json.loads(call.arguments)


SEARCHED = entry(
    1,
    SearchArgs(query=BRIEF.questions[0].text),
    SearchData(
        results=[
            SearchResultItem(url=PAGE, title="functools", snippet="@functools.lru_cache(...)"),
            SearchResultItem(url=MIRROR, title="functools (mirror)", snippet="lru_cache"),
            SearchResultItem(url=OTHER, title="What's new", snippet="lru_cache now takes typed"),
        ]
    ),
)


def test_the_question_is_searched_then_its_result_opened_at_its_most_telling_word() -> None:
    assert next_call() == ("search_web", {"query": BRIEF.questions[0].text})
    assert next_call(SEARCHED) == ("read_page", {"url": PAGE, "find": "lru_cach"})


def test_seed_urls_are_read_before_searching_and_an_unreadable_one_is_skipped() -> None:
    seeded = BRIEF.model_copy(update={"seed_urls": [OTHER, PAGE]})
    name, arguments = next_call(brief=seeded, unreadable=(OTHER,))
    assert (name, arguments["url"]) == ("read_page", PAGE)
    looked = read(1, "S1", PAGE, MENTION, find=arguments["find"])
    name, arguments = next_call(looked, brief=seeded)
    assert (name, arguments["url"]) == ("read_page", OTHER)
    unrelated = "The sorted() builtin takes a key function and a reverse flag."
    other = read(2, "S2", OTHER, unrelated, find=arguments["find"])
    assert next_call(looked, other, brief=seeded)[0] == "search_web", "no two seeds agree"


def test_one_page_answering_is_not_enough_the_next_result_is_read() -> None:
    name, arguments = next_call(SEARCHED, read(2, "S1", PAGE, ANSWER))
    assert (name, arguments["url"]) == ("read_page", MIRROR)


def test_two_pages_that_say_the_same_answer_are_both_recorded_and_cited() -> None:
    pages = [SEARCHED, read(2, "S1", PAGE, ANSWER), read(3, "S2", OTHER, AGAIN)]
    name, arguments = next_call(*pages)
    assert (name, arguments["source_id"], arguments["quote"]) == ("record_evidence", "S1", ANSWER)
    first = recorded(4, "E001", "S1", ANSWER)
    name, arguments = next_call(*pages, first)
    assert (name, arguments["source_id"], arguments["quote"]) == ("record_evidence", "S2", AGAIN)
    name, arguments = next_call(*pages, first, recorded(5, "E002", "S2", AGAIN))
    assert name == "finish_research"
    assert [f["evidence_ids"] for f in arguments["findings"]] == [["E001", "E002"]]
    assert arguments["limitations"] == "None identified."


def test_a_mention_on_another_page_does_not_settle_the_question() -> None:
    """Both sentences hold the question's words; only one says what typed does."""
    unrelated = "The sorted() builtin takes a key function and a reverse flag."
    pages = [SEARCHED, read(2, "S1", PAGE, ANSWER), read(3, "S2", MIRROR, unrelated)]
    pages.append(read(4, "S3", OTHER, MENTION))
    name, arguments = next_call(*pages)
    assert name == "finish_research", "every result read, nothing recorded"
    assert arguments["findings"] == []
    assert "No two sources were found to agree on Q1" in arguments["limitations"]


def test_a_copy_of_a_page_is_not_a_second_page() -> None:
    """A mirror shows the same passages: its sentences agree with the original's, and the gate
    would count them as one source."""
    mirrored = [read(2, "S1", PAGE, ANSWER, AGAIN), read(3, "S2", MIRROR, AGAIN, ANSWER)]
    name, arguments = next_call(SEARCHED, *mirrored)
    assert (name, arguments.get("url")) == ("read_page", OTHER)


def test_code_is_never_quoted() -> None:
    pages = [SEARCHED, read(2, "S1", PAGE, SESSION, ANSWER), read(3, "S2", OTHER, SESSION)]
    assert next_call(*pages)[0] == "read_page", "a session agrees with nothing"


def test_a_refused_record_is_not_tried_again() -> None:
    pages = [SEARCHED, read(2, "S1", PAGE, ANSWER), read(3, "S2", OTHER, AGAIN)]
    args = RecordEvidenceArgs(
        question_id="Q1", source_id="S1", claim=ANSWER, stance="supports", quote=ANSWER
    )
    refused = entry(4, args, None, ok=False)
    name, arguments = next_call(*pages, refused)
    assert arguments.get("quote") != ANSWER and name != "record_evidence"


def test_the_last_step_submits_what_there_is() -> None:
    pages = [SEARCHED, read(2, "S1", PAGE, ANSWER), recorded(3, "E001", "S1", ANSWER)]
    assert next_call(*pages, steps_left=2)[0] == "read_page"
    assert next_call(*pages, steps_left=1)[0] == "finish_research"
    assert next_call(SEARCHED, steps_left=1)[0] == "read_page", "nothing to submit yet"


def test_an_optional_question_waits_for_the_required_ones() -> None:
    optional = BRIEF.questions[0].model_copy(update={"required": False})
    other = optional.model_copy(
        update={"id": "Q2", "text": "What does maxsize do?", "required": True}
    )
    both = BRIEF.model_copy(update={"questions": [optional, other]})
    assert next_call(brief=both) == ("search_web", {"query": "What does maxsize do?"})


def test_the_fixed_pipeline_records_the_first_result_s_best_sentence_and_submits_it() -> None:
    """It has no judgement of its own: one page, its best sentence, a finding."""
    first = read(2, "S1", PAGE, SESSION, MENTION)
    assert next_call(policy=decide_fixed) == ("search_web", {"query": BRIEF.questions[0].text})
    assert next_call(SEARCHED, policy=decide_fixed)[0] == "read_page"
    name, arguments = next_call(SEARCHED, first, policy=decide_fixed)
    assert (name, arguments["quote"]) == ("record_evidence", MENTION)
    name, arguments = next_call(
        SEARCHED, first, recorded(3, "E001", "S1", MENTION), policy=decide_fixed
    )
    assert name == "finish_research"
    assert [f["evidence_ids"] for f in arguments["findings"]] == [["E001"]]
