"""Tool-call parsing, the run state's rules (IDs, targets, budget, extensions) and compaction."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from workflows import context
from workflows.models import (
    Brief,
    Budget,
    Evidence,
    ExtendLimitsInput,
    Limits,
    SearchHit,
    SourceRef,
    StopReason,
    ToolCall,
)
from workflows.state import MAX_SEEDS, RunState
from workflows.tools import (
    FinishArgs,
    InvalidCall,
    PageWindow,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    SearchData,
    SearchResultItem,
    WindowPassage,
    parse_call,
)
from workflows.tools.spec import ReadTarget
from workflows.transcript import ToolResult, TranscriptEntry

START = datetime(2026, 1, 1, tzinfo=UTC)
SEED = "https://a.example/seed"
FOUND = "https://b.example/found"


def tool_call(name: str, arguments: Any) -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(name=name, arguments=raw)


def refusal(call: ToolCall) -> str:
    with pytest.raises(InvalidCall) as error:
        parse_call(call)
    sentence = str(error.value)
    assert "\n" not in sentence
    return sentence


# ------------------------------------------------------------ parse_call


def test_valid_calls_parse_into_their_argument_models() -> None:
    assert parse_call(tool_call("search_web", {"query": "ttl"})) == SearchArgs(query="ttl")
    assert parse_call(tool_call("read_page", {"source_id": "S1", "offset": 40})) == ReadPageArgs(
        source_id="S1", offset=40
    )
    assert isinstance(parse_call(tool_call("finish_research", {"answer": "a"})), FinishArgs)
    assert parse_call(
        tool_call(
            "record_evidence",
            {
                "question_id": "Q1",
                "source_id": "S1",
                "claim": "c",
                "stance": "supports",
                "quote": "q",
            },
        )
    ) == RecordEvidenceArgs(
        question_id="Q1", source_id="S1", claim="c", stance="supports", quote="q"
    )


def test_an_unknown_tool_is_named_with_the_known_ones() -> None:
    assert refusal(tool_call("browse", {"url": SEED})) == (
        "unknown tool 'browse'; the tools are search_web, read_page, record_evidence, "
        "finish_research"
    )


def test_invalid_json_is_refused() -> None:
    assert refusal(tool_call("search_web", '{"query": ')).startswith(
        "arguments of search_web are not valid JSON: "
    )


@pytest.mark.parametrize("raw", ['["ttl"]', '"ttl"', "null", "3"])
def test_arguments_that_are_not_an_object_are_refused(raw: str) -> None:
    assert refusal(tool_call("search_web", raw)) == "arguments of search_web must be a JSON object"


def test_a_wrong_argument_type_names_the_field() -> None:
    assert refusal(tool_call("search_web", {"query": 5})) == (
        "invalid arguments for search_web: query: Input should be a valid string"
    )
    assert refusal(tool_call("read_page", {"url": SEED, "offset": "far"})).startswith(
        "invalid arguments for read_page: offset: "
    )


def test_an_unknown_argument_is_refused() -> None:
    assert refusal(tool_call("search_web", {"query": "ttl", "pages": 3})) == (
        "invalid arguments for search_web: pages: Extra inputs are not permitted"
    )


def test_both_url_and_source_id_are_refused() -> None:
    assert refusal(tool_call("read_page", {"url": SEED, "source_id": "S1"})) == (
        "invalid arguments for read_page: give exactly one of url or source_id"
    )


def test_neither_passage_nor_quote_is_refused() -> None:
    args = {"question_id": "Q1", "source_id": "S1", "claim": "c", "stance": "supports"}

    assert refusal(tool_call("record_evidence", args)) == (
        "invalid arguments for record_evidence: give exactly one of passage_id or quote"
    )


def test_an_unknown_stance_is_refused() -> None:
    args = {"question_id": "Q1", "source_id": "S1", "claim": "c", "stance": "maybe", "quote": "q"}

    assert refusal(tool_call("record_evidence", args)).startswith(
        "invalid arguments for record_evidence: stance: "
    )


# ------------------------------------------------------------ RunState


def make_state(**limits: int) -> RunState:
    brief = Brief.model_validate(
        {
            "question": "q?",
            "questions": [{"id": "Q1", "text": "timeout"}, {"id": "Q2", "text": "attempts"}],
            "allowed_hosts": ["a.example", "b.example"],
            "seed_urls": [SEED],
            "limits": limits,
        }
    )
    state = RunState.begin(brief, START)
    state.discovered[FOUND] = SearchHit(url=FOUND, snippet="found by a search")
    return state


def target_of(state: RunState, args: ReadPageArgs) -> ReadTarget:
    """What the read_page tool asks the state for these arguments."""
    return state.read_target(args.url, args.source_id)


def check(state: RunState, args: RecordEvidenceArgs) -> None:
    """The state's check of record_evidence's arguments, as the tool asks it."""
    state.check_evidence(args.question_id, args.source_id, args.passage_id)


def store(state: RunState, target: ReadTarget, ok: bool = True) -> None:
    """What the workflow keeps after a read: the URL's source ID and the source (never its body)."""
    state.url_index[target.url] = target.source_id
    state.sources[target.source_id] = SourceRef(id=target.source_id, url=target.url, ok=ok)


