"""The bounded prompt window: when compaction alone does not fit the context budget, the oldest
entries fold into one digest (`workflows.context.fold`), the newest stay whole, and the prompt
stays within the budget whatever the step count; a transcript that fits is shown as it was."""

from __future__ import annotations

import itertools
import json

import pytest

from activities.model.prompt import messages
from tests.fakes.openai_server import turn_of
from workflows import context
from workflows.contracts import DecideInput
from workflows.models import Brief, Decision, ToolCall
from workflows.scope import RunScope
from workflows.tools import (
    EvidenceData,
    FinishArgs,
    GateFailed,
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

BRIEF = Brief(
    question="How does the queue behave?",
    questions=[{"id": "Q1", "text": "timeout"}, {"id": "Q2", "text": "attempts"}],
    allowed_hosts=["docs.example"],
)
PASSAGE = "The default visibility timeout is 30 seconds. " * 20
QUERIES = ["dead-letter queue", "visibility timeout", "redrive", "attempts", "retention"]


def entry(step: int, name: str, args: ToolArgs | None, result: ToolResult) -> TranscriptEntry:
    arguments = args.model_dump_json() if args is not None else "{}"
    call = ToolCall(id=f"call_{step}", name=name, arguments=arguments)
    return TranscriptEntry(step=step, call=call, result=result, args=args)


def ok(data: ToolData) -> ToolResult:
    return ToolResult(ok=True, data=data)


def search(step: int, query: str) -> TranscriptEntry:
    hits = [
        SearchResultItem(url=f"https://docs.example/{query}/{n}", snippet="s" * 80) for n in (1, 2)
    ]
    return entry(step, "search_web", SearchArgs(query=query), ok(SearchData(results=hits)))


def read(step: int, source: str) -> TranscriptEntry:
    passages = [WindowPassage(id=f"{source}.P{n}", offset=n * 900, text=PASSAGE) for n in (1, 2)]
    window = PageWindow(source_id=source, url=f"https://docs.example/{source}", passages=passages)
    return entry(step, "read_page", ReadPageArgs(source_id=source), ok(window))


def evidence(step: int, number: int, claim: str = "") -> TranscriptEntry:
    evidence_id, source = f"E{number:03d}", f"S{number % 3 + 1}"
    args = RecordEvidenceArgs(
        question_id=f"Q{number % 2 + 1}",
        source_id=source,
        claim=claim or f"claim {number}: the timeout is 30 seconds",
        stance="supports",
        passage_id=f"{source}.P1",
    )
    data = EvidenceData(evidence_id=evidence_id, quote=PASSAGE[:200])
    return entry(step, "record_evidence", args, ok(data))


def refused(step: int, name: str, error: str, data: ToolData | None = None) -> TranscriptEntry:
    return entry(step, name, None, ToolResult(ok=False, error=error, data=data))


def long_transcript(steps: int) -> list[TranscriptEntry]:
    """As bench/long_run's scripted model: three sources read, four quotes recorded, then a search
    every 12th step and re-reads of the three sources until the end."""
    opening = [
        search(1, QUERIES[0]),
        read(2, "S1"),
        evidence(3, 1),
        read(4, "S2"),
        evidence(5, 2),
        read(6, "S3"),
        evidence(7, 3),
        evidence(8, 4),
    ]
    later = [
        search(step, QUERIES[step // 12 % 5]) if step % 12 == 0 else read(step, f"S{step % 3 + 1}")
        for step in range(9, steps + 1)
    ]
    return [*opening, *later][:steps]


def request(budget: int, turn_start: int = 0) -> DecideInput:
    return DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""),
        brief=BRIEF,
        watermark=0,
        context_budget=budget,
        turn_start=turn_start,
    )


def shown(budget: int, entries: list[TranscriptEntry], turn_start: int = 0) -> DecideInput:
    filled = context.filled(request(budget, turn_start), entries)
    assert isinstance(filled, DecideInput), f"over the context budget: {filled}"
    return filled


def ids_shown(filled: DecideInput) -> set[str]:
    folded = {e.id for e in filled.digest.evidence} if filled.digest is not None else set()
    kept = {
        e.result.data.evidence_id
        for e in filled.transcript
        if isinstance(e.result.data, EvidenceData)
    }
    return folded | kept


def test_a_transcript_that_fits_is_shown_as_it_was_with_no_digest() -> None:
    entries = long_transcript(30)
    budget = context.size(context.compact(entries, 10**9))  # exactly what it takes

    filled = shown(budget, entries)

    assert filled.digest is None and filled.transcript == context.compact(entries, budget)
    assert filled.context_chars == context.size(entries)
    assert "digest" not in json.loads(filled.model_dump_json()), "the request's JSON is as before"
    assert not any("folded" in str(m["content"]) for m in messages(filled))
    # Compacted to the very last character it can be: still no digest, as compaction had it.
    smallest = context.size(context.compact(entries, 0))
    compacted = shown(smallest, entries)
    assert compacted.digest is None and compacted.transcript == context.compact(entries, 0)
    assert shown(smallest - 1, entries).digest is not None


def test_over_the_budget_the_oldest_entries_fold_and_the_newest_stay_whole() -> None:
    entries = long_transcript(200)
    budget = 20_000

    filled = shown(budget, entries)

    assert filled.digest is not None
    assert context.size(context.compact(entries, budget)) > budget, "compaction alone: too big"
    assert filled.context_chars == len(context.shown(filled.digest)) + context.size(
        filled.transcript
    )
    assert filled.context_chars <= budget
    kept = len(filled.transcript)
    assert filled.transcript == context.compact(entries[-kept:], budget - len(
        context.shown(filled.digest)))  # fmt: skip
    assert filled.transcript[-1] == entries[-1], "the newest entry is whole"
    assert (filled.digest.first_step, filled.digest.last_step) == (1, 200 - kept)
    assert (200 - kept) % context.FOLD_EVERY == 0, "folded a block at a time"
    assert [s.id for s in filled.digest.sources] == ["S1", "S2", "S3"]
    assert [s.url for s in filled.digest.sources] == [
        f"https://docs.example/S{n}" for n in (1, 2, 3)
    ]
    searched = {s.query: s.times for s in filled.digest.searches}
    assert searched[QUERIES[0]] >= 2 and set(searched) <= set(QUERIES)
    first = filled.digest.evidence[0]
    assert (first.id, first.question_id, first.source_id, first.stance) == (
        "E001",
        "Q2",
        "S2",
        "supports",
    )
    assert first.claim == "claim 1: the timeout is 30 seconds"


def test_the_prompt_stays_bounded_over_a_thousand_steps() -> None:
    budget = 20_000
    entries = long_transcript(1_000)
    sizes, held = [], []
    for steps in [*range(50, 1_001, 50), 999]:
        filled = shown(budget, entries[:steps])
        sizes.append(filled.context_chars)
        assert ids_shown(filled) == {"E001", "E002", "E003", "E004"}, steps
        if filled.digest is not None:  # what it holds, beside its step numbers and counts
            searches = [s.model_copy(update={"times": 0}) for s in filled.digest.searches]
            held.append((searches, filled.digest.sources, filled.digest.evidence))

    assert max(sizes) <= budget
    assert len(held) >= 15, "most of these prompts fold"
    # Repeated searches and re-reads add nothing once folded: the digest stops growing.
    assert held[-1] == held[len(held) // 2]
    assert context.size(entries) > 50 * budget, "what resending every step would cost"


def test_every_evidence_id_of_a_thousand_entries_stays_shown() -> None:
    entries = [
        evidence(step, step) if step % 10 == 0 else read(step, f"S{step % 3 + 1}")
        for step in range(1, 1_001)
    ]

    filled = shown(40_000, entries)

    assert filled.digest is not None
    assert ids_shown(filled) == {f"E{n:03d}" for n in range(10, 1_001, 10)}
    folded = {e.id: e for e in filled.digest.evidence}
    assert folded["E500"].question_id == "Q1" and folded["E500"].source_id == "S3"
    assert folded["E500"].claim == "claim 500: the timeout is 30 seconds"
    assert "E010" in str(messages(filled)[2]["content"]), "sent after the brief, before the steps"


def test_the_fold_is_deterministic_and_changes_once_a_block() -> None:
    entries = long_transcript(400)

    assert shown(20_000, entries) == shown(20_000, list(entries))
    sent = [json.dumps(messages(shown(20_000, entries[:steps]))) for steps in (400, 400)]
    assert sent[0] == sent[1]
    digests = [shown(20_000, entries[:steps]).digest for steps in range(300, 400)]
    changes = sum(a != b for a, b in itertools.pairwise(digests))
    assert 1 <= changes <= 100 // context.FOLD_EVERY + 1


def test_refusals_that_still_matter_are_kept() -> None:
    gate = GateFailed(gaps=["Q2 has no evidence"], finish_attempts_left=2)
    entries = [
        search(1, "a"),
        refused(2, "search_web", "search budget exhausted: read or record instead"),
        refused(3, "record_evidence", "the passage does not hold the claim"),
        evidence(4, 1),  # a later success: the refusal no longer applies
        refused(5, "finish_research", "the coverage gate failed", gate),
        refused(6, "no_such_tool", "unknown tool"),
        *[read(step, "S1") for step in range(7, 60)],
    ]

    filled = shown(8_000, entries)

    assert filled.digest is not None and filled.digest.last_step >= 6
    refusals = {r.tool: r for r in filled.digest.refusals}
    assert set(refusals) == {"search_web", "finish_research"}
    assert refusals["search_web"].error.startswith("search budget exhausted")
    assert refusals["finish_research"].gaps == ["Q2 has no evidence"]


def test_the_latest_turn_is_never_folded() -> None:
    entries = long_transcript(100)

    filled = shown(20_000, entries, turn_start=95)

    assert filled.digest is not None and filled.digest.last_step < 95
    assert [e.step for e in filled.transcript][-6:] == [95, 96, 97, 98, 99, 100]


def test_when_even_the_digest_and_the_latest_entry_do_not_fit_the_run_ends() -> None:
    claim = "a long claim " * 100
    entries = [evidence(step, step, claim) for step in range(1, 101)]

    ended = context.filled(request(20_000), entries)

    assert isinstance(ended, Decision) and ended.over_context
    assert ended.context_chars > 20_000, "the bound is real: no model is asked"
    assert isinstance(context.filled(request(10**6), entries), DecideInput)


def test_a_single_entry_over_the_budget_ends_the_run_as_before() -> None:
    entries = [read(1, "S1")]

    ended = context.filled(request(500), entries)

    assert isinstance(ended, Decision) and ended.over_context
    assert ended.context_chars == context.size(entries)


def test_a_finish_refused_by_the_gate_in_the_kept_steps_is_not_in_the_digest() -> None:
    finish = FinishArgs(answer="a")
    entries = [*long_transcript(100), entry(101, "finish_research", finish, ok(GateFailed(
        gaps=["x"], finish_attempts_left=1)))]  # fmt: skip

    filled = shown(20_000, entries)

    assert filled.digest is not None and filled.digest.refusals == []
    assert filled.transcript[-1] == entries[-1]


def test_the_prompt_says_how_many_steps_it_folded() -> None:
    """A scripted model over HTTP (tests/fakes) counts the steps it was shown to know its turn."""
    entries = long_transcript(333)

    filled = shown(20_000, entries)

    assert filled.digest is not None
    assert turn_of(messages(filled)) == 334
    assert turn_of(messages(shown(10**6, entries[:30]))) == 31


def test_filling_a_turn_serialises_each_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`filled` measures an entry from the newest back, compacting and in the total: it is
    serialised once (and compacted once) whichever path the turn takes."""
    measured: list[int] = []
    measure = context._chars

    def counting(item: TranscriptEntry) -> int:
        measured.append(id(item))
        return measure(item)

    monkeypatch.setattr(context, "_chars", counting)
    smallest = context.size(context.compact(long_transcript(30), 0))
    for count, budget in ((30, 10**9), (30, smallest), (200, 20_000)):  # fits, compacted, folded
        entries = long_transcript(count)
        measured.clear()
        filled = shown(budget, entries)
        assert measured and len(measured) == len(set(measured)), (count, budget)
        monkeypatch.setattr(context, "_chars", measure)
        assert filled.context_chars == shown(budget, entries).context_chars, "as measured before"
        monkeypatch.setattr(context, "_chars", counting)


def test_evidence_folded_away_still_keeps_its_page_in_view() -> None:
    """S1's evidence is folded into the digest; the window of S1 kept after the cut is still
    compacted after S2's, as it would be with the evidence in view."""
    head = [evidence(1 + n, 3) for n in range(context.FOLD_EVERY)]  # E003: from S1
    kept = [read(30, "S1"), read(31, "S2"), read(32, "S3"), search(33, "attempts")]
    entries = head + kept
    folder = context._Folder()
    folder.add(head)
    smaller = context._compacted(kept[0])
    assert smaller is not None
    saved = context.size(kept[:1]) - context.size([smaller])
    # the digest, and room for all but one window whole
    budget = len(context.shown(folder.digest())) + context.size(kept) - saved // 2
    folded = context.fold(entries, budget)
    assert folded is not None
    digest, shown = folded
    assert digest.last_step == context.FOLD_EVERY
    texts = {
        e.result.data.source_id: e.result.data.passages[0].text
        for e in shown
        if isinstance(e.result.data, PageWindow)
    }
    assert texts["S2"] == context.COMPACTED and texts["S1"] == PASSAGE, texts
