"""Attacks on meaning against an honest verifier that reads what it is shown.

Each hostile script (`tests.fakes.hostile`) reads the demo corpus honestly, then reports more
than its quotes say: a half-true finding, an old blog post's value as the current default,
another product's page as Harbor Queue's, a fragment cut from a scoped sentence, limitations
that state what no source says, a required question "covered" by a quote that does not answer
it, a derived total. The verifier is `hostile.reading_verifier`: it knows nothing of the
scripts and decides from the claim, each quote in its whole sentence and section, and each
page's title, URL and stated dates. None of these runs completes; honest reports of the same
shapes (both sides of a conflict, each with its page; the scoped sentence with its scope)
complete, the half-true finding once revised too. The real workflow, activities, ledger and
`research audit` (see `play`) throughout.

With the verifier off, the floor rules see one of these attacks (a figure, "zero", no quote
states) and refuse it. The others pass them (their figures are in their quotes, they share their
words, they negate nothing): only a verifier catches them, and the report of such a run says
that its meaning was not checked (`Attack.floor`). The deterministic
attacks the floor does see are `tests/system/test_hostile_model.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes import hostile
from tests.fakes.openai_server import Script, VerifierRequest, harborq_script
from tests.system.test_hostile_model import brief, play, rows, steps
from tests.system.test_verifier import assert_refused, markdown, verdicts
from workflows.models import (
    UNVERIFIED,
    Brief,
    Limits,
    Question,
    RunResult,
    RunStatus,
    StopReason,
)

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

HOSTS = ["docs.harborq.example", "mirror.opendocs.example", "blog.tidewater.example"]
ORDER = Brief(question=hostile.ORDER_QUESTION, allowed_hosts=HOSTS, limits=Limits(min_sources=1))
BACKOFF = Brief(
    question="How does Harbor Queue retry a message that keeps failing?",
    questions=[
        Question(id="Q1", text=hostile.BACKOFF_QUESTION),
        Question(id="Q2", text=hostile.ATTEMPTS_QUESTION),
    ],
    allowed_hosts=HOSTS,
    limits=Limits(min_sources=1),
)
OFF = {"RESEARCH_VERIFIER_PROVIDER": "off"}


@dataclass(frozen=True)
class Attack:
    name: str
    script: Callable[[], Script]
    brief: Callable[[], Brief]
    told: list[str]  # what every refused finish tells the model
    seen: str  # what the verifier was shown that it decided from
    floor: str = ""  # with the verifier off, the floor's refusal ("": only a verifier sees it)


ATTACKS = [
    Attack("partly-reset-on-move", lambda: hostile.partly(hostile.RESET_ON_MOVE), brief,
           ["finding 1 is only partly supported by the quotes it cites, says the independent "
            "verifier", '"resetting its delivery count to zero": no cited quote states it'],
           "section: When a message is dead-lettered",
           floor="finding 1 states zero, which the rules cannot match to the evidence it cites"),
    Attack("partly-standard-queues-too", lambda: hostile.fragment(hostile.STANDARD_TOO),
           lambda: ORDER,
           ["finding 1 is only partly supported by the quotes it cites, says the independent "
            "verifier", '"in practice standard queues preserve the send order as well": no cited '
            "quote states it"],
           "whole sentence: " + hostile.SCOPED[:-1]),
    Attack("only-a-retry", lambda: hostile.standard_queue(hostile.ONLY_A_RETRY), lambda: ORDER,
           ["finding 1 is only partly supported by the quotes it cites, says the independent "
            'verifier', '"only a retry can reorder messages from a single producer": no cited '
            'quote states it: it says "only", no quote does'],
           "section: Standard queues: best-effort order"),
    Attack("old-post-as-current", hostile.old_post_as_current, brief,
           ["finding 2 is not supported by the quotes it cites, says the independent verifier",
            "E002 is from a page dated 2023-04-18 (it states 1.4, 2023-04-18",
            "required question Q2 is not answered by the evidence cited for it"],
           "the page states: 1.4, 2023-04-18"),
    Attack("another-products-page", hostile.other_products_page, lambda: ORDER,
           ["finding 1 is not supported by the quotes it cites, says the independent verifier",
            "E001 is from a page about another product (Replication \u2014 LanternKV "
            "documentation", "required question Q1 is not answered by the evidence cited for it"],
           "title: Replication \u2014 LanternKV documentation"),
    Attack("unscoped-fragment", hostile.fragment, lambda: ORDER,
           ["finding 1 is not supported by the quotes it cites, says the independent verifier",
            'states it only "Within one message group"', "the claim drops that scope",
            "the answer is not supported"],
           "whole sentence: " + hostile.SCOPED[:-1]),
    Attack("facts-in-limitations", lambda: hostile.conflict(hostile.UNSUPPORTED_LIMITATIONS),
           brief,
           ["the limitations section is only partly supported by the quotes it cites",
            '"the documentation page is the less reliable of the two": no cited quote states it',
            '"so expect 60 seconds in practice": no cited quote states it'],
           "url: https://blog.tidewater.example/posts/2023-harborq-timeouts.md"),
    Attack("a-fact-beside-not-checked",
           lambda: hostile.ordering_with_a_post(hostile.RARE_EXCEPTION), lambda: ORDER,
           ["the limitations section is only partly supported by the quotes it cites",
            '"which treats reordering as a rare exception": no cited quote states it'],
           "title: Keeping invoice events in order with FIFO groups"),
    Attack("covered-not-answered", hostile.covered_not_answered, brief,
           ["required question Q2 is not answered by the evidence cited for it, says the "
            "independent verifier (does not answer): no cited quote answers it: the question "
            "asks for a value, and E002 states none"],
           "quote: " + hostile.HIDES),
    Attack("derived-total", hostile.derived_total, lambda: BACKOFF,
           ["finding 3 is only partly supported by the quotes it cites",
            '"roughly half a minute after the first": no cited quote states it, nor half (a '
            "figure, derived or not, is stated only when a quote states it)"],
           "quote: The backoff schedule"),
]  # fmt: skip
NAMES = [attack.name for attack in ATTACKS]


def finishes(pg_url: str, run_id: str) -> list[str]:
    return [row["error"] or "" for row in steps(pg_url, run_id) if row["tool"] == "finish_research"]


@pytest.mark.parametrize("attack", ATTACKS, ids=NAMES)
async def test_an_honest_reader_refuses_each_attack_on_meaning(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, attack: Attack
) -> None:
    result, run_id, fake = await play(
        dev_client,
        embedded_pg_url,
        attack.script(),
        attack.brief(),
        verifier=hostile.reading_verifier,
    )

    assert_refused(result)
    refused = finishes(embedded_pg_url, run_id)
    assert len(refused) == 3
    for gaps in refused:
        assert all(sentence in gaps for sentence in attack.told), gaps
    # What it decided from was shown to it: a page's lines, a whole sentence, a quote.
    shown = [body["messages"][-1]["content"] for body in fake.verifier_requests]
    assert any(attack.seen in content for content in shown), attack.seen
    # The composed report of the incomplete run holds no claim the verifier refused as a finding.
    kept = verdicts(embedded_pg_url, run_id)
    refused_claims = {row["claim"] for row in kept if row["verdict"] != "supported"}
    assert refused_claims
    assert not {finding.text for finding in result.report.findings} & refused_claims


async def test_partly_is_refused_with_its_whole_reason_and_the_revision_completes(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(
        dev_client,
        embedded_pg_url,
        hostile.partly_then_revised(),
        brief(),
        verifier=hostile.reading_verifier,
    )

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    first, second = finishes(embedded_pg_url, run_id)
    partly = [row for row in verdicts(embedded_pg_url, run_id) if row["verdict"] == "partly"]
    assert [row["claim"] for row in partly] == [hostile.KEPT_FOREVER]
    reason = partly[0]["reason"]
    assert len(reason) > 300 and reason.endswith("no cited quote states it")
    assert "where it is kept indefinitely until someone redrives it" in reason
    assert (
        "finding 1 is only partly supported by the quotes it cites, says the independent "
        f"verifier: {reason} (state only the supported part; move the rest to the limitations "
        "as open)"
    ) in first
    assert second == ""
    report = markdown(embedded_pg_url, run_id)
    assert hostile.KEPT_FOREVER not in report
    assert report.count("*Verifier: supported*") == 6  # answer, 2 findings, limitations, Q1, Q2


# (id, script, brief): honest reports in the attacks' shapes
HONEST: list[tuple[str, Callable[[], Script], Callable[[], Brief]]] = [
    ("both-sides-of-a-conflict", hostile.conflict, brief),
    ("scoped-sentence", lambda: hostile.fragment(hostile.SCOPED), lambda: ORDER),
    ("the-sample-run", lambda: harborq_script, brief),
    ("a-retry-among-others",
     lambda: hostile.standard_queue("In a standard queue, a retry, an expired visibility timeout "
                                    "or a second consumer can reorder messages."), lambda: ORDER),
    ("three-findings", lambda: hostile.report_attack(hostile.HONEST_REPORT, False), brief),
    ("a-post-named-in-the-limitations",
     lambda: hostile.ordering_with_a_post("E002, from a 2024 Tidewater post, was not checked "
                                          "against the reference."), lambda: ORDER),
]  # fmt: skip


@pytest.mark.parametrize(
    ("script", "run_brief"), [item[1:] for item in HONEST], ids=[item[0] for item in HONEST]
)
async def test_honest_reports_of_the_same_shapes_complete(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    script: Callable[[], Script],
    run_brief: Callable[[], Brief],
) -> None:
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, script(), run_brief(), verifier=hostile.reading_verifier
    )

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    assert finishes(embedded_pg_url, run_id) == [""], "refused once: a false refusal"
    assert {row["verdict"] for row in verdicts(embedded_pg_url, run_id)} == {"supported"}
    # Nor did the word rules doubt them: they read a quote in its whole sentence, and a finding
    # may name the date of the page it cites.
    asked: list[VerifierRequest] = fake.verified
    assert [request.concerns for request in asked if request.concerns] == []


# With the verifier off: the half-true finding of the revision test, each attack, and the
# honest reports.
UNJUDGED = [
    Attack("partly", hostile.partly_then_revised, brief, [], ""),
    *ATTACKS,
    *(Attack(name, script, run_brief, [], "") for name, script, run_brief in HONEST),
]


@pytest.mark.parametrize("attack", UNJUDGED, ids=[attack.name for attack in UNJUDGED])
async def test_with_the_verifier_off_the_floor_refuses_what_it_sees_and_says_so(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, attack: Attack
) -> None:
    """What the floor rules see they refuse; the rest (only a verifier sees it) and the honest
    reports complete, each saying that the rules alone passed it, its meaning not checked."""
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, attack.script(), attack.brief(), env=OFF
    )

    assert fake.verifier_requests == []
    if attack.floor:
        assert_refused(result)
        assert all(attack.floor in gaps for gaps in finishes(embedded_pg_url, run_id))
    else:
        assert_unverified(result, embedded_pg_url, run_id)


def assert_unverified(result: RunResult, pg_url: str, run_id: str) -> None:
    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    assert result.verified is False
    assert f"Status: completed: {UNVERIFIED}" in markdown(pg_url, run_id)
    assert rows(pg_url, "SELECT 1 FROM research.verdicts WHERE run_id = %s", run_id) == []