def add_evidence(state: RunState, question_id: str = "Q1", source_id: str = "S1") -> str:
    evidence_id = state.next_evidence_id()
    state.evidence[evidence_id] = Evidence(
        id=evidence_id,
        question_id=question_id,
        source_id=source_id,
        claim="c",
        stance="supports",
        quote="q",
    )
    return evidence_id


def target_refusal(state: RunState, **args: Any) -> str:
    with pytest.raises(InvalidCall) as error:
        target_of(state, ReadPageArgs(**args))
    return str(error.value)


def test_ids_are_assigned_in_order() -> None:
    state = make_state()

    first = target_of(state, ReadPageArgs(url=SEED))
    store(state, first)
    second = target_of(state, ReadPageArgs(url=FOUND))
    store(state, second)

    assert (first.source_id, second.source_id) == ("S1", "S2")
    assert add_evidence(state) == "E001"
    assert add_evidence(state) == "E002"


def test_a_new_seed_or_search_result_url_is_a_fetch() -> None:
    state = make_state()

    assert target_of(state, ReadPageArgs(url=SEED)) == ReadTarget(
        url=SEED, source_id="S1", fetch=True
    )
    assert target_of(state, ReadPageArgs(url=f"  {FOUND} ")).fetch


def test_a_stored_page_is_reread_without_a_fetch() -> None:
    state = make_state()
    store(state, target_of(state, ReadPageArgs(url=SEED)))

    by_url = target_of(state, ReadPageArgs(url=SEED, offset=500))
    by_id = target_of(state, ReadPageArgs(source_id="S1", find="ttl"))

    assert by_url == ReadTarget(url=SEED, source_id="S1", fetch=False)
    assert by_id == ReadTarget(url=SEED, source_id="S1", fetch=False)


def test_a_url_neither_seed_nor_search_result_is_refused() -> None:
    assert target_refusal(make_state(), url="https://a.example/guessed") == (
        "https://a.example/guessed is neither a seed URL nor a search result: search first"
    )


def test_an_off_list_host_is_refused_even_when_found_by_search() -> None:
    state = make_state()
    state.discovered["https://evil.example/x"] = SearchHit(url="https://evil.example/x")

    assert target_refusal(state, url="https://evil.example/x") == (
        "https://evil.example/x is not on an allowed host (a.example, b.example)"
    )


def test_an_unknown_source_id_is_refused_naming_the_known_ones() -> None:
    state = make_state()
    assert target_refusal(state, source_id="S1") == "unknown source_id S1; known: none yet"

    store(state, target_of(state, ReadPageArgs(url=SEED)))
    assert target_refusal(state, source_id="S7") == "unknown source_id S7; known: S1"


def test_evidence_must_come_from_a_page_that_was_read() -> None:
    state = make_state()
    store(state, target_of(state, ReadPageArgs(url=SEED)))
    store(state, target_of(state, ReadPageArgs(url=FOUND)), ok=False)  # a failed fetch

    def evidence_refusal(**changes: str) -> str:
        args = {"question_id": "Q1", "source_id": "S1", "claim": "c", "stance": "supports"}
        args.update(changes)
        with pytest.raises(InvalidCall) as error:
            check(state, RecordEvidenceArgs.model_validate({"quote": "q", **args}))
        return str(error.value)

    assert evidence_refusal(question_id="Q9") == (
        "unknown question_id Q9; the questions are Q1, Q2"
    )
    assert evidence_refusal(source_id="S2") == (
        "unknown source_id S2: evidence must come from a page you have read (known: S1); "
        "search snippets cannot be evidence"
    )
    assert evidence_refusal(source_id="S3").startswith("unknown source_id S3:")
    with pytest.raises(InvalidCall, match=r"passage S2\.P1 does not belong to S1"):
        check(
            state,
            RecordEvidenceArgs(
                question_id="Q1", source_id="S1", claim="c", stance="supports", passage_id="S2.P1"
            ),
        )
    check(
        state,
        RecordEvidenceArgs(
            question_id="Q2", source_id="S1", claim="c", stance="contradicts", passage_id="S1.P3"
        ),
    )


def test_unread_urls_are_seeds_then_search_results_not_yet_read() -> None:
    state = make_state()
    assert state.unread_urls() == [SEED, FOUND]

    store(state, target_of(state, ReadPageArgs(url=SEED)))
    assert state.unread_urls() == [FOUND]


