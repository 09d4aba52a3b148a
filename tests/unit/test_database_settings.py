"""RESEARCH_DATABASE_ENTRA: read from the environment, one-sentence errors for what cannot work."""

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
