"""Fakes at the boundaries: local servers speaking real wire formats, and network stand-ins."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Poll interval of the threaded servers: `shutdown()` waits up to one poll, and the standard 0.5 s
# made every test using a server half a second slower.
POLL = 0.02


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers with `reply`."""

    def reply(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a worker killed mid-call)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output quiet


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """A threaded HTTP server on 127.0.0.1 with `handler`, for the block; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
