"""The fetcher end to end through real httpx clients: a corpus transport and a local HTTP server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from activities.pages.corpus_transport import CorpusTransport
from activities.pages.extract import extract
from activities.pages.fetch import (
    FetchedPage,
    FetchFailed,
    FetchRefused,
    build_http_client,
    fetch_page,
)
from runtime.settings import Settings
from tests.fakes import QuietHandler, serving
from tests.fakes.transports import CountingTransport

PAGE = "<html><head><title>Docs</title></head><body><main><p>Hello from the corpus.</p></main>"
ALLOWED = ["docs.example", "mirror.example"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    docs = root / "docs.example"
    (docs / "guide").mkdir(parents=True)
    (docs / "page.html").write_text(PAGE, encoding="utf-8")
    (docs / "guide" / "index.html").write_text(PAGE, encoding="utf-8")
    (docs / "notes.md").write_text("# Notes\n\nPlain notes.", encoding="utf-8")
    (docs / "data.json").write_text("{}", encoding="utf-8")
    (docs / "big.txt").write_text("x" * 5_000, encoding="utf-8")
    (root / "secret.txt").write_text("outside every host folder", encoding="utf-8")
    (root / "mirror.example").mkdir()
    (root / "mirror.example" / "copy.html").write_text(PAGE, encoding="utf-8")
    (root / "evil.example").mkdir()
    (root / "evil.example" / "page.html").write_text(PAGE, encoding="utf-8")
    redirects = {f"/hop{n}": f"/hop{n + 1}" for n in range(6)}
    redirects |= {
        "/hop6": "https://docs.example/page.html",
        "/moved": "https://mirror.example/copy.html",
        "/away": "https://evil.example/page.html",
        "/downgrade": "http://docs.example/page.html",
    }
    (docs / "_redirects.json").write_text(json.dumps(redirects), encoding="utf-8")
    return root


@pytest.fixture
def counting(corpus: Path) -> CountingTransport:
    return CountingTransport(CorpusTransport(corpus))


def _counting_client(counting: CountingTransport, tmp_path: Path) -> httpx.AsyncClient:
    """A fetch client with no corpus mounts: every request goes through `counting`."""
    settings = Settings(corpus_dir=tmp_path / "no-corpus", state_dir=tmp_path)
    return build_http_client(settings.fetch_options(), default_transport=counting)


async def _fetch(client: httpx.AsyncClient, url: str, **overrides: float) -> FetchedPage:
    max_bytes = int(overrides.get("max_bytes", 1_000_000))
    timeout_seconds = overrides.get("timeout_seconds", 5.0)
    return await fetch_page(
        client, url, ALLOWED, max_bytes=max_bytes, timeout_seconds=timeout_seconds
    )


async def test_fetch_from_the_corpus_client(corpus: Path, tmp_path: Path) -> None:
    settings = Settings(corpus_dir=corpus, state_dir=tmp_path)
    async with build_http_client(settings.fetch_options()) as client:
        page = await _fetch(client, "https://docs.example/page.html")
        notes = await _fetch(client, "https://docs.example/notes.md")

    assert page.url == page.final_url == "https://docs.example/page.html"
    assert (page.status, page.content_type, page.charset) == (200, "text/html", "utf-8")
    assert page.body == PAGE.encode()
    snapshot = extract(page.body, page.content_type, max_chars=1_000)
    assert (snapshot.title, snapshot.text) == ("Docs", "Hello from the corpus.")
    assert notes.content_type == "text/markdown"


async def test_corpus_serves_directory_index_and_plain_http(corpus: Path, tmp_path: Path) -> None:
    settings = Settings(corpus_dir=corpus, state_dir=tmp_path)
    async with build_http_client(settings.fetch_options()) as client:
        page = await _fetch(client, "http://docs.example/guide/")

    assert page.body == PAGE.encode()


async def test_http_error_status_fails(counting: CountingTransport, tmp_path: Path) -> None:
    async with _counting_client(counting, tmp_path) as client:
        with pytest.raises(
            FetchFailed, match=r"HTTP 404 from https://docs.example/missing"
        ) as info:
            await _fetch(client, "https://docs.example/missing.html")

    assert info.value.status == 404


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://evil.example/page.html", "not in the allowed hosts"),
        ("https://docs.example.evil.example/", "not in the allowed hosts"),
        ("https://sub.docs.example/", "not in the allowed hosts"),
        ("https://user:secret@docs.example/page.html", "user name or password"),
        ("https://docs.example\\@evil.example/", "backslash"),
        ("https://docs.example/page.html\r\nX-Injected: 1", "control character"),
        ("http://docs.example/page.html", "plain http"),
        ("ftp://docs.example/page.html", "scheme 'ftp'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("https:///no-host", "has no host"),
    ],
)
async def test_refused_urls_make_no_request(
    counting: CountingTransport, tmp_path: Path, url: str, reason: str
) -> None:
    async with _counting_client(counting, tmp_path) as client:
        with pytest.raises(FetchRefused, match=reason):
            await _fetch(client, url)

    assert counting.urls == []


async def test_redirect_to_an_allowed_host_is_followed(
    counting: CountingTransport, tmp_path: Path
) -> None:
    async with _counting_client(counting, tmp_path) as client:
        page = await _fetch(client, "https://docs.example/moved")

    assert page.url == "https://docs.example/moved"
    assert page.final_url == "https://mirror.example/copy.html"
    assert counting.urls == ["https://docs.example/moved", "https://mirror.example/copy.html"]


async def test_redirect_to_a_disallowed_host_is_refused(
    counting: CountingTransport, tmp_path: Path
) -> None:
    async with _counting_client(counting, tmp_path) as client:
        with pytest.raises(FetchRefused, match=r"evil\.example is not in the allowed hosts"):
            await _fetch(client, "https://docs.example/away")

    assert counting.urls == ["https://docs.example/away"]


async def test_redirect_from_https_to_http_is_refused(corpus: Path, tmp_path: Path) -> None:
    settings = Settings(corpus_dir=corpus, state_dir=tmp_path)  # http is allowed for corpus hosts
    async with build_http_client(settings.fetch_options()) as client:
        with pytest.raises(FetchRefused, match="from https to plain http"):
            await _fetch(client, "https://docs.example/downgrade")


async def test_five_redirects_are_followed_and_a_sixth_is_refused(
    counting: CountingTransport, tmp_path: Path
) -> None:
    async with _counting_client(counting, tmp_path) as client:
        page = await _fetch(client, "https://docs.example/hop2")  # hop2..hop6, page: 5 redirects
        with pytest.raises(FetchRefused, match="more than 5 redirects"):
            await _fetch(client, "https://docs.example/hop1")

    assert page.final_url == "https://docs.example/page.html"
    assert len(counting.urls) == 6 + 6  # the refused chain stops at its sixth response


async def test_oversized_body_is_refused(counting: CountingTransport, tmp_path: Path) -> None:
    async with _counting_client(counting, tmp_path) as client:
        with pytest.raises(FetchRefused, match="larger than 1000 bytes"):
            await _fetch(client, "https://docs.example/big.txt", max_bytes=1_000)


async def test_streamed_body_stops_at_the_byte_cap(tmp_path: Path) -> None:
    chunks_sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal chunks_sent
        while True:
            chunks_sent += 1
            yield b"y" * 1_000

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=endless())

    async with _counting_client(
        CountingTransport(httpx.MockTransport(handler)), tmp_path
    ) as client:
        with pytest.raises(FetchRefused, match="larger than 10000 bytes"):
            await _fetch(client, "https://docs.example/stream", max_bytes=10_000)

    assert chunks_sent <= 11


async def test_wrong_content_type_is_refused(counting: CountingTransport, tmp_path: Path) -> None:
    async with _counting_client(counting, tmp_path) as client:
        with pytest.raises(FetchRefused, match="application/octet-stream"):
            await _fetch(client, "https://docs.example/data.json")


async def test_whole_fetch_is_bounded_by_its_deadline(tmp_path: Path) -> None:
    async def stall(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200)

    async with _counting_client(CountingTransport(httpx.MockTransport(stall)), tmp_path) as client:
        with pytest.raises(FetchFailed, match=r"took longer than 0\.2 seconds"):
            await _fetch(client, "https://docs.example/slow", timeout_seconds=0.2)


async def test_corpus_transport_never_serves_outside_a_host_folder(corpus: Path) -> None:
    transport = CorpusTransport(corpus)
    for url in (
        "https://docs.example/%2e%2e/secret.txt",
        "https://docs.example/..%2fsecret.txt",
        "https://docs.example/_redirects.json",
        "https://unknown.example/page.html",
    ):
        response = await transport.handle_async_request(httpx.Request("GET", url))
        assert response.status_code in (400, 404), url
    assert transport.hosts() == ["docs.example", "evil.example", "mirror.example"]


# ---------------------------------------------------------------- a real server on loopback


class _PageHandler(QuietHandler):
    def do_GET(self) -> None:
        status = 200 if self.path == "/page.html" else 404
        self.reply(status, PAGE.encode(), {"Content-Type": "text/html; charset=utf-8"})


LOCAL = "pages.test"  # pinned to 127.0.0.1 by the settings below: a configured local host


@pytest.fixture
def local_server() -> Iterator[str]:
    with serving(_PageHandler) as port:
        yield f"http://{LOCAL}:{port}"


def _local_settings(tmp_path: Path, *local_hosts: str) -> Settings:
    return Settings(corpus_dir=tmp_path / "no-corpus", state_dir=tmp_path, local_hosts=local_hosts)


async def test_fetch_over_the_network_from_a_local_server(
    local_server: str, tmp_path: Path
) -> None:
    async with build_http_client(
        _local_settings(tmp_path, f"{LOCAL}=127.0.0.1").fetch_options()
    ) as client:
        page = await fetch_page(
            client, f"{local_server}/page.html", [LOCAL], max_bytes=10_000, timeout_seconds=5
        )
        with pytest.raises(FetchFailed, match="HTTP 404"):
            await fetch_page(
                client, f"{local_server}/nope", [LOCAL], max_bytes=10_000, timeout_seconds=5
            )

    assert (page.status, page.content_type, page.body) == (200, "text/html", PAGE.encode())


async def test_plain_http_needs_an_explicit_local_host(local_server: str, tmp_path: Path) -> None:
    async with build_http_client(_local_settings(tmp_path).fetch_options()) as client:
        with pytest.raises(FetchRefused, match="plain http"):
            await fetch_page(
                client, f"{local_server}/page.html", [LOCAL], max_bytes=100, timeout_seconds=5
            )


async def test_connection_refused_is_a_failed_fetch(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the fetch: nothing listens there
    async with build_http_client(
        _local_settings(tmp_path, f"{LOCAL}=127.0.0.1").fetch_options()
    ) as client:
        with pytest.raises(FetchFailed, match="network error"):
            await fetch_page(
                client, f"http://{LOCAL}:{port}/", [LOCAL], max_bytes=100, timeout_seconds=5
            )
