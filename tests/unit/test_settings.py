"""Settings.from_env: defaults, provider inference, and one-sentence errors for bad values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import worker
from composition.providers import check_model_settings, check_search_settings
from runtime.settings import (
    PROJECT_ROOT,
    SERPER_URL,
    STEPS_PER_EXECUTION,
    Settings,
    SettingsError,
    build_id_of,
    code_build_id,
)
from starter import cli
from tests.conftest import free_port


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


@pytest.mark.parametrize(
    ("name", "value", "choices"),
    [
        ("RESEARCH_MODEL_PROVIDER", "anthropic", "offline, fixed, openai, azure"),
        ("RESEARCH_SEARCH_PROVIDER", "bing", "corpus, serper, searxng"),
        ("RESEARCH_LANE", "both", "auto, fixed, agent"),
    ],
)
def test_an_unknown_provider_is_refused(name: str, value: str, choices: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})

    assert str(raised.value) == f"{name} must be one of {choices}, got {value!r}"


# ---------------------------------------------------------------- model and search providers


def test_provider_defaults() -> None:
    settings = Settings.from_env({})

    assert settings.model == "gpt-4o-mini"
    assert (settings.temperature, settings.max_output_tokens) == (0.0, 1024)
    assert settings.parallel_tool_calls is False
    assert settings.model_timeout_seconds == 120.0
    assert settings.azure_openai_endpoint is None and settings.azure_openai_api_key is None
    assert settings.serper_api_key is None and settings.serper_url == SERPER_URL
    assert settings.searxng_url is None
    assert settings.search_timeout_seconds == 15.0


def test_model_values_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "RESEARCH_MODEL_PROVIDER": "azure",
            "RESEARCH_MODEL": "my-deployment",
            "RESEARCH_MAX_OUTPUT_TOKENS": "2048",
            "RESEARCH_PARALLEL_TOOL_CALLS": "true",
            "RESEARCH_MODEL_TIMEOUT_SECONDS": "45",
            "AZURE_OPENAI_ENDPOINT": "https://name.openai.azure.com",
            "AZURE_OPENAI_API_KEY": " azure-key\n",
            "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
        }
    )

    assert settings.model_provider == "azure"
    assert settings.model == "my-deployment"
    assert settings.max_output_tokens == 2048
    assert settings.parallel_tool_calls is True
    assert settings.model_timeout_seconds == 45.0
    assert settings.azure_openai_endpoint == "https://name.openai.azure.com/openai/v1/"
    assert settings.azure_openai_api_key == "azure-key"
    assert settings.openai_base_url == "http://127.0.0.1:11434/v1"


def test_each_lane_has_its_model_and_a_brief_naming_none_its_default() -> None:
    default = Settings.from_env({"RESEARCH_MODEL": "careful"})
    assert (default.model, default.fixed_model, default.lane) == ("careful", "careful", "auto")
    assert default.chat_options().fixed_model == "careful"
    assert default.research_options().lanes is False  # the offline policy keeps its own loop
    chosen = Settings.from_env(
        {
            "OPENAI_API_KEY": "sk-test",
            "RESEARCH_MODEL": "careful",
            "RESEARCH_FIXED_MODEL": "cheap",
            "RESEARCH_LANE": "Agent",
        }
    )
    assert (chosen.model, chosen.fixed_model, chosen.lane) == ("careful", "cheap", "agent")
    options = chosen.research_options()
    assert (options.lanes, options.default_lane) == (True, "agent")
    assert chosen.chat_options().fixed_model == "cheap"


def test_search_values_come_from_the_environment() -> None:
    serper = Settings.from_env(
        {
            "RESEARCH_SEARCH_PROVIDER": "Serper",
            "SERPER_API_KEY": "serper-key",
            "SERPER_URL": "http://127.0.0.1:8080/search",
            "RESEARCH_SEARCH_TIMEOUT_SECONDS": "5",
        }
    )
    searxng = Settings.from_env(
        {"RESEARCH_SEARCH_PROVIDER": "searxng", "SEARXNG_URL": "http://localhost:8888"}
    )

    assert serper.search_provider == "serper"
    assert (serper.serper_api_key, serper.serper_url) == (
        "serper-key",
        "http://127.0.0.1:8080/search",
    )
    assert serper.search_timeout_seconds == 5.0
    assert (searxng.search_provider, searxng.searxng_url) == ("searxng", "http://localhost:8888")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("yes", True), ("ON", True), ("0", False), ("false", False), ("off", False)],
)
def test_parallel_tool_calls_reads_common_spellings(raw: str, expected: bool) -> None:
    settings = Settings.from_env({"RESEARCH_PARALLEL_TOOL_CALLS": raw})

    assert settings.parallel_tool_calls is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", True), ("1", True), ("true", True), ("0", False), ("false", False), ("No", False)],
)
def test_search_attributes_read_booleans_strictly(raw: str, expected: bool) -> None:
    """`RESEARCH_SEARCH_ATTRIBUTES=false` used to turn the feature on (only "0" was off)."""
    settings = Settings.from_env({"RESEARCH_SEARCH_ATTRIBUTES": raw})

    assert settings.search_attributes is expected


@pytest.mark.parametrize("raw", ["maybe", "2", "disabled"])
def test_an_unknown_search_attributes_value_is_refused(raw: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"RESEARCH_SEARCH_ATTRIBUTES": raw})

    assert str(refused.value) == (
        f"RESEARCH_SEARCH_ATTRIBUTES must be 1 or 0 (true or false), got {raw!r}"
    )


@pytest.mark.parametrize(
    "raw",
    [
        "https://name.openai.azure.com",
        "https://name.openai.azure.com/",
        "https://name.openai.azure.com/openai",
        "https://name.openai.azure.com/openai/v1",
        "https://name.openai.azure.com/openai/v1/",
    ],
)
def test_an_azure_endpoint_becomes_its_openai_v1_base_url(raw: str) -> None:
    settings = Settings.from_env({"AZURE_OPENAI_ENDPOINT": raw})

    assert settings.azure_openai_endpoint == "https://name.openai.azure.com/openai/v1/"


@pytest.mark.parametrize(
    "raw",
    [
        "name.openai.azure.com",
        "http://name.openai.azure.com",  # the key would travel in clear
        "https://name.openai.azure.com/openai/deployments/gpt/chat/completions",
        "https://name.openai.azure.com/openai/v1?api-version=preview",
        "https://user:pw@name.openai.azure.com",
    ],
)
def test_a_malformed_azure_endpoint_is_one_sentence(raw: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"AZURE_OPENAI_ENDPOINT": raw})

    assert str(raised.value) == (
        "AZURE_OPENAI_ENDPOINT must be the https URL of the resource "
        f"(https://NAME.openai.azure.com) or of its /openai/v1 API, got {raw!r}"
    )


@pytest.mark.parametrize("name", ["OPENAI_BASE_URL", "SERPER_URL", "SEARXNG_URL"])
def test_a_url_setting_must_be_an_http_url(name: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: "localhost:8080"})

    assert str(raised.value) == f"{name} must be an http:// or https:// URL, got 'localhost:8080'"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("RESEARCH_PARALLEL_TOOL_CALLS", "maybe", "must be 1 or 0 (true or false)"),
        ("RESEARCH_MODEL_TIMEOUT_SECONDS", "soon", "must be a number"),
        ("RESEARCH_SEARCH_TIMEOUT_SECONDS", "5s", "must be a number"),
    ],
)
def test_a_malformed_provider_value_is_one_sentence(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})

    assert str(raised.value) == f"{name} {message}, got {value!r}"


@pytest.mark.parametrize(
    "environ",
    [
        {"OPENAI_API_KEY": "sk-secret-value"},
        {"RESEARCH_MODEL_PROVIDER": "azure", "AZURE_OPENAI_API_KEY": "sk-secret-value"},
        {"RESEARCH_SEARCH_PROVIDER": "serper", "SERPER_API_KEY": "sk-secret-value"},
    ],
)
def test_no_provider_secret_shows_in_the_settings_repr(environ: dict[str, str]) -> None:
    assert "sk-secret-value" not in repr(Settings.from_env(environ))


@pytest.mark.parametrize(
    "environ",
    [
        {"RESEARCH_MODEL_PROVIDER": "openai"},
        {"RESEARCH_MODEL_PROVIDER": "azure"},
        {"RESEARCH_SEARCH_PROVIDER": "serper"},
        {"RESEARCH_SEARCH_PROVIDER": "searxng"},
    ],
)
def test_a_missing_provider_secret_does_not_stop_commands_that_need_none(
    environ: dict[str, str],
) -> None:
    settings = Settings.from_env(environ)  # what `research status` / `report` read

    assert settings.temporal_address == "localhost:7233"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"RESEARCH_MODEL_PROVIDER": "openai"},
            "RESEARCH_MODEL_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a "
            "local OpenAI-compatible server); set it in the environment",
        ),
        (
            {"RESEARCH_MODEL_PROVIDER": "azure", "AZURE_OPENAI_API_KEY": "key"},
            "RESEARCH_MODEL_PROVIDER=azure needs AZURE_OPENAI_ENDPOINT "
            "(https://NAME.openai.azure.com); set it in the environment",
        ),
    ],
)
def test_building_a_model_client_without_its_settings_names_them(
    environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        check_model_settings(Settings.from_env(environ))

    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"RESEARCH_SEARCH_PROVIDER": "serper"},
            "RESEARCH_SEARCH_PROVIDER=serper needs SERPER_API_KEY (a key from serper.dev); "
            "set it in the environment",
        ),
        (
            {"RESEARCH_SEARCH_PROVIDER": "searxng"},
            "RESEARCH_SEARCH_PROVIDER=searxng needs SEARXNG_URL (the address of a SearXNG "
            "instance with the json format enabled); set it in the environment",
        ),
    ],
)
def test_building_a_search_provider_without_its_settings_names_them(
    environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        check_search_settings(Settings.from_env(environ))

    assert str(raised.value) == message


@pytest.mark.parametrize(
    "environ",
    [
        {"RESEARCH_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"},
        {"RESEARCH_MODEL_PROVIDER": "azure", "AZURE_OPENAI_ENDPOINT": "https://n.openai.azure.com"},
        {"RESEARCH_SEARCH_PROVIDER": "serper", "SERPER_API_KEY": "key"},
        {"RESEARCH_SEARCH_PROVIDER": "searxng", "SEARXNG_URL": "http://127.0.0.1:8888"},
    ],
)
def test_complete_provider_settings_pass_the_check(environ: dict[str, str]) -> None:
    settings = Settings.from_env(environ)

    check_model_settings(settings)
    check_search_settings(settings)


def test_the_worker_exits_with_the_sentence_before_connecting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESEARCH_SEARCH_PROVIDER", "serper")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")  # nothing there: it must not get that far

    assert worker.main() == 2
    assert capsys.readouterr().err == (
        "error: RESEARCH_SEARCH_PROVIDER=serper needs SERPER_API_KEY (a key from serper.dev); "
        "set it in the environment\n"
    )


def test_research_status_runs_without_the_providers_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESEARCH_MODEL_PROVIDER", "azure")
    monkeypatch.setenv("RESEARCH_SEARCH_PROVIDER", "serper")
    monkeypatch.setenv("TEMPORAL_ADDRESS", f"127.0.0.1:{free_port()}")

    code = cli.main(["status", "research-1234"])

    assert code == 1, "it got as far as Temporal: no key or endpoint was asked for"
    assert "cannot reach Temporal" in capsys.readouterr().err


def test_fetcher_values_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "RESEARCH_MAX_DECODED_BYTES": "1000",
            "RESEARCH_LOCAL_HOSTS": " wiki.internal , Mirror.Internal.=10.1.2.3,",
        }
    )

    assert settings.max_decoded_bytes == 1000
    assert settings.local_hosts == ("wiki.internal", "Mirror.Internal.=10.1.2.3")
    assert Settings.from_env({}).local_hosts == ()


@pytest.mark.parametrize(
    "entry", ["https://wiki.internal", "wiki.internal=10.1.2", "wiki.internal:8080", "=10.0.0.1"]
)
def test_a_malformed_local_host_is_one_sentence(entry: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({"RESEARCH_LOCAL_HOSTS": entry})

    assert str(error.value) == (
        f"RESEARCH_LOCAL_HOSTS: local host entry {entry!r} is not `host` or `host=IP address`"
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("RESEARCH_FETCH_TIMEOUT_SECONDS", "0", "must be greater than 0, got '0'"),
        ("RESEARCH_MODEL_TIMEOUT_SECONDS", "-5", "must be greater than 0, got '-5'"),
        ("RESEARCH_SEARCH_TIMEOUT_SECONDS", "nan", "must be a number, got 'nan'"),
        ("RESEARCH_MAX_FETCH_BYTES", "0", "must be greater than 0, got '0'"),
        ("RESEARCH_TEMPERATURE", "inf", "must be a number, got 'inf'"),
        ("RESEARCH_TEMPERATURE", "-0.5", "must be 0 or more, got '-0.5'"),
    ],
)
def test_sizes_and_seconds_must_be_positive_and_finite(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({name: value})

    assert str(error.value) == f"{name} {message}"


def test_temperature_may_be_zero_or_left_to_the_model() -> None:
    assert Settings.from_env({"RESEARCH_TEMPERATURE": "0"}).temperature == 0.0
    assert Settings.from_env({"RESEARCH_TEMPERATURE": "default"}).temperature is None


@pytest.mark.parametrize(
    ("module", "kept_out"),
    [
        ("runtime.settings", "activities"),  # activities read settings, never the other way
        ("activities.ledger", "activities.pages.fetch"),  # storing pages fetches nothing
        ("activities.ledger", "activities.pages.guard"),
    ],
)
def test_layering(module: str, kept_out: str) -> None:
    probe = (
        f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({kept_out!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_build_id_is_the_workflow_codes_unless_named() -> None:
    assert (
        Settings.from_env({}).build_id == code_build_id() == build_id_of(PROJECT_ROOT / "workflows")
    )
    assert Settings.from_env({}).deployment_name == "research"
    named = Settings.from_env(
        {"RESEARCH_BUILD_ID": "2026.12.1+abc", "RESEARCH_DEPLOYMENT_NAME": "r-2"}
    )
    assert (named.deployment_name, named.build_id) == ("r-2", "2026.12.1+abc")


def test_a_changed_workflow_source_is_a_new_build(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "research.py").write_text("RULE = 1\n")
    (tmp_path / "tools" / "read.py").write_text("LIMIT = 2\n")
    (tmp_path / "notes.txt").write_text("not code")
    first = build_id_of(tmp_path)

    (tmp_path / "notes.txt").write_text("still not code")
    assert build_id_of(tmp_path) == first
    (tmp_path / "tools" / "read.py").write_text("LIMIT = 3\n")
    assert build_id_of(tmp_path) != first
    assert first.startswith("wf-") and len(first) == 15


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("RESEARCH_DEPLOYMENT_NAME", "research.prod", "RESEARCH_DEPLOYMENT_NAME must be 1 to 100"),
        ("RESEARCH_DEPLOYMENT_NAME", "x" * 101, "RESEARCH_DEPLOYMENT_NAME must be 1 to 100"),
        ("RESEARCH_BUILD_ID", "build 7", "RESEARCH_BUILD_ID must be 1 to 100"),
        ("RESEARCH_BUILD_ID", "a/b", "RESEARCH_BUILD_ID must be 1 to 100"),
    ],
)
def test_a_malformed_version_setting_is_one_sentence(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_continue_as_new_steps_default_to_the_briefs_history_budget_and_stay_within_it() -> None:
    from workflows import models

    assert STEPS_PER_EXECUTION == models.STEPS_PER_EXECUTION
    assert Settings.from_env({}).research_options().continue_after_steps == 100
    shorter = {"RESEARCH_CONTINUE_AS_NEW_STEPS": "10"}
    assert Settings.from_env(shorter).research_options().continue_after_steps == 10
    with pytest.raises(SettingsError, match="at most 100"):
        Settings.from_env({"RESEARCH_CONTINUE_AS_NEW_STEPS": "101"})
    with pytest.raises(SettingsError, match="greater than 0"):
        Settings.from_env({"RESEARCH_CONTINUE_AS_NEW_STEPS": "0"})
