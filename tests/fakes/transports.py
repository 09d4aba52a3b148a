"""httpx transports for tests: real transports wrapped to observe what was requested."""

from __future__ import annotations

import httpx


class CountingTransport(httpx.AsyncBaseTransport):
    """Passes every request to `inner` and remembers the URLs asked for."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.urls: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return await self.inner.handle_async_request(request)
