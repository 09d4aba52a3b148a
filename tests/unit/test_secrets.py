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
