"""Model output is data: a property-based fuzz of tool-call parsing and dispatch (no exception
escapes, nothing unbounded is kept), and the pure rules that stand behind the gate."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from activities.markdown import as_text
from activities.model import to_decision
from activities.model.provider_errors import excerpt
from runtime.settings import child_environment
from workflows import contracts, gate
from workflows.cleaning import MAX_ARGUMENT_CHARS, MAX_ERROR_CHARS, clean
from workflows.dispatch import ToolDispatcher
from workflows.models import Brief, Evidence, Finding, Report, SourceRef, ToolCall, Usage
from workflows.scope import RunScope
from workflows.state import RunState
from workflows.substance import (
    disagreement,
    distinctive_words,
    evidence_problem,
    figures,
    labelled,
)
from workflows.tools import (
    REGISTRY,
    InvalidCall,
    SearchArgs,
    bounded_call,
    parse_call,
)
from workflows.tools.read_page import ReadPageResult
from workflows.tools.record_evidence import RecordEvidenceResult

BRIEF = Brief.model_validate(
    {
        "question": "How does Harbor Queue deal with failing messages?",
        "questions": [
            {"id": "Q1", "text": "How many delivery attempts before the dead-letter queue?"},
            {"id": "Q2", "text": "What is the default visibility timeout?"},
        ],
        "allowed_hosts": ["docs.example"],
    }
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)

# Deterministic examples (the same on every CI run) and no timing checks: a slow machine must not
# turn the fuzz red; a failure it finds is a bug whatever the seed.
FUZZ: dict[str, Any] = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
names = st.sampled_from([*REGISTRY.names(), "", "x" * 500]) | st.text(max_size=80)
raw_arguments = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=400),
    st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 3_000)),
    st.builds(lambda n: '{"offset": ' + "9" * n + "}", st.integers(1, 6_000)),
    st.dictionaries(st.sampled_from(["query", "url", "source_id", "question_id", "claim",
                                     "stance", "quote", "passage_id", "answer", "findings",
                                     "offset", "find"]), json_values).map(json.dumps),
)  # fmt: skip


async def _no_activity(name: str, request: BaseModel, result_type: type[Any], **_: Any) -> Any:
    if result_type is ReadPageResult:
        return ReadPageResult(source=SourceRef(id="S1", url="https://docs.example/a"))
    if result_type is RecordEvidenceResult:
        return RecordEvidenceResult(error="refused")
    return result_type()


@settings(max_examples=400, **FUZZ)
@given(name=names, arguments=raw_arguments)
def test_any_call_becomes_a_validated_call_or_one_refusal(name: str, arguments: str) -> None:
    call = bounded_call(ToolCall(name=name, arguments=arguments))
    assert len(call.arguments) <= MAX_ARGUMENT_CHARS and clean(call.arguments) == call.arguments
    try:
        parsed = parse_call(call)
    except InvalidCall as refusal:
        assert len(str(refusal)) <= MAX_ERROR_CHARS
        return
    assert type(parsed) in REGISTRY.argument_models().values()


@settings(max_examples=300, **FUZZ)
@given(name=names, arguments=raw_arguments)
def test_dispatch_never_raises_and_keeps_errors_short(name: str, arguments: str) -> None:
    state = RunState.begin(BRIEF, NOW)
    state.sources["S1"] = SourceRef(id="S1", url="https://docs.example/a")
    tools = ToolDispatcher(state, "run", "", _no_activity, lambda: NOW)
    handled = asyncio.run(tools.dispatch(bounded_call(ToolCall(name=name, arguments=arguments))))
    assert handled.result.error is None or len(handled.result.error) <= MAX_ERROR_CHARS
    assert len(handled.result.model_dump_json()) < 20_000


@settings(max_examples=300, **FUZZ)
@given(st.text())
def test_cleaned_text_is_always_storable(text: str) -> None:
    cleaned = clean(text)
    assert "\x00" not in cleaned
    cleaned.encode("utf-8")  # no lone surrogate left


def test_usage_never_counts_below_zero_or_above_the_ceiling() -> None:
    assert Usage(input_tokens=-2_000_000, output_tokens=5).counted() == 5
    assert Usage(input_tokens=10**15, output_tokens=10**15).counted() == 2_000_000


# ---------------------------------------------------------------- evidence must inform


TERMS = distinctive_words(
    BRIEF.questions[0].text, BRIEF.question, [q.text for q in BRIEF.questions]
)


def test_the_topic_is_not_a_distinctive_word() -> None:
    # "Harbor" names the brief's subject; "queue" stays: only the first sub-question says it.
    assert "harbor" not in TERMS
    assert {"delivery", "attempt", "dead-letter"} <= set(TERMS)


def test_a_two_word_quote_is_refused() -> None:
    problem = evidence_problem("Harbor Queue", "", "c", TERMS)
    assert problem is not None and problem.startswith("the quote is too short to inform")


def test_an_unrelated_quote_is_refused_and_its_section_counts() -> None:
    quote = "Set the limit comfortably above your slowest normal processing time."
    problem = evidence_problem(quote, "", "c", TERMS, BRIEF.questions[0].text)
    assert problem == (
        "the quote does not mention what the question asks about (none of: attempts, "
        "dead-letter, delivery, many, queue): record evidence under the question it answers"
    ), "the question's words as it writes them, never stems"
    assert evidence_problem(quote, "Delivery attempts", "c", TERMS) is None


def test_a_table_of_contents_line_informs_only_by_what_follows_its_label() -> None:
    line = "Retries and backoff and Dead-letter queues: what happens when processing fails."
    problem = evidence_problem(line, "Where to start", "c", TERMS)
    assert problem is not None and problem.startswith("the quote is too short to inform: it has 3")
    index = "\n\n".join(
        [
            "Quickstart: install, start a server, send and receive in five minutes.",
            "Visibility timeout and Ordering: the two ideas every consumer author should know.",
            line,
            "Configuration and CLI: every setting and every command.",
        ]
    )
    assert evidence_problem(index, "Where to start", "c", TERMS) == (
        "the quote is a table of contents, not a statement: record the sentence on the page it "
        "points to"
    )
    reference = "\n".join(
        [
            "HARBORQ_CONFIG: path of the configuration file read at start.",
            "HARBORQ_LOG_LEVEL: error, warn, info (default) or debug delivery attempts.",
            "HARBORQ_SERVER: address the CLI connects to for dead-letter work.",
        ]
    )
    assert evidence_problem(reference, "Environment variables", "c", TERMS) is None


def test_a_claim_may_state_only_the_figures_of_its_quote() -> None:
    quote = "After 5 delivery attempts the message moves to the dead-letter queue."
    assert evidence_problem(quote, "", "Five: 5 attempts.", TERMS) is None
    problem = evidence_problem(quote, "", "After 12 attempts.", TERMS)
    assert problem == (
        "the claim states 12 attempts, which the quote does not state: a claim may only say what "
        "its quote says"
    )
    mixed = evidence_problem(quote, "", "After 5\u041e attempts.", TERMS)
    assert mixed is not None and "5\u041e, mixing letters of different scripts" in mixed


def disagree(first: str, second: str) -> tuple[str, str] | None:
    return disagreement(labelled(first), labelled(second))


def test_figures_and_conflicts() -> None:
    assert figures("1,000 requests, 2.1 and 30.0 s, not E001 or Q2") == {"1000", "2.1", "30"}
    assert figures("one minute or 60 seconds") == {"60"}, "amounts in their base unit"
    assert disagree("The timeout is 30 seconds.", "The timeout is 60 s.") == (
        "30 seconds",
        "60 s",
    )
    assert disagree("The timeout is 60 seconds.", "The timeout is 1 minute.") is None
    assert disagree("After 5 attempts.", "Within 30 seconds.") is None, "different kinds"
    assert disagree("Retried 3 times.", "After 5 attempts.") is None, "different things"


# ---------------------------------------------------------------- the gate's new rules


def _evidence(eid: str, qid: str, sid: str, quote: str) -> Evidence:
    return Evidence(id=eid, question_id=qid, source_id=sid, claim="c", stance="supports",
                    quote=quote)  # fmt: skip


SOURCES = {
    sid: SourceRef(id=sid, url=f"https://docs.example/{sid}", content_hash=sid)
    for sid in ("S1", "S2", "S3")
}
EVIDENCE = {
    "E001": _evidence("E001", "Q1", "S1", "After 5 delivery attempts a message is dead-lettered."),
    "E002": _evidence("E002", "Q2", "S2", "The default visibility timeout is 30 seconds."),
    "E003": _evidence("E003", "Q2", "S3", "HarborQ's default visibility timeout is 60 seconds."),
}


def _report(
    limitations: str,
    answer: str = "Dead-lettered after 5 attempts.",
    timeout: str = "The sources disagree: the default visibility timeout is 30 seconds.",
) -> Report:
    return Report(
        answer=answer,
        findings=[
            Finding(text="A message is dead-lettered after 5 delivery attempts.",
                    evidence_ids=["E001"]),
            Finding(text=timeout, evidence_ids=["E002"]),
        ],
        limitations=limitations,
    )  # fmt: skip


def test_a_conflict_is_disclosed_only_by_the_whole_id() -> None:
    for hidden in ("see XE003", "see E0031", "see E003a"):
        verdict = gate.check(_report(hidden), EVIDENCE, SOURCES, BRIEF)
        assert verdict.gaps == [
            "conflicting evidence: E002 (30 seconds) and E003 (60 seconds) disagree on Q2; "
            "cite or name both in the limitations"
        ], hidden
    assert gate.check(_report("Older posts (E003) say 60 s."), EVIDENCE, SOURCES, BRIEF).passed


def test_a_finding_about_a_conflicted_question_states_both_sides() -> None:
    one_side = _report("Older posts (E003) say 60 s.", timeout="The timeout is 30 seconds.")
    assert gate.check(one_side, EVIDENCE, SOURCES, BRIEF).gaps == [
        "finding 2 states one side of a conflict: E002 (30 seconds) and E003 (60 seconds) "
        "disagree on Q2; state both values or say that the sources disagree"
    ]
    both = Report(
        answer="Dead-lettered after 5 attempts.",
        findings=[
            Finding(text="A message is dead-lettered after 5 delivery attempts.",
                    evidence_ids=["E001"]),
            Finding(text="The docs give a 30 seconds default timeout, an older post 60 seconds.",
                    evidence_ids=["E002", "E003"]),
        ],
    )  # fmt: skip
    assert gate.check(both, EVIDENCE, SOURCES, BRIEF).passed


def test_a_mirror_never_conflicts_with_itself() -> None:
    mirrored = {**SOURCES, "S3": SOURCES["S2"].model_copy(update={"id": "S3"})}
    assert gate.conflicts(EVIDENCE, mirrored) == []


def test_an_invented_figure_in_the_answer_is_a_gap() -> None:
    verdict = gate.check(_report("E003 says 60 s.", answer="After 7 attempts."), EVIDENCE,
                         SOURCES, BRIEF)  # fmt: skip
    assert verdict.gaps == [
        "the answer states 7 attempts, which the evidence the findings cite does not state"
    ]


# ---------------------------------------------------------------- reports, secrets, children


def test_model_text_cannot_open_any_markdown_structure() -> None:
    rendered = as_text("### E9\n> quote\n- item\n1. one\n[x](http://e.example) <b> ![i](y) `c`")
    for line in rendered.splitlines():
        assert line[0] == "\\" or line[0].isalnum(), line
    assert "http://" not in rendered, "no autolink"
    assert as_text("red \x1b[31m alert\x07") == "red \ufffd\\[31m alert\ufffd", (
        "no terminal escapes"
    )
    assert re.search(r"(?<!\\)[\[\]<>`!]", rendered) is None, "every bracket is escaped"


def test_every_form_of_a_secret_is_removed() -> None:
    key = "sk-proj-AbCdEf0123456789XyZ"
    encoded = "".join(f"%{ord(c):02x}" for c in key)
    forms = [key, key.lower(), key.upper(), f"{key[:9]} {key[9:]}", f"{key[:5]}\n{key[5:]}",
             encoded, "..." + key[-13:], key[:14] + "..."]  # fmt: skip
    for form in forms:
        kept = excerpt(f"bad request: {form} was refused", (key,))
        assert kept.startswith("bad request: [redacted]"), form
        assert kept.endswith("was refused"), form


def test_child_processes_get_no_secret_variables() -> None:
    env = child_environment(
        {"PATH": "/bin", "OPENAI_API_KEY": "k", "AZURE_CLIENT_SECRET": "s", "GITHUB_TOKEN": "t",
         "DATABASE_URL": "postgresql://u:p@h/d", "MY_PASSWORD": "p", "HOME": "/root"}
    )  # fmt: skip
    assert env == {"PATH": "/bin", "HOME": "/root"}


# ---------------------------------------------------------------- review cases (kept as tests)


def _gate(
    quotes: list[str], finding: str, limitations: str = "", answer: str = "See."
) -> list[str]:
    items = {
        f"E00{n}": _evidence(f"E00{n}", "Q2", f"S{n}", quote) for n, quote in enumerate(quotes, 1)
    }
    report = Report(
        answer=answer,
        findings=[Finding(text=finding, evidence_ids=sorted(items))],
        limitations=limitations,
    )
    return gate.check(report, items, SOURCES, BRIEF.model_copy(update={"questions": [
        BRIEF.questions[1]]})).gaps  # fmt: skip


THIRTY = "The default visibility timeout is 30 seconds."
ALSO_THIRTY = (
    "Harbor Queue hides a received message for 30 seconds by default (its visibility timeout)."
)


def test_a_figure_must_match_in_unit_size_and_every_digit() -> None:
    for invented in ("30 hours", "30k seconds", "ninety seconds", "30.5 seconds"):
        gaps = _gate([THIRTY, ALSO_THIRTY], f"The default visibility timeout is {invented}.")
        assert gaps == [f"finding 1 states {invented}, which the evidence it cites does not state"]
    many = "The default visibility queue holds 1,234,567 messages."
    assert _gate([many, ALSO_THIRTY], "A default visibility queue holds 1,234,571 messages.")
    assert _gate([THIRTY, ALSO_THIRTY], "Since release 9.9.9 the default timeout is 30 seconds.")


def test_honest_restatements_of_a_figure_pass() -> None:
    for honest in ("30 s", "30.0 seconds", "30 seconds (30,000 ms)", "half a minute, 30 sec"):
        assert _gate([THIRTY, ALSO_THIRTY], f"The default visibility timeout is {honest}.") == []


def test_limitations_and_negations_are_checked_too() -> None:
    assert _gate(
        [THIRTY, ALSO_THIRTY], THIRTY, limitations="A post says version 4 made it 900 s."
    ) == [
        "the limitations state 4, which the evidence the run recorded does not state",
        "the limitations state 900 s, which the evidence the run recorded does not state",
    ]
    assert _gate(
        [THIRTY, ALSO_THIRTY], THIRTY, limitations="Harbor Queue silently loses data."
    ) == [
        'the limitations state a fact no recorded quote states ("Harbor Queue silently loses '
        'data."): state facts in a finding that cites evidence; the limitations say what is '
        "open, where sources disagree and what the sources are"
    ]
    assert _gate([THIRTY, ALSO_THIRTY], "The default visibility timeout is not 30 seconds.") == [
        'finding 1 says "not 30 seconds", but none of its cited quotes negates that: say what '
        "the quotes say"
    ]


def test_conflicts_pair_figures_by_what_they_measure() -> None:
    first = "The default visibility timeout is 30 seconds; the heartbeat interval is 5 seconds."
    second = "The default visibility timeout is 60 seconds; the heartbeat interval is 5 seconds."
    assert disagree(first, second) == ("30 seconds", "60 seconds"), "a shared 5 s hides nothing"
    polling = "Harbor Queue waits 5 seconds between polls of the queue."
    assert disagree(THIRTY, polling) is None, "a timeout and a polling interval"
    retried = "A failed job is retried up to 5 times."
    assert disagree(retried, "A failed job is retried for at most 3 attempts.") == (
        "up to 5 times",
        "at most 3 attempts",
    )
    era = "The default is 30 seconds. Releases before 2.0 used 60 seconds."
    assert disagree(era, "HarborQ's default visibility timeout is 60 seconds.") == (
        "30 seconds",
        "60 seconds",
    ), "a figure of an older release is not the current one: the conflict shows"


def test_inflections_meet() -> None:
    terms = distinctive_words("What retry policies apply to cached messages?", "", [])
    quote = "A failed job is retried under the retry policy while its cache entry lives."
    assert evidence_problem(quote, "", "c", terms) is None


def test_tables_email_and_www_links_cannot_be_written() -> None:
    assert as_text("Name\n:--") == "Name\n\\:--"
    assert as_text("_www.evil.example") == "\\_www\\.evil.example"
    assert as_text("write to a@b.example") == "write to a@\u2060b.example"


def test_encoded_and_folded_forms_of_a_secret_are_removed() -> None:
    key = "sk-proj-AbCdEf0123456789XyZ"
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    for form in (basic, key.encode().hex(), "\u200b".join(key), fullwidth, quote(quote(key))):
        assert excerpt(f"bad request: {form} was refused", (key,)) == (
            "bad request: [redacted] was refused"
        ), form


def test_any_shape_of_response_becomes_a_decision() -> None:
    request = contracts.DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""), brief=BRIEF, context_chars=4_000
    )
    shapes: list[Any] = [
        {"choices": [None]},
        {"choices": ["x"]},
        {"choices": [{"message": {"tool_calls": 5}}]},
        {"choices": [{"message": {"tool_calls": [{"id": 10**5000, "function": "search_web"}]}}]},
        {"choices": [{"message": {"content": ["a"] * 10**5}}], "usage": {"prompt_tokens": 0}},
        {"usage": {"prompt_tokens": 10**5000, "completion_tokens": 1}},
    ]
    for shape in shapes:
        decision = to_decision(shape, request)
        assert decision.usage.counted() > 0
        assert len(decision.text) <= 2_000 and len(decision.usage.note) < 200
    sent = {"id": "c", "function": {"name": "search_web", "arguments": {"query": "a"}}}
    args = {"choices": [{"message": {"tool_calls": [sent]}}]}
    call = to_decision(args, request).tool_calls[0]
    assert parse_call(call) == SearchArgs(query="a")


def test_a_derived_figure_is_left_to_a_verifier_or_refused_without_one() -> None:
    items = {
        "E001": _evidence("E001", "Q2", "S1", "Each of the 3 retries waits 30 seconds here."),
        "E002": _evidence("E002", "Q2", "S2", ALSO_THIRTY),
    }
    report = Report(
        answer="See the findings.",
        findings=[Finding(text="The 3 retries wait 90 seconds in all, 30 seconds each.",
                          evidence_ids=["E001", "E002"])],
    )  # fmt: skip
    brief = BRIEF.model_copy(update={"questions": [BRIEF.questions[1]]})
    alone = gate.check(report, items, SOURCES, brief)
    assert alone.gaps == [
        "finding 1 states 90 seconds, which the rules cannot match to the evidence it cites (a "
        "figure derived from it): state the figure as the quote does"
    ]
    verified = gate.check(report, items, SOURCES, brief, verifier=True)
    assert verified.passed
    assert [(item.where, item.text) for item in verified.concerns] == [("finding 1", alone.gaps[0])]
