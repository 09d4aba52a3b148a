"""The Temporal client (pydantic payloads, tracing interceptors) and the local dev server."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field
from datetime import timedelta
from logging import getLogger
from pathlib import Path
from typing import IO

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)
from temporalio.service import RPCError

from runtime.settings import Settings, child_environment
from runtime.startup import GaveUp, wait_for
from runtime.telemetry import telemetry
from runtime.temporal_cli import find_temporal_binary

SEARCH_ATTRIBUTES = (
    "ResearchStatus=Keyword",
    "ResearchStopReason=Keyword",
    "ResearchVerified=Bool",
    "ResearchLane=KeywordList",
)
SETTLE_SECONDS = 0.2
_connected: list[str] = []  # addresses this process opened a client to (see settle_before_exit)
STARTUP_SECONDS = 60.0
STOP_SECONDS = 10.0
_LIST_TIMEOUT = timedelta(seconds=10)
_logger = getLogger(__name__)


class TemporalUnavailable(RuntimeError):
    """No Temporal server answers at the configured address; the message says what to do."""


class NamespaceNotReady(RuntimeError):
    """The namespace lacks the search attributes a run writes; the message says how to add them."""


class DevServerError(RuntimeError):
    """The local dev server could not be started; the message says why (and shows its log tail)."""


async def connect(
    settings: Settings,
    *,
    address: str | None = None,
    wait_seconds: float = 0.0,
    identity: str | None = None,
    data_converter: DataConverter | None = None,
) -> Client:
    """A client for `address` (default TEMPORAL_ADDRESS); an API key implies TLS. With
    `wait_seconds` (a worker's start-up) a server that does not answer yet is tried again, with
    logged back-off, for that long. `identity` (default the SDK's `pid@host`) is what the server
    shows for this client's requests and its workers' polls. `data_converter` (default: pydantic
    payloads, `runtime.converter`) is plain JSON for a command that reads payloads as data
    without the workflow's models (`research status`)."""
    if data_converter is None:
        from runtime.converter import DATA_CONVERTER  # pydantic and the workflow's models

        data_converter = DATA_CONVERTER
    target = address or settings.temporal_address
    _connected.append(target)

    async def attempt() -> Client:
        return await Client.connect(
            target,
            namespace=settings.temporal_namespace,
            api_key=settings.temporal_api_key,
            tls=bool(settings.temporal_api_key),
            data_converter=data_converter,
            plugins=telemetry().plugins,  # tracing: the workflow's spans and their propagation
            # metrics: Temporal's own, through the same exporters; else core logs to stderr
            runtime=telemetry().runtime or forwarded_core_logs(),
            identity=identity,  # None: the SDK's default
        )

    try:
        return await wait_for(
            f"Temporal at {target}", attempt, seconds=wait_seconds, reason_to_wait=_unreachable
        )
    except GaveUp as error:
        waited = f" (waited {wait_seconds:g} s)" if wait_seconds else ""
        hint = "start it with `research dev` or set TEMPORAL_ADDRESS"
        raise TemporalUnavailable(f"cannot reach Temporal at {target}{waited}: {hint}") from error


@functools.cache
def forwarded_core_logs() -> Runtime:
    """The SDK's runtime with its core's (Rust) warnings forwarded to Python's `temporalio.core`
    logger, hence to stderr: by default the core prints them on stdout, in colour, into the
    middle of `research status --json` (seen as a `temporalio_client::retry` warning under load)."""
    logging = LoggingConfig(
        filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
        forwarding=LogForwardingConfig(logger=getLogger("temporalio.core")),
    )
    return Runtime(telemetry=TelemetryConfig(logging=logging))


def _unreachable(error: Exception) -> str | None:
    # The SDK raises a bare RuntimeError for any failed connect (refused, timed out, TLS).
    if not isinstance(error, RuntimeError):
        return None
    detail = str(error).strip().splitlines()
    return detail[0][:300] if detail else "no answer"


async def settle_before_exit() -> None:
    """Give the SDK core a moment to finish in-flight callbacks before the interpreter exits.

    A short-lived client process can otherwise abort at finalisation (PyGILState_Release fatal
    error or a segfault, temporalio/sdk-python#300); seen here about once in 30 CLI runs.
    """
    if _connected:
        await asyncio.sleep(SETTLE_SECONDS)


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    try:
        return host.strip("[]") or "localhost", int(port)
    except ValueError:
        raise DevServerError(f"TEMPORAL_ADDRESS {address!r} must be host:port") from None


def is_local_address(address: str) -> bool:
    """True when TEMPORAL_ADDRESS names this machine: the embedded stack may run a server there."""
    host, _ = split_address(address)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class DevServer:
    """A `temporal server start-dev` process we started, or a reused server (process None)."""

    address: str
    ui_url: str
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def reused(self) -> bool:
        return self.process is None

    def stop(self) -> None:
        """Terminate, then kill after STOP_SECONDS; a no-op for a reused server."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def temporal_binary() -> str:
    found = find_temporal_binary()
    if not found:
        raise DevServerError("the temporal CLI is not installed: run `make dev` to bootstrap .venv")
    return found


async def running_dev_address(settings: Settings) -> str | None:
    """The address of a Temporal server already answering on TEMPORAL_ADDRESS's local port (the
    one `start_dev_server` would reuse), else None."""
    _, port = split_address(settings.temporal_address)
    address = f"127.0.0.1:{port}"
    if _port_in_use(port) and await _is_temporal(settings, address):
        return address
    return None


async def start_dev_server(settings: Settings) -> DevServer:
    """Start a dev server on TEMPORAL_ADDRESS's port, or reuse a Temporal server already there."""
    _, port = split_address(settings.temporal_address)
    address = f"127.0.0.1:{port}"
    ui_url = f"http://localhost:{settings.ui_port}"
    if _port_in_use(port):
        if await _is_temporal(settings, address):
            return DevServer(address=address, ui_url=ui_url)
        raise DevServerError(
            f"port {port} is in use by something that is not Temporal: set TEMPORAL_ADDRESS to "
            f"localhost:<free port> to run the dev server elsewhere"
        )
    if _port_in_use(settings.ui_port):
        raise DevServerError(
            f"port {settings.ui_port} for the Web UI is in use: set RESEARCH_UI_PORT to a free port"
        )
    server = _spawn(settings, address, ui_url)
    try:
        await _wait_until_ready(settings, server)
        await _add_missing_search_attributes(settings, server.address)
    except BaseException:
        server.stop()
        raise
    return server


async def _add_missing_search_attributes(settings: Settings, address: str) -> None:
    """The dev server keeps its namespace in the state folder's temporal.db, and its
    `--search-attribute` flags register attributes only when it creates the namespace: one the
    workflow writes since (a state folder from an earlier version) is added here, on the server
    this stack started, before any worker checks for it (`check_search_attributes`)."""
    client = await Client.connect(address, namespace=settings.temporal_namespace)
    try:
        missing = await _missing_search_attributes(client)
        if not missing:
            return
        types = {name: IndexedValueType.Value(_indexed(kind)) for name, kind in missing}
        request = AddSearchAttributesRequest(namespace=client.namespace, search_attributes=types)
        await client.operator_service.add_search_attributes(request, timeout=_LIST_TIMEOUT)
    except RPCError as error:  # one of another type, say: the worker's check names it
        _logger.warning("could not add the namespace's search attributes: %s", error.message)
        return
    _logger.info("added search attributes %s to namespace %s", ", ".join(types), client.namespace)


def _spawn(settings: Settings, address: str, ui_url: str) -> DevServer:
    state_dir = settings.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir / "temporal.log"
    _, port = split_address(address)
    command = [temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1"]
    command += ["--port", str(port), "--ui-port", str(settings.ui_port)]
    command += ["--db-filename", str(state_dir / "temporal.db"), "--namespace", "default"]
    for attribute in SEARCH_ATTRIBUTES:
        command += ["--search-attribute", attribute]
    # SQLite in WAL mode: readers stop waiting on the writer (measured: less server CPU a step).
    command += ["--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"]
    command += ["--log-level", "warn"]
    log = log_path.open("ab")
    # A session of its own: a terminal's Ctrl-C reaches only us, and we stop the server in order
    # (after the worker), instead of it dying under a worker that is still draining.
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env=child_environment(),  # the dev server never sees a provider key
    )
    return DevServer(address, ui_url, process=process, log_path=log_path, _log=log)


async def check_search_attributes(client: Client, settings: Settings) -> None:
    """Raise NamespaceNotReady, naming each missing attribute and the command that creates it,
    when the namespace lacks one the workflow writes (`SEARCH_ATTRIBUTES`): without this check
    the worker serves, and each run fails at its last workflow task, when it writes its outcome.
    Nothing to check with RESEARCH_SEARCH_ATTRIBUTES=0; a server that will not list them (a
    key without the permission) is left to the runs, as before."""
    if not settings.search_attributes:
        return
    try:
        missing = await _missing_search_attributes(client)
    except RPCError as error:
        _logger.warning("could not list the namespace's search attributes: %s", error.message)
        return
    if missing:
        commands = "; ".join(
            f"temporal operator search-attribute create --namespace {client.namespace} "
            f"--name {name} --type {kind}"
            for name, kind in missing
        )
        names = ", ".join(f"{name} ({kind})" for name, kind in missing)
        raise NamespaceNotReady(
            f"namespace {client.namespace} lacks the search attributes {names} that each run "
            f"writes: create them ({commands}), or set RESEARCH_SEARCH_ATTRIBUTES=0"
        )


async def _missing_search_attributes(client: Client) -> list[tuple[str, str]]:
    """The (name, type) of each attribute in SEARCH_ATTRIBUTES the namespace lacks (or has with
    another type)."""
    request = ListSearchAttributesRequest(namespace=client.namespace)
    listed = await client.operator_service.list_search_attributes(request, timeout=_LIST_TIMEOUT)
    return [
        (name, kind)
        for name, kind in (attribute.split("=") for attribute in SEARCH_ATTRIBUTES)
        if listed.custom_attributes.get(name) != IndexedValueType.Value(_indexed(kind))
    ]


def _indexed(kind: str) -> str:
    """`KeywordList` as IndexedValueType spells it: `INDEXED_VALUE_TYPE_KEYWORD_LIST`."""
    return f"INDEXED_VALUE_TYPE_{_snake(kind)}"


def _snake(kind: str) -> str:
    """`KeywordList` as the enum spells it: `KEYWORD_LIST`."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", kind).upper()


async def _wait_until_ready(settings: Settings, server: DevServer) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert server.process is not None
        if server.process.poll() is not None:
            raise DevServerError(
                f"the Temporal dev server exited with code {server.process.returncode}; "
                f"end of {server.log_path}:\n{_log_tail(server.log_path)}"
            )
        if await _is_temporal(settings, server.address):
            return
        await asyncio.sleep(0.25)
    raise DevServerError(
        f"the Temporal dev server did not answer on {server.address} within "
        f"{STARTUP_SECONDS:.0f} s; end of {server.log_path}:\n{_log_tail(server.log_path)}"
    )


async def _is_temporal(settings: Settings, address: str) -> bool:
    try:
        client = await asyncio.wait_for(
            Client.connect(address, namespace=settings.temporal_namespace), timeout=5
        )
        return await client.service_client.check_health(timeout=timedelta(seconds=5))
    except (RuntimeError, RPCError, TimeoutError, OSError):
        return False


def _port_in_use(port: int) -> bool:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _log_tail(path: Path | None, lines: int = 20) -> str:
    if path is None or not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
