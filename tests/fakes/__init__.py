"""Fakes at the boundaries: local servers speaking real wire formats, and network stand-ins."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Poll interval of the threaded servers: `shutdown()` waits up to one poll, and the standard 0.5 s
# made every test using a server half a second slower.
POLL = 0.02


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
