"""Settings.from_env: defaults, provider inference, and one-sentence errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.settings import PROJECT_ROOT, Settings, SettingsError


def test_defaults_run_offline_on_the_local_stack() -> None:
    settings = Settings.from_env({})

    assert settings.model_provider == "offline"
    assert settings.search_provider == "corpus"
    assert settings.temporal_address == "localhost:7233"
    assert settings.temporal_namespace == "default"
    assert settings.temporal_api_key is None
    assert settings.task_queue == "research"
    assert settings.database_url is None
    assert settings.state_dir == (PROJECT_ROOT / ".research").resolve()
    assert settings.corpus_dir == (PROJECT_ROOT / "examples" / "corpus").resolve()
    assert settings.ui_port == 8233


def test_values_come_from_the_environment(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "RESEARCH_STATE_DIR": str(tmp_path),
            "DATABASE_URL": "postgresql://localhost/research",
            "TEMPORAL_ADDRESS": "temporal.internal:7233",
            "RESEARCH_TASK_QUEUE": "research-test",
            "RESEARCH_UI_PORT": "9233",
            "RESEARCH_TEMPERATURE": "0.5",
        }
    )

    assert settings.state_dir == tmp_path.resolve()
    assert settings.database_url == "postgresql://localhost/research"
    assert settings.temporal_address == "temporal.internal:7233"
    assert settings.task_queue == "research-test"
    assert settings.ui_port == 9233
    assert settings.temperature == 0.5


@pytest.mark.parametrize(
    "environ",
    [
        {"OPENAI_API_KEY": "sk-test"},
        {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"},
        {"RESEARCH_MODEL_PROVIDER": "OpenAI", "OPENAI_API_KEY": "sk-test"},
    ],
)
def test_a_model_endpoint_selects_the_openai_provider(environ: dict[str, str]) -> None:
    assert Settings.from_env(environ).model_provider == "openai"


def test_an_explicit_offline_provider_wins_over_a_key() -> None:
    settings = Settings.from_env({"RESEARCH_MODEL_PROVIDER": "offline", "OPENAI_API_KEY": "sk"})

    assert settings.model_provider == "offline"


def test_the_api_key_never_shows_in_the_settings_repr() -> None:
    settings = Settings.from_env({"OPENAI_API_KEY": "sk-secret-value"})

    assert "sk-secret-value" not in repr(settings)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RESEARCH_UI_PORT", "eighty"),
        ("RESEARCH_MAX_OUTPUT_TOKENS", "1.5"),
        ("RESEARCH_MAX_SNAPSHOT_CHARS", "lots"),
        ("RESEARCH_TEMPERATURE", "warm"),
        ("RESEARCH_FETCH_TIMEOUT_SECONDS", "10s"),
    ],
)
def test_a_malformed_number_is_one_sentence_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})

    message = str(raised.value)
    assert name in message
    assert repr(value) in message
    assert "\n" not in message


def test_openai_without_a_key_names_the_missing_variable() -> None:
    with pytest.raises(SettingsError, match="OPENAI_API_KEY") as raised:
        Settings.from_env({"RESEARCH_MODEL_PROVIDER": "openai"})

    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("RESEARCH_MODEL_PROVIDER", "anthropic"), ("RESEARCH_SEARCH_PROVIDER", "bing")],
)
def test_an_unknown_provider_is_refused(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})
