"""A PostgreSQL server on 127.0.0.1 that speaks just enough of the wire protocol to sign clients in.

It asks every client for a cleartext password (as Azure Database for PostgreSQL does for Microsoft
Entra tokens), records who signed in with what, and then accepts the session (answering nothing
but Terminate) or refuses it with SQLSTATE 28P01. With an `ssl_context` it accepts TLS, as a
server that requires it does. Real libpq clients (psycopg) talk to it, so a test sees exactly the
password a connection sent.
"""

from __future__ import annotations

import asyncio
import ssl
import struct
from dataclasses import dataclass, field

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104
_PROTOCOL_3 = 196608
_PARAMETERS = {
    "server_version": "16.4",
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "standard_conforming_strings": "on",
    "integer_datetimes": "on",
    "DateStyle": "ISO, MDY",
    "TimeZone": "UTC",
}


@dataclass(frozen=True)
class SignIn:
    user: str
    database: str
    password: str


@dataclass
class FakePostgres:
    accept: bool = True
    ssl_context: ssl.SSLContext | None = None
    sign_ins: list[SignIn] = field(default_factory=list)
    connections: int = 0
    port: int = 0
    _server: asyncio.Server | None = None

    async def __aenter__(self) -> FakePostgres:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            startup = await _startup(reader, writer, self.ssl_context)
            writer.write(_message(b"R", struct.pack("!i", 3)))  # AuthenticationCleartextPassword
            await writer.drain()
            kind, body = await _read_message(reader)
            assert kind == b"p", kind
            password = body.rstrip(b"\0").decode()
            user = startup.get("user", "")
            self.sign_ins.append(SignIn(user, startup.get("database", user), password))
            if not self.accept:
                writer.write(_error("28P01", f'password authentication failed for user "{user}"'))
                await writer.drain()
                return
            await _ready(writer)
            while (await _read_message(reader))[0] != b"X":  # until Terminate
                pass
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()


async def _startup(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tls: ssl.SSLContext | None
) -> dict[str, str]:
    """Accept TLS when there is a context (decline GSS encryption), then read the startup
    packet's parameters."""
    while True:
        (length,) = struct.unpack("!i", await reader.readexactly(4))
        payload = await reader.readexactly(length - 4)
        (code,) = struct.unpack("!i", payload[:4])
        if code == _SSL_REQUEST and tls is not None:
            writer.write(b"S")
            await writer.drain()
            await writer.start_tls(tls)
            continue
        if code in (_SSL_REQUEST, _GSSENC_REQUEST):
            writer.write(b"N")
            await writer.drain()
            continue
        assert code == _PROTOCOL_3, code
        fields = payload[4:].split(b"\0")
        return {
            fields[i].decode(): fields[i + 1].decode()
            for i in range(0, len(fields) - 1, 2)
            if fields[i]
        }


async def _read_message(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    kind = await reader.readexactly(1)
    (length,) = struct.unpack("!i", await reader.readexactly(4))
    return kind, await reader.readexactly(length - 4)


async def _ready(writer: asyncio.StreamWriter) -> None:
    writer.write(_message(b"R", struct.pack("!i", 0)))  # AuthenticationOk
    for name, value in _PARAMETERS.items():
        writer.write(_message(b"S", name.encode() + b"\0" + value.encode() + b"\0"))
    writer.write(_message(b"K", struct.pack("!ii", 4242, 2424)))  # BackendKeyData
    writer.write(_message(b"Z", b"I"))  # ReadyForQuery, idle
    await writer.drain()


def _error(code: str, text: str) -> bytes:
    fields = b"".join(
        key + value.encode() + b"\0"
        for key, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", text))
    )
    return _message(b"E", fields + b"\0")


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body
