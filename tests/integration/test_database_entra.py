"""RESEARCH_DATABASE_ENTRA=1: every new connection signs in with a fresh Microsoft Entra token.

The server is a wire-protocol fake on 127.0.0.1 (tests/fakes/postgres_wire.py) that asks for a
cleartext password as Azure Database for PostgreSQL does, so each test sees exactly what real
libpq connections sent. The token source is a stand-in: no credential, no network.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from itertools import count
from pathlib import Path

import psycopg
import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError

from runtime.database import (
    ENTRA_SCOPE,
    EntraUrl,
    apply_migrations,
    database_url,
    entra_token_source,
    open_pool,
)
from runtime.settings import Settings
from tests.fakes.network import self_signed
from tests.fakes.postgres_wire import FakePostgres, SignIn

IDENTITY = "id-research-worker"


class Tokens:
    """A token source that hands out token-1, token-2, ... and counts the calls."""

    def __init__(self) -> None:
        self._numbers = count(1)
        self.issued: list[str] = []

    def __call__(self) -> str:
        token = f"token-{next(self._numbers)}"
        self.issued.append(token)
        return token


def _url(server: FakePostgres) -> str:
    return f"postgresql://{IDENTITY}@127.0.0.1:{server.port}/research?sslmode=disable"


async def test_each_new_pool_connection_signs_in_with_a_fresh_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tokens = Tokens()
    caplog.set_level(logging.DEBUG)
    async with FakePostgres() as server:
        pool = await open_pool(EntraUrl(_url(server), tokens), min_size=2, max_size=2)
        await pool.close()

    # The probe, then the pool's two connections: one token each, sent as the password.
    assert tokens.issued == ["token-1", "token-2", "token-3"]
    assert sorted(server.sign_ins, key=lambda s: s.password) == [
        SignIn(IDENTITY, "research", "token-1"),
        SignIn(IDENTITY, "research", "token-2"),
        SignIn(IDENTITY, "research", "token-3"),
    ]
    assert not [record for record in caplog.records if "token-" in record.getMessage()]


async def test_migrations_sign_in_with_a_token_and_a_refusal_is_the_servers_reason() -> None:
    tokens = Tokens()
    async with FakePostgres(accept=False) as server:
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            await asyncio.to_thread(apply_migrations, EntraUrl(_url(server), tokens))

    assert server.sign_ins == [SignIn(IDENTITY, "research", "token-1")]


async def test_a_plain_url_sends_no_token() -> None:
    async with FakePostgres() as server:
        with pytest.raises(psycopg.OperationalError, match="no password supplied"):
            await open_pool(_url(server))

    assert server.sign_ins == []
    assert server.connections == 1


async def test_no_token_is_a_one_sentence_database_error_before_any_connection() -> None:
    def no_identity() -> str:
        raise ClientAuthenticationError(
            "ManagedIdentityCredential: no managed identity endpoint\nmore detail"
        )

    async with FakePostgres() as server:
        with pytest.raises(psycopg.OperationalError) as raised:
            await open_pool(EntraUrl(_url(server), no_identity))

    assert str(raised.value) == (
        "could not get a Microsoft Entra token for PostgreSQL (RESEARCH_DATABASE_ENTRA=1): "
        "ManagedIdentityCredential: no managed identity endpoint"
    )
    assert server.connections == 0


def test_the_url_is_the_configured_url_and_never_shows_a_token() -> None:
    url = EntraUrl("postgresql://id@server.postgres.database.azure.com/research", Tokens())

    assert url == "postgresql://id@server.postgres.database.azure.com/research"
    assert "token" not in f"{url} {url!r} {str(url)!r}"


def test_database_url_wraps_the_configured_url_only_when_entra_is_on() -> None:
    configured = "postgresql://id@server.postgres.database.azure.com/research?sslmode=require"

    entra, server = database_url(Settings(database_url=configured, database_entra=True))
    plain, _ = database_url(Settings(database_url=configured))

    assert server is None
    assert isinstance(entra, EntraUrl)
    assert entra == configured
    assert not isinstance(plain, EntraUrl)
    assert database_url(Settings(database_url=entra, database_entra=True))[0] is entra


def test_tokens_come_from_the_credential_for_the_postgresql_audience() -> None:
    class Credential:
        scopes: list[tuple[str, ...]] = []

        def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
            self.scopes.append(scopes)
            return AccessToken(f"entra-{len(self.scopes)}", 4_102_444_800)

    credential = Credential()
    token = entra_token_source(credential)  # type: ignore[arg-type]

    assert [token(), token()] == ["entra-1", "entra-2"]
    assert credential.scopes == [(ENTRA_SCOPE,), (ENTRA_SCOPE,)]
    assert ENTRA_SCOPE == "https://ossrdbms-aad.database.windows.net/.default"


async def test_verify_full_with_system_roots_trusts_what_ssl_cert_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Azure DATABASE_URL verifies the server (`sslmode=verify-full&sslrootcert=system`).
    psycopg-binary's own OpenSSL looks for system roots in a folder of its own, so the image
    names Debian's bundle in SSL_CERT_FILE; here a test CA stands in for it."""
    cert, key = self_signed("localhost", tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    async with FakePostgres(ssl_context=server_tls) as server:
        url = EntraUrl(
            f"postgresql://{IDENTITY}@localhost:{server.port}/research"
            "?sslmode=verify-full&sslrootcert=system",
            Tokens(),
        )
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
            await open_pool(url)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        pool = await open_pool(url, min_size=1, max_size=1)
        await pool.close()

    assert [sign_in.password for sign_in in server.sign_ins] == ["token-2", "token-3"]
