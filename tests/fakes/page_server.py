"""A real HTTP page server on 127.0.0.1 for fetcher tests: scripted routes and a corpus folder.

Routes answer exactly what a test scripts (status, headers, body chunks with pauses between
them), so tests can send redirects, slow bodies, compression bombs, oversized bodies, wrong
content types and PDFs over a real socket. A corpus folder (`<root>/<host>/<path>`) is served by
the request's Host header, gzip-compressed when the client accepts it, as a real site would be.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path, PurePosixPath

from tests.fakes import QuietHandler, serving

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".pdf": "application/pdf",
}


@dataclass
class Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})
    chunks: list[bytes] = field(default_factory=list)
    pause: float = 0.0  # seconds before each chunk
    declare_length: bool = True


class PageServer:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (host, path, headers)
        self.bytes_sent = 0
        self.port = 0  # set while the server runs
        self._running = ExitStack()

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> PageServer:
        self.port = self._running.enter_context(serving(self._handler()))
        return self

    def __exit__(self, *exc: object) -> None:
        self._running.close()

    def answer(self, path: str, host: str, accept: str) -> Route:
        if path in self.routes:
            return self.routes[path]
        file = self._file(host, path)
        if file is None:
            return Route(status=404, headers={"Content-Type": "text/plain"}, chunks=[b"not found"])
        body = file.read_bytes()
        headers = {"Content-Type": TYPES.get(file.suffix, "application/octet-stream")}
        if "gzip" in accept:
            body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
        return Route(headers=headers, chunks=[body])

    def _file(self, host: str, path: str) -> Path | None:
        if self.root is None:
            return None
        parts = PurePosixPath(path.partition("?")[0]).parts[1:]
        if any(part in ("..", ".") for part in parts):
            return None
        file = self.root.joinpath(host, *parts)
        file = file / "index.html" if file.is_dir() else file
        return file if file.is_file() else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                host = self.headers.get("Host", "").rsplit(":", 1)[0]
                server.requests.append((host, self.path, dict(self.headers)))
                route = server.answer(self.path, host, self.headers.get("Accept-Encoding", ""))
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.declare_length:
                    self.send_header("Content-Length", str(sum(map(len, route.chunks))))
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in self._chunks(route):
                    try:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the client gave up (a cap or a deadline): expected
                    server.bytes_sent += len(chunk)

            def _chunks(self, route: Route) -> Iterator[bytes]:
                for chunk in route.chunks:
                    if route.pause:
                        time.sleep(route.pause)
                    yield chunk

        return Handler
