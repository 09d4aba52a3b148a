"""RESEARCH_DATABASE_ENTRA and the worker's own database URL and roles: read from the environment,
one-sentence errors for what cannot work."""

from __future__ import annotations

import pytest

from runtime.settings import Settings, SettingsError

AZURE_URL = (
    "postgresql://id-research@pg-research.postgres.database.azure.com/research?sslmode=require"
)


def test_entra_is_off_unless_asked() -> None:
    assert Settings.from_env({}).database_entra is False
    assert Settings.from_env({"DATABASE_URL": AZURE_URL}).database_entra is False


@pytest.mark.parametrize("value", ["1", "true", "yes", "on"])
def test_entra_on_with_a_url_without_password(value: str) -> None:
    settings = Settings.from_env({"DATABASE_URL": AZURE_URL, "RESEARCH_DATABASE_ENTRA": value})

    assert settings.database_entra is True
    assert settings.database_url == AZURE_URL


def test_entra_needs_a_database_url() -> None:
    with pytest.raises(SettingsError, match="RESEARCH_DATABASE_ENTRA=1 needs DATABASE_URL"):
        Settings.from_env({"RESEARCH_DATABASE_ENTRA": "1"})


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://id:secret@pg.postgres.database.azure.com/research",
        "host=pg.postgres.database.azure.com user=id password=secret dbname=research",
    ],
)
def test_entra_refuses_a_url_with_a_password(url: str) -> None:
    with pytest.raises(SettingsError, match="remove the password from DATABASE_URL") as raised:
        Settings.from_env({"DATABASE_URL": url, "RESEARCH_DATABASE_ENTRA": "1"})

    assert "secret" not in str(raised.value)


def test_entra_setting_must_be_a_boolean() -> None:
    with pytest.raises(SettingsError, match="RESEARCH_DATABASE_ENTRA must be 1 or 0"):
        Settings.from_env({"DATABASE_URL": AZURE_URL, "RESEARCH_DATABASE_ENTRA": "entra"})


# --- least privilege: the worker's own URL and the roles' names


def test_the_worker_uses_database_url_unless_given_its_own() -> None:
    shared = Settings.from_env({"DATABASE_URL": "postgresql://owner@db/research"})
    assert shared.worker_database_url is None
    assert (shared.worker_role, shared.reader_role) == ("research_worker", "research_reader")
    own = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://owner@db/research",
            "RESEARCH_WORKER_DATABASE_URL": "postgresql://research_worker:pw@db/research",
            "RESEARCH_WORKER_ROLE": "ledger_writer",
            "RESEARCH_READER_ROLE": "ledger_reader",
        }
    )
    assert own.worker_database_url == "postgresql://research_worker:pw@db/research"
    assert (own.worker_role, own.reader_role) == ("ledger_writer", "ledger_reader")
    assert ":pw@" not in repr(own)  # kept out of a printed Settings


def test_the_worker_url_is_a_secret_children_never_see() -> None:
    from runtime.settings import child_environment

    env = {"RESEARCH_WORKER_DATABASE_URL": "postgresql://w:pw@db/r", "PATH": "/bin"}
    assert child_environment(env) == {"PATH": "/bin"}


@pytest.mark.parametrize("name", ["Research", "1worker", "worker-role", "a b", "x" * 64, "w;drop"])
def test_a_role_name_must_need_no_quoting(name: str) -> None:
    with pytest.raises(SettingsError, match="RESEARCH_WORKER_ROLE must be a role name of lower"):
        Settings.from_env({"RESEARCH_WORKER_ROLE": name})


def test_entra_accepts_a_worker_with_only_its_own_url_and_refuses_its_password() -> None:
    worker_only = {"RESEARCH_WORKER_DATABASE_URL": AZURE_URL, "RESEARCH_DATABASE_ENTRA": "1"}
    assert Settings.from_env(worker_only).database_entra is True
    with_password = AZURE_URL.replace("id-research@", "id-research:secret@")
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({**worker_only, "RESEARCH_WORKER_DATABASE_URL": with_password})
    assert str(raised.value).startswith(
        "RESEARCH_WORKER_DATABASE_URL holds a password and RESEARCH_DATABASE_ENTRA=1"
    )
    assert "secret" not in str(raised.value)
