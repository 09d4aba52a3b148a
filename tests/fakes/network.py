"""Network stand-ins for the fetcher's guard: a stub resolver, a trap server, a loopback router,
and an HTTPS server with a certificate for a name of the test's choosing.

The machine cannot own 10.0.0.1 or 169.254.169.254, so the tests route every connection the
fetcher makes to a real server on 127.0.0.1 that counts them (`TrapServer`): if the guard ever let a
refused address through, the trap would see the connection. `LoopbackRouter` is a real httpcore
network backend doing real TCP connects; it only substitutes the destination.
"""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import httpcore
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from activities.pages.fetch import FetchClient, build_http_client
from runtime.settings import Settings


class StubResolver:
    """DNS answers from a table; unknown names fail like a real NXDOMAIN. Records every lookup."""

    def __init__(self, answers: Mapping[str, list[str]]) -> None:
        self._answers = dict(answers)
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self._answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self._answers[host])


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class LoopbackServer:
    """An asyncio TCP server on 127.0.0.1 (TLS with `ssl_context`) for `async with`."""

    def __init__(self, handler: Handler, ssl_context: ssl.SSLContext | None = None) -> None:
        self._handler = handler
        self._ssl = ssl_context
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._handler, "127.0.0.1", 0, ssl=self._ssl)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


class TrapServer(LoopbackServer):
    """Counts every connection and answers each with one HTTP page."""

    def __init__(self) -> None:
        super().__init__(self._handle)
        self.connections = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            if await reader.read(1) == b"\x16":  # a TLS ClientHello: it cannot be served here
                return
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
            body = b"trapped"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (
            asyncio.IncompleteReadError,
            TimeoutError,
            ConnectionError,
            asyncio.LimitOverrunError,
        ):
            pass  # a TLS hello, or a client that gave up: the connection was still counted
        finally:
            writer.close()


class LoopbackRouter(httpcore.AsyncNetworkBackend):
    """Connects for real, but to `trap` instead of the asked address, unless the asked address is
    one of `passthrough` (a real local server). Records every (address, port) asked for."""

    def __init__(
        self,
        trap_port: int,
        passthrough: Iterable[tuple[str, int]] = (),
        forward: Mapping[tuple[str, int], int] | None = None,
    ) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._trap_port = trap_port
        self._passthrough = set(passthrough)
        self.forward = dict(forward or {})  # (address, port) -> a local port that plays it
        self.asked: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.asked.append((host, port))
        if (host, port) in self.forward:
            host, port = "127.0.0.1", self.forward[host, port]
        elif (host, port) not in self._passthrough:
            host, port = "127.0.0.1", self._trap_port
        return await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("the fetcher asked for a unix socket")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def self_signed(host: str, folder: Path) -> tuple[Path, Path]:
    """A certificate for `host` (its own CA) and its key, as PEM files in `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{host}.pem", folder / f"{host}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def http_response(status: str, body: bytes = b"", **headers: str) -> bytes:
    """One raw HTTP/1.1 response: `http_response("302 Found", Location="/next")`."""
    lines = [
        f"HTTP/1.1 {status}",
        *(f"{name.replace('_', '-')}: {v}" for name, v in headers.items()),
    ]
    lines += ["Connection: close", f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


def raw_http(respond: Callable[[str], bytes]) -> Handler:
    """A connection handler that reads one request head and writes `respond(target)` as it is."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
            writer.write(respond(head.decode("latin-1").split(" ", 2)[1]))
            await writer.drain()
        except (asyncio.IncompleteReadError, TimeoutError, OSError):
            pass  # a client that gave up, or a failed TLS handshake
        finally:
            writer.close()

    return handle


class HttpsPage(LoopbackServer):
    """An HTTPS server answering every request with one HTML page."""

    def __init__(self, cert: Path, key: Path, body: bytes) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        super().__init__(raw_http(self._page), context)
        self._body = body
        self.served = 0

    def _page(self, target: str) -> bytes:
        self.served += 1
        return http_response("200 OK", self._body, Content_Type="text/html")


@dataclass
class GuardedNet:
    """A guarded fetch client whose every connection is observed: DNS from `resolver`, connects
    routed to `trap` except to the local page server `pages.test` (pinned to 127.0.0.1)."""

    client: FetchClient
    resolver: StubResolver
    router: LoopbackRouter
    trap: TrapServer
    settings: Settings
    pages_port: int

    def page(self, path: str) -> str:
        return f"http://pages.test:{self.pages_port}{path}"


@asynccontextmanager
async def guarded_net(
    answers: Mapping[str, list[str]], pages: Handler, folder: Path, corpus_dir: Path | None = None
) -> AsyncIterator[GuardedNet]:
    async with TrapServer() as trap, LoopbackServer(pages) as page_server:
        resolver = StubResolver(answers)
        router = LoopbackRouter(trap.port, passthrough=[("127.0.0.1", page_server.port)])
        settings = Settings(
            corpus_dir=corpus_dir or folder / "no-corpus",
            state_dir=folder,
            local_hosts=("pages.test=127.0.0.1",),
        )
        async with build_http_client(
            settings.fetch_options(), resolver=resolver, backend=router
        ) as client:
            yield GuardedNet(client, resolver, router, trap, settings, page_server.port)