def test_the_budget_is_the_limits_minus_what_was_used() -> None:
    state = make_state(max_steps=10, max_searches=3, max_page_fetches=4, max_tokens=1_000)
    state.counters.steps, state.counters.searches = 4, 1
    state.counters.page_fetches, state.counters.tokens = 2, 250

    assert state.budget(START + timedelta(seconds=100)) == Budget(
        steps_left=6, searches_left=2, pages_left=2, tokens_left=750, seconds_left=200
    )


def test_the_budget_never_goes_negative() -> None:
    state = make_state(max_steps=2, max_tokens=100)
    state.counters.steps, state.counters.tokens = 3, 180

    budget = state.budget(START + timedelta(seconds=900))

    assert (budget.steps_left, budget.tokens_left, budget.seconds_left) == (0, 0, 0)


@pytest.mark.parametrize(
    ("counter", "value", "reason"),
    [
        ("steps", 5, StopReason.STEP_LIMIT),
        ("tokens", 1_000, StopReason.TOKEN_LIMIT),
    ],
)
def test_a_bound_trips_when_reached(counter: str, value: int, reason: StopReason) -> None:
    state = make_state(max_steps=5, max_tokens=1_000)
    assert state.tripped(START) is None

    setattr(state.counters, counter, value - 1)
    assert state.tripped(START) is None
    setattr(state.counters, counter, value)
    assert state.tripped(START) is reason


def test_the_deadline_trips_at_start_plus_deadline_seconds() -> None:
    state = make_state(deadline_seconds=60)

    assert state.tripped(START + timedelta(seconds=59)) is None
    assert state.tripped(START + timedelta(seconds=60)) is StopReason.DEADLINE


def test_an_operator_finish_comes_before_the_other_bounds() -> None:
    state = make_state(max_steps=1)
    state.counters.steps = 1
    state.finish_requested = True

    assert state.tripped(START) is StopReason.OPERATOR_FINISH


def test_extend_raises_limits() -> None:
    state = make_state(max_steps=5)

    limits = state.extend(ExtendLimitsInput(max_steps=9, max_tokens=200_000))

    assert limits == Limits(max_steps=9, max_tokens=200_000)
    assert state.limits == limits
    assert state.budget(START).steps_left == 9


@pytest.mark.parametrize(
    ("request_", "sentence"),
    [
        (ExtendLimitsInput(max_steps=4), "max_steps can only be raised: it is 5, asked 4"),
        (ExtendLimitsInput(max_steps=5), "max_steps can only be raised: it is 5, asked 5"),
        (ExtendLimitsInput(max_steps=1001), "max_steps 1001 is above its ceiling of 1000"),
        (
            ExtendLimitsInput(max_steps=9, deadline_seconds=86_401),
            "deadline_seconds 86401 is above its ceiling of 86400",
        ),
        (ExtendLimitsInput(), "name at least one limit to extend"),
    ],
)
def test_extend_refuses_lowering_and_values_above_ceilings(
    request_: ExtendLimitsInput, sentence: str
) -> None:
    state = make_state(max_steps=5)

    with pytest.raises(ValueError) as error:
        state.extend(request_)

    assert str(error.value) == sentence
    assert state.limits == Limits(max_steps=5), "a refused extension changes nothing"


# ------------------------------------------------------------ context compaction


def window(step: int, source_id: str, chars: int) -> TranscriptEntry:
    passages = [WindowPassage(id=f"{source_id}.P1", text="x" * chars)]
    data = PageWindow(source_id=source_id, url=f"{SEED}/{source_id}", passages=passages)
    return TranscriptEntry(
        step=step,
        call=tool_call("read_page", {"source_id": source_id}),
        result=ToolResult(ok=True, data=data),
    )


def search(step: int) -> TranscriptEntry:
    return TranscriptEntry(
        step=step,
        call=tool_call("search_web", {"query": "ttl"}),
        result=ToolResult(
            ok=True, data=SearchData(results=[SearchResultItem(url=SEED, snippet="y" * 300)])
        ),
    )


def texts(transcript: list[TranscriptEntry]) -> list[str]:
    return [
        entry.result.data.passages[0].text[:10]
        if isinstance(entry.result.data, PageWindow)
        else entry.call.name
        for entry in transcript
    ]


TRANSCRIPT = [window(1, "S1", 1_000), search(2), window(3, "S2", 1_000), window(4, "S3", 1_000)]


def test_a_transcript_that_fits_is_unchanged() -> None:
    assert context.compact(TRANSCRIPT, context.size(TRANSCRIPT)) == TRANSCRIPT


