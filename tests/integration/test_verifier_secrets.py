"""A verifier provider that hands a worker's secret back in its verdict (the sentence, the reason,
the model's name): the verdict the workflow gets and the ledger keeps carries no form of it, as
`decide`'s turns carry none (`activities.secrets`). Real `verify` activity, real ledger, the
OpenAI-compatible fake server behind the real `openai` client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
from openai import AsyncOpenAI
from psycopg_pool import AsyncConnectionPool
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.model import VerifierActivities
from activities.model.decide import ModelClient
from runtime.options import ChatOptions, VerifierSettings
from tests.fakes.openai_server import FakeOpenAI, Reply, VerifierRequest, VerifierScript, serve
from tests.fakes.secret_forms import forms
from workflows.models import Brief
from workflows.scope import RunScope
from workflows.verification import Claim, ClaimQuote, VerifyInput

MODEL_KEY = "sk-verifier-Secret-0123456789abcdef"
DATABASE_PASSWORD = "pg-Password-9876543210zyxw"
QUOTE = "Harbor Queue moves a failing message to the dead-letter queue after 5 attempts."


def echoing(secret: str) -> VerifierScript:
    def verifier(request: VerifierRequest) -> Reply:
        if "dead-letter" in request.claim:  # the secret in the supporting sentence
            return {"verdict": "supported", "sentence": f"{QUOTE} {secret}", "reason": "it is"}
        # a sentence truly copied, so the reason is kept: the secret in the reason
        return {"verdict": "contradicted", "sentence": QUOTE, "reason": f"see {secret}"}

    return verifier


@pytest.fixture
async def ledger(pg_url: str) -> AsyncIterator[Ledger]:
    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        pg_url, open=False, max_size=4
    )
    await pool.open(wait=True)
    yield Ledger(pool)
    await pool.close()


@pytest.mark.parametrize("secret", [MODEL_KEY, DATABASE_PASSWORD])
@pytest.mark.parametrize("form", ["exact", "base64", "reversed"])
async def test_a_verdict_carries_no_form_of_a_secret(
    ledger: Ledger, pg_url: str, secret: str, form: str
) -> None:
    shown = forms(secret)[form]
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    brief = Brief(question="What happens to a failing message?", allowed_hosts=["docs.example"])
    await ledger.start_run(run_id, brief, "2025-01-02T03:04:05+00:00")
    quotes = [ClaimQuote(evidence_id="E001", question_id="Q1", text=QUOTE)]
    claims = [
        Claim(number=number, text=text, questions=[brief.question], quotes=quotes)
        for number, text in [
            (1, "A failing message moves to the dead-letter queue after 5 attempts."),
            (2, "A failing message is deleted after 5 attempts."),
        ]
    ]
    fake = FakeOpenAI(lambda turn, messages: {"content": "unused"}, verifier=echoing(shown))
    with serve(fake) as url:
        # Closed in the block: the server keeps the connection alive, as a real provider does.
        async with AsyncOpenAI(base_url=url, api_key=MODEL_KEY, max_retries=0) as openai:
            client = ModelClient(openai=openai)
            chat = ChatOptions(
                provider="openai",
                secrets={"RESEARCH_MODEL_API_KEY": MODEL_KEY, "DATABASE_URL": DATABASE_PASSWORD},
            )
            verifier = VerifierSettings(provider="openai", base_url=url, api_key=MODEL_KEY)
            activities = VerifierActivities(verifier, chat, ledger, client)
            request = VerifyInput(scope=RunScope.tool_of(run_id, "", 3, 0, ""), claims=claims)
            result = await ActivityEnvironment().run(activities.verify, request)
    assert len(fake.verifier_requests) == 2
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT sentence, reason, model FROM research.verdicts WHERE run_id = %s "
            "ORDER BY claim_no",
            (run_id,),
        ).fetchall()
    assert len(rows) == 2
    kept = " ".join([result.model_dump_json(), *(str(field) for row in rows for field in row)])
    every = [secret, *forms(secret).values()]
    assert [f for f in every if f.lower() in kept.lower()] == [], kept
    # A sentence that lost its secret is no copy of the quote: the claim is not supported; the
    # contradiction stands, its reason without the secret.
    assert [verdict.verdict for verdict in result.verdicts] == ["not_supported", "contradicted"]
    assert result.verdicts[1].reason == "see [redacted]"
