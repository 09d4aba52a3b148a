"""Real local HTTP servers shaped like Serper and SearXNG, recording every request.

Serper: `POST /search` with a JSON body `{"q", "num"}`, answering `{"searchParameters", "organic":
[{title, link, snippet, position}]}`. SearXNG: `GET /search?q=...&format=json`, answering
`{"query", "results": [{url, title, content, engine}]}`, and 403 when `format` is not json (as an
instance without the json format enabled does). `fake.answer` replaces the next answers with a
scripted status, headers and raw body (for errors and malformed bodies).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from tests.fakes import QuietHandler, serving

Shape = Literal["serper", "searxng"]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str  # without the query
    query: dict[str, str]  # the query string, one value per name
    headers: dict[str, str]  # names lower-cased
    body: bytes


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # None: the shape's JSON of `results`


class FakeSearch:
    def __init__(self, shape: Shape, results: list[tuple[str, str, str]] | None = None) -> None:
        self.shape = shape
        self.results = list(results or [])  # (url, title, snippet), in the provider's order
        self.answer: Answer | None = None  # replaces every answer while set
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()

    def respond(self, recorded: Recorded) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.requests.append(recorded)
        if self.answer is not None:
            body = self.answer.body if self.answer.body is not None else b"{}"
            return self.answer.status, self.answer.headers, body
        if self.shape == "searxng" and recorded.query.get("format") != "json":
            return 403, {}, b"Forbidden"
        return 200, {}, json.dumps(self._payload(recorded)).encode()

    def _payload(self, recorded: Recorded) -> dict[str, Any]:
        if self.shape == "serper":
            sent = json.loads(recorded.body or b"{}")
            organic = [
                {"title": title, "link": url, "snippet": snippet, "position": index}
                for index, (url, title, snippet) in enumerate(self.results, start=1)
            ]
            return {"searchParameters": {"q": sent.get("q"), "type": "search"}, "organic": organic}
        results = [
            {"url": url, "title": title, "content": snippet, "engine": "fake"}
            for url, title, snippet in self.results
        ]
        return {"query": recorded.query.get("q", ""), "number_of_results": 0, "results": results}


@contextmanager
def serve(fake: FakeSearch) -> Iterator[str]:
    """Run the server on 127.0.0.1 in a thread; yields its root URL (no trailing slash)."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self._answer(b"")

        def do_POST(self) -> None:
            self._answer(self.rfile.read(int(self.headers.get("content-length", "0"))))

        def _answer(self, body: bytes) -> None:
            parts = urlsplit(self.path)
            recorded = Recorded(
                method=self.command,
                path=parts.path,
                query={name: values[0] for name, values in parse_qs(parts.query).items()},
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            status, headers, payload = (
                fake.respond(recorded) if parts.path == "/search" else (404, {}, b"no such page")
            )
            if "content-type" not in {name.lower() for name in headers}:
                headers = {**headers, "content-type": "application/json"}
            self.reply(status, payload, headers)

    with serving(Handler) as port:
        yield f"http://127.0.0.1:{port}"