def test_the_oldest_window_is_compacted_first() -> None:
    compacted = context.compact(TRANSCRIPT, context.size(TRANSCRIPT) - 500)

    assert texts(compacted) == [context.COMPACTED[:10], "search_web", "x" * 10, "x" * 10]
    assert context.size(compacted) <= context.size(TRANSCRIPT) - 500
    assert compacted[0].result.data == PageWindow(
        source_id="S1",
        url=f"{SEED}/S1",
        passages=[WindowPassage(id="S1.P1", offset=0, text=context.COMPACTED)],
    )
    assert TRANSCRIPT[0] == window(1, "S1", 1_000), "the run's own transcript is untouched"


def test_the_latest_window_is_never_compacted() -> None:
    compacted = context.compact(TRANSCRIPT, 100)

    assert texts(compacted) == [
        context.COMPACTED[:10],
        "search_web",
        context.COMPACTED[:10],
        "x" * 10,
    ]
    assert context.size(compacted) > 100, "still over: the caller ends the run context_limit"


def evidence(step: int, source_id: str, ok: bool = True) -> TranscriptEntry:
    args = RecordEvidenceArgs(
        question_id="Q1", source_id=source_id, claim="c", stance="supports", quote="x" * 10
    )
    return TranscriptEntry(
        step=step,
        call=tool_call("record_evidence", args.model_dump_json()),
        result=ToolResult(ok=ok),
        args=args,
    )


def test_the_page_text_recorded_evidence_rests_on_is_compacted_last() -> None:
    """S1's window holds the quote recorded from it: S2's, newer, goes first; once every other
    is compacted, S1's goes too, and a refused record rests on nothing."""
    transcript = [window(1, "S1", 1_000), evidence(2, "S1"), *TRANSCRIPT[1:]]

    compacted = context.compact(transcript, context.size(transcript) - 500)
    assert texts(compacted)[0] == "x" * 10, "the evidence's page stays"
    assert texts(compacted)[3] == context.COMPACTED[:10], "a newer page without evidence goes"
    compacted = context.compact(transcript, 100)
    assert texts(compacted)[0] == context.COMPACTED[:10], "then it goes too"
    refused = [window(1, "S1", 1_000), evidence(2, "S1", ok=False), *TRANSCRIPT[1:]]
    compacted = context.compact(refused, context.size(refused) - 500)
    assert texts(compacted)[0] == context.COMPACTED[:10], "refused: oldest first, as before"


def test_other_entries_are_never_compacted() -> None:
    only_searches = [search(1), search(2)]

    assert context.compact(only_searches, 10) == only_searches


def test_nul_and_lone_surrogates_in_arguments_are_cleaned() -> None:
    parsed = parse_call(tool_call("search_web", '{"query": "a\\u0000b\\ud800c"}'))

    assert parsed == SearchArgs(query="a\ufffdb\ufffdc")


# ------------------------------------------------------------ operator seeds


def test_operator_seeds_are_capped_with_the_brief_s_own_counted() -> None:
    state = make_state()
    urls = [f"https://a.example/{n}" for n in range(MAX_SEEDS + 1)]

    added = state.add_seeds(urls)

    assert added.accepted == urls[: MAX_SEEDS - 1], "the brief's seed counts too"
    assert [r.reason for r in added.refused] == [
        f"is one too many: a run keeps at most {MAX_SEEDS} seed URLs"
    ] * 2
    assert state.added_seeds() == added.accepted
    assert state.seeds[0] == SEED


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://b.example:99999/x", "is not a URL (check its host and port)"),
        ("https://[::1]/x", "names an IP address, not a host name"),
        ("https://2130706433/x", "names an IP address, not a host name"),
        ("mailto:ops@a.example", "is not an http(s) URL"),
        ("https://a.example/" + "x" * 2_100, "is longer than 2,048 characters"),
        ("https://c.example/x", "is on c.example, not an allowed host (a.example, b.example)"),
    ],
)
def test_each_refused_operator_seed_says_why(url: str, reason: str) -> None:
    state = make_state()

    added = state.add_seeds([url])

    assert (added.accepted, [r.reason for r in added.refused]) == ([], [reason])
    assert state.seeds == [SEED]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://ops:s3cret@a.example/x", "https://a.example/x"),
        ("https://ops:s3cret@exa]mple.org/", "https://exa]mple.org/"),  # no parser accepts it
        ("https://ops:s3cret@a.example/p@q?r=s@t#u@v", "https://a.example/p@q?r=s@t#u@v"),
        ("ops:s3cret@a.example/x", "a.example/x"),  # no scheme
    ],
)
def test_a_refused_seed_is_shown_without_its_credentials(url: str, shown: str) -> None:
    state = make_state()

    added = state.add_seeds([url])

    assert [refused.url for refused in added.refused] == [shown]
    assert "s3cret" not in added.model_dump_json()
