"""The scrubber: every form of every configured secret is found and removed, and ordinary text
(the demo corpus, a real report) passes untouched."""

from __future__ import annotations

import json

import pytest

from activities.model.provider_errors import excerpt
from activities.secrets import REDACTED, SECRET_REFUSAL, Scrubber, scrubbed_decision
from runtime.settings import PROJECT_ROOT, Settings
from tests.fakes.secret_forms import forms
from workflows.models import Decision, ToolCall, Usage

KEY = "sk-proj-AbCdEf0123456789XyZ"
OTHER = "serper-Key-9876543210fedcba"
SCRUBBER = Scrubber([KEY, OTHER])


@pytest.mark.parametrize(("name", "form"), sorted(forms(KEY).items()))
def test_every_form_of_a_secret_is_found_and_removed(name: str, form: str) -> None:
    text = f"harbor queue {form} dead-letter"
    assert SCRUBBER.holds(text), name
    scrubbed = SCRUBBER.scrub(text)
    assert not SCRUBBER.holds(scrubbed), name
    assert form not in scrubbed and KEY.lower() not in scrubbed.lower()
    assert scrubbed == REDACTED or (REDACTED in scrubbed and "harbor queue" in scrubbed), scrubbed


@pytest.mark.parametrize(("name", "form"), sorted(forms(OTHER).items()))
def test_every_secret_of_the_worker_is_covered(name: str, form: str) -> None:
    assert SCRUBBER.holds(f"query {form}"), name


def test_words_around_a_secret_are_kept() -> None:
    assert (
        SCRUBBER.scrub(f"bad request: {KEY} was refused") == "bad request: [redacted] was refused"
    )
    assert (
        SCRUBBER.scrub(f"Authorization: Bearer {KEY[::-1]}") == "Authorization: Bearer [redacted]"
    )


def test_ordinary_text_passes_untouched() -> None:
    for page in sorted((PROJECT_ROOT / "examples" / "corpus").rglob("*.html")):
        text = page.read_text()
        assert not SCRUBBER.holds(text), page
        assert SCRUBBER.scrub(text) == text


def test_short_secrets_are_not_looked_for() -> None:
    scrubber = Scrubber(["research", "", None])
    assert not scrubber and not scrubber.holds("research the research")


def test_settings_name_every_secret_the_worker_holds() -> None:
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://owner:owner-password-123@db/research",
            "RESEARCH_WORKER_DATABASE_URL": "postgresql://worker:worker-password-456@db/research",
            "TEMPORAL_API_KEY": "temporal-key-0123456789",
            "OPENAI_API_KEY": KEY,
            "AZURE_OPENAI_API_KEY": "azure-key-0123456789",
            "SERPER_API_KEY": OTHER,
        }
    )
    assert settings.secrets() == {
        "DATABASE_URL": "owner-password-123",
        "RESEARCH_WORKER_DATABASE_URL": "worker-password-456",
        "TEMPORAL_API_KEY": "temporal-key-0123456789",
        "OPENAI_API_KEY": KEY,
        "AZURE_OPENAI_API_KEY": "azure-key-0123456789",
        "SERPER_API_KEY": OTHER,
        "RESEARCH_VERIFIER_API_KEY": KEY,  # the verifier uses the model's key unless given its own
    }


def test_a_call_carrying_a_secret_is_refused_and_kept_without_it() -> None:
    decision = Decision(
        tool_calls=[
            ToolCall(id="c1", name="search_web", arguments=f'{{"query": "{KEY[::-1]}"}}'),
            ToolCall(id="c2", name="search_web", arguments='{"query": "visibility timeout"}'),
        ],
        text=f"my key is {KEY}",
        usage=Usage(input_tokens=1, output_tokens=1, note=f"input {OTHER}"),
        model=KEY,
    )
    kept = scrubbed_decision(decision, SCRUBBER)
    first, second = kept.tool_calls
    assert first.refusal == SECRET_REFUSAL and first.arguments == '{"query": "[redacted]"}'
    assert second == decision.tool_calls[1], "a clean call is untouched"
    assert (kept.text, kept.model, kept.usage.note) == (
        f"my key is {REDACTED}",
        REDACTED,
        f"input {REDACTED}",
    )
    assert not any(SCRUBBER.holds(text) for text in (kept.model_dump_json(), SECRET_REFUSAL))


def test_provider_errors_lose_every_secret_of_the_worker() -> None:
    for form in (*forms(KEY).values(), *forms(OTHER).values()):
        kept = excerpt(f"bad request: {form} was refused", (KEY, OTHER))
        assert not SCRUBBER.holds(kept), form
        assert kept.startswith("bad request:"), form


@pytest.mark.parametrize(("name", "form"), sorted(forms(KEY).items()))
def test_a_form_inside_tool_arguments_is_found_however_json_escapes_it(
    name: str, form: str
) -> None:
    escaped = "".join(f"\\u{ord(char):04x}" for char in form)
    for arguments in (json.dumps({"query": form}), f'{{"query": "{escaped}"}}'):
        assert SCRUBBER.holds(arguments), (name, arguments)
        assert not SCRUBBER.holds(SCRUBBER.scrub(arguments)), (name, arguments)


def test_a_key_given_in_a_provider_url_or_the_telemetry_string_is_a_secret() -> None:
    ikey = "0f1e2d3c-4b5a-6978-8a9b-acbdcedf0011"
    settings = Settings.from_env(
        {
            "RESEARCH_SEARCH_PROVIDER": "searxng",
            "SEARXNG_URL": "https://searx.internal.example/search?format=json&token=searx-token-98765",
            "OPENAI_BASE_URL": "https://gateway-user:gateway-pass-24680@llm.internal.example/v1",
            "RESEARCH_VERIFIER_BASE_URL": "https://llm.internal.example/v1?api-key=verifier-key-13579",
            "APPLICATIONINSIGHTS_CONNECTION_STRING": (
                f"InstrumentationKey={ikey};"
                "IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/"
            ),
        }
    )
    held = settings.secrets()
    assert held["SEARXNG_URL"] == "searx-token-98765"
    assert held["OPENAI_BASE_URL"] == "gateway-pass-24680"
    assert held["APPLICATIONINSIGHTS_CONNECTION_STRING"] == ikey
    assert held["RESEARCH_VERIFIER_BASE_URL"] == "verifier-key-13579"
    assert "format" not in str(held.values()) and "applicationinsights.azure" not in str(held)
    scrubber = Scrubber(held)
    assert scrubber.scrub(f"the page says {ikey} and searx-token-98765") == (
        "the page says [redacted] and [redacted]"
    )
    assert not scrubber.holds("Send telemetry to Application Insights in West Europe.")
    assert "searx-token" not in repr(settings) and ikey not in repr(settings)


def test_a_url_without_credentials_holds_none() -> None:
    from runtime.settings import instrumentation_key, url_credentials

    assert url_credentials("https://searx.example/search?format=json&q=x") == []
    assert url_credentials(None) == [] and instrumentation_key(None) == ""
    assert url_credentials("https://TOKEN-abc-123456@host.example/") == ["TOKEN-abc-123456"]
