"""The independent check of meaning end to end: the hostile researcher against an honest scripted
verifier, both behind the real `openai` client (the OpenAI-compatible fake server plays both),
with the real workflow, activities, ledger and `research audit`.

The findings here pass every deterministic rule and are false; only the verifier's verdicts stop
them, and the run never completes on one. A verifier that is down ends the run as a provider does;
one that is off leaves the deterministic checks alone, and the report says so.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes import hostile
from tests.fakes.openai_server import FakeOpenAI, harborq_script, serve
from tests.system.test_hostile_model import (
    assert_audits_clean,
    brief,
    errors,
    hostile_worker,
    play,
    rows,
)
from workflows.models import FinishNowInput, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow
from workflows.verification import NOT_COPIED

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


def verdicts(pg_url: str, run_id: str) -> list[dict[str, Any]]:
    query = (
        "SELECT step, claim_no, claim, verdict, said, sentence, evidence_id, reason, provider, "
        "model, input_tokens, output_tokens FROM research.verdicts WHERE run_id = %s "
        "ORDER BY step, claim_no"
    )
    return rows(pg_url, query, run_id)


def markdown(pg_url: str, run_id: str) -> str:
    saved = rows(pg_url, "SELECT markdown FROM research.reports WHERE run_id = %s", run_id)
    return str(saved[0]["markdown"])


def assert_refused(result: RunResult) -> None:
    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )
    assert result.report.composed


@pytest.mark.parametrize(
    ("attack", "said", "reason"),
    [
        (hostile.inverted_quote, "contradicted", "moves the message to the dead-letter queue"),
        (hostile.stitched_relation, "not supported", "30 seconds is the default visibility"),
        (hostile.off_point, "not supported", "not how many delivery attempts"),
    ],
)
async def test_what_only_meaning_catches_is_refused_by_the_verifier(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    attack: Any,
    said: str,
    reason: str,
) -> None:
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, attack(), brief(), verifier=hostile.honest_verifier
    )

    assert_refused(result)
    finishes = [e for e in errors(embedded_pg_url, run_id) if "coverage gate" in e]
    assert len(finishes) == 3
    expected = f"finding 1 is {'contradicted by' if said == 'contradicted' else said + ' by'}"
    assert all(expected in gaps and reason in gaps for gaps in finishes), finishes[0]
    assert all("finding 2" not in gaps for gaps in finishes), "the honest finding passed"
    # One row per claim (the answer, two findings, the limitations, the coverage of the two
    # required questions) and finish step, the verifier's tokens kept.
    kept = verdicts(embedded_pg_url, run_id)
    assert [(row["claim_no"], row["verdict"]) for row in kept[:3]] == [
        (0, "supported"),
        (1, said.replace(" ", "_")),
        (2, "supported"),
    ]
    assert len(kept) == 18 and all(row["input_tokens"] > 0 for row in kept)
    assert {row["provider"] for row in kept} == {"openai"}
    # The verifier saw the claim, its sub-question and its quotes, and nothing of the run.
    assert len(fake.verifier_requests) == 18
    for body in fake.verifier_requests:
        assert [message["role"] for message in body["messages"]] == ["system", "user"]
        shown = json.dumps(body["messages"])
        assert "untrusted_page" not in shown and "search_web" not in shown
        assert body["response_format"]["type"] == "json_schema"
    # Each finding is shown only its own quotes' sub-questions (claims are asked concurrently:
    # in any order).
    findings = [request for request in fake.verified if request.asked == "Claim (a finding):"]
    subs = {q.text for q in brief().questions}
    assert len(findings) == 6 and all(len(r.questions) > 0 and set(r.questions) <= subs
                                      for r in findings)  # fmt: skip


async def test_a_revised_report_completes_with_its_verdicts_beside_its_findings(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(
        dev_client, embedded_pg_url, hostile.revising(), brief(), verifier=hostile.honest_verifier
    )

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    said = errors(embedded_pg_url, run_id)
    assert "finding 1 is contradicted by the quotes it cites" in said[6]
    report = markdown(embedded_pg_url, run_id)
    assert "Meaning: an independent verifier (openai gpt-4o-mini) judged the answer" in report
    # the answer, both findings, the limitations and the two required questions
    assert report.count("*Verifier: supported* (E00") == 6
    # The verifier's tokens are in the run's counter (and `research audit` agrees: see play).
    kept = verdicts(embedded_pg_url, run_id)
    assert len(kept) == 12


async def test_supported_with_a_sentence_no_quote_holds_counts_as_not_supported(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(
        dev_client,
        embedded_pg_url,
        hostile.inverted_quote(),
        brief(),
        verifier=hostile.lying_verifier,
    )

    assert_refused(result)
    assert NOT_COPIED in errors(embedded_pg_url, run_id)[6]
    kept = verdicts(embedded_pg_url, run_id)
    assert {(row["said"], row["verdict"], row["evidence_id"]) for row in kept} == {
        ("supported", "not_supported", "")
    }


async def test_a_verifier_that_is_down_ends_the_run_as_a_provider_fault(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(
        dev_client,
        embedded_pg_url,
        harborq_script,
        brief(),
        verifier=lambda request: {"status": 401, "error": "bad key"},
    )

    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert "verifier provider openai answered HTTP 401" in result.message
    assert result.report.composed and result.report.notes, "the composed report is saved"
    assert verdicts(embedded_pg_url, run_id) == []


async def test_with_the_verifier_off_the_report_says_deterministic_checks_only(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, fake = await play(
        dev_client,
        embedded_pg_url,
        hostile.inverted_quote(),
        brief(),
        env={"RESEARCH_VERIFIER_PROVIDER": "off"},
    )

    # Off means off: the inversion passes the deterministic checks, and the report says that
    # those were all it passed.
    assert result.status == RunStatus.COMPLETED
    assert fake.verifier_requests == []
    assert verdicts(embedded_pg_url, run_id) == []
    report = markdown(embedded_pg_url, run_id)
    assert "Meaning: not checked. The verifier is off: these findings passed the proof rules" in (
        " ".join(report.split())
    )
    assert result.verified is False


async def test_the_verifier_has_its_own_endpoint_model_and_key(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    verifier = FakeOpenAI(harborq_script, hostile.honest_verifier)
    with serve(verifier) as verifier_url:
        env = {
            "RESEARCH_VERIFIER_BASE_URL": verifier_url,
            "RESEARCH_VERIFIER_MODEL": "judge-1",
            "RESEARCH_VERIFIER_API_KEY": "sk-verifier-0123456789",
        }
        result, run_id, model = await play(
            dev_client, embedded_pg_url, harborq_script, brief(), env=env
        )

    assert result.status == RunStatus.COMPLETED, result.message
    assert model.verifier_requests == [] and len(verifier.verifier_requests) == 6
    assert {body["model"] for body in verifier.verifier_requests} == {"judge-1"}
    assert {h["authorization"] for h in verifier.headers} == {"Bearer sk-verifier-0123456789"}
    assert all("sk-verifier" not in h.get("authorization", "") for h in model.headers)
    assert "independent verifier (openai judge-1)" in markdown(embedded_pg_url, run_id)


async def test_an_operators_finish_is_verified_and_audited(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    script = hostile.recorded_then_rereading()
    run_id = f"verified-finish-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(dev_client, embedded_pg_url, script, hostile.honest_verifier) as (
        queue,
        fake,
    ):
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=40), id=run_id, task_queue=queue
        )
        for _ in range(300):  # until both quotes are recorded
            if (await handle.query(ResearchWorkflow.progress)).evidence_count == 2:
                break
            await asyncio.sleep(0.05)
        # No reason: `research audit` recomposes an operator's report from the history's result
        # message, which does not carry the reason (seen, left alone: not the verifier's).
        await handle.signal(ResearchWorkflow.finish_now, FinishNowInput())
        result: RunResult = await handle.result()
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.OPERATOR_FINISH,
    ), result.message
    kept = verdicts(embedded_pg_url, run_id)
    # its two findings and the coverage of the two required questions (no answer of the model's)
    assert [(row["step"], row["claim_no"]) for row in kept] == [
        (result.counters.steps + 1, number) for number in (1, 2, 3, 4)
    ]
    assert len(fake.verifier_requests) == 4
    assert "Meaning: an independent verifier" in markdown(embedded_pg_url, run_id)
