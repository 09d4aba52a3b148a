"""The fetcher against a real page server on loopback: compression, bombs, caps, slow bodies,
content types and PDFs, through the guarded client a worker builds (a pinned local host)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import brotli
import pytest

from activities.pages.decode import ACCEPT_ENCODING
from activities.pages.extract import extract
from activities.pages.fetch import (
    FetchClient,
    FetchedPage,
    FetchFailed,
    FetchRefused,
    build_http_client,
)
from activities.pages.fetch import fetch_page as fetch
from runtime.settings import Settings
from tests.fakes.page_server import PageServer, Route
from tests.fakes.pdf import build_pdf

HOST = "pages.test"
PAGE = b"<html><head><title>Caps</title></head><body><p>" + b"Visible text. " * 50 + b"</p>"
RAW_CAP = 100_000
DECODED_CAP = 1_000_000


@pytest.fixture
def server() -> Iterator[PageServer]:
    with PageServer() as running:
        yield running


@pytest.fixture
async def client(server: PageServer, tmp_path: Path) -> AsyncIterator[FetchClient]:
    settings = Settings(
        corpus_dir=tmp_path / "no-corpus", state_dir=tmp_path, local_hosts=(f"{HOST}=127.0.0.1",)
    )
    async with build_http_client(settings.fetch_options()) as built:
        yield built


async def _get(
    client: FetchClient, server: PageServer, path: str, seconds: float = 5.0
) -> FetchedPage:
    return await fetch(
        client,
        server.url(HOST, path),
        [HOST],
        max_bytes=RAW_CAP,
        max_decoded_bytes=DECODED_CAP,
        timeout_seconds=seconds,
    )


def _route(body: bytes, encoding: str | None = None, content_type: str = "text/html") -> Route:
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    return Route(
        headers=headers, chunks=[body[i : i + 16_384] for i in range(0, len(body), 16_384)]
    )


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        (None, lambda body: body),
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("br", brotli.compress),
    ],
)
async def test_compressed_pages_are_decoded(
    client: FetchClient, server: PageServer, encoding: str | None, encode: object
) -> None:
    assert callable(encode)
    server.routes["/page"] = _route(encode(PAGE), encoding)

    page = await _get(client, server, "/page")

    assert page.body == PAGE
    assert server.requests[0][2]["Accept-Encoding"] == ACCEPT_ENCODING


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", lambda data: gzip.compress(data, 9)),
        ("deflate", lambda data: zlib.compress(data, 9)),
        ("br", lambda data: brotli.compress(data, quality=5)),
        ("gzip, br", lambda data: brotli.compress(gzip.compress(data, 9), quality=11)),
    ],
)
async def test_decompression_bombs_are_refused_at_the_cap(
    client: FetchClient, server: PageServer, encoding: str, encode: object
) -> None:
    assert callable(encode)
    bomb = encode(b"\0" * 50_000_000)  # 50 MB of zeros: well under RAW_CAP on the wire
    assert len(bomb) < RAW_CAP
    server.routes["/bomb"] = _route(bomb, encoding)

    with pytest.raises(FetchRefused, match=f"more than {DECODED_CAP} bytes"):
        await _get(client, server, "/bomb")


async def test_an_unsupported_encoding_is_refused(client: FetchClient, server: PageServer) -> None:
    server.routes["/zstd"] = _route(b"\x28\xb5\x2f\xfd junk", "zstd")

    with pytest.raises(FetchRefused, match="zstd"):
        await _get(client, server, "/zstd")


async def test_a_declared_oversized_body_is_refused_before_reading(
    client: FetchClient, server: PageServer
) -> None:
    server.routes["/big"] = _route(b"x" * (RAW_CAP * 20), content_type="text/plain")

    with pytest.raises(FetchRefused, match=f"larger than {RAW_CAP} bytes"):
        await _get(client, server, "/big")


async def test_an_undeclared_oversized_body_stops_at_the_cap(
    client: FetchClient, server: PageServer
) -> None:
    chunks = [b"y" * 10_000] * 1_000  # 10 MB, streamed without a Content-Length
    server.routes["/stream"] = Route(
        headers={"Content-Type": "text/plain"}, chunks=chunks, declare_length=False
    )

    with pytest.raises(FetchRefused, match=f"larger than {RAW_CAP} bytes"):
        await _get(client, server, "/stream")

    assert server.bytes_sent < 10_000_000  # the client hung up long before the end


async def test_a_slow_body_is_bounded_by_the_fetch_deadline(
    client: FetchClient, server: PageServer
) -> None:
    server.routes["/slow"] = Route(
        headers={"Content-Type": "text/plain"}, chunks=[b"drip"] * 50, pause=0.1
    )

    with pytest.raises(FetchFailed, match=r"took longer than 0\.5 seconds"):
        await _get(client, server, "/slow", seconds=0.5)


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "image/png", "application/octet-stream", "application/javascript", ""],
)
async def test_other_content_types_are_refused_with_their_type(
    client: FetchClient, server: PageServer, content_type: str
) -> None:
    server.routes["/thing"] = Route(headers={"Content-Type": content_type}, chunks=[b"{}"])

    with pytest.raises(FetchRefused, match="not a page type that can be read"):
        await _get(client, server, "/thing")


async def test_a_pdf_is_fetched_and_its_text_extracted(
    client: FetchClient, server: PageServer
) -> None:
    pdf = build_pdf(
        [[["Retries are capped at five attempts."]], [["The queue keeps messages 14 days."]]],
        title="Queue limits",
    )
    server.routes["/limits.pdf"] = _route(pdf, "gzip", "application/pdf")
    server.routes["/limits.pdf"].chunks = [gzip.compress(pdf)]

    page = await _get(client, server, "/limits.pdf")
    snapshot = extract(page.body, page.content_type, max_chars=10_000)

    assert page.content_type == "application/pdf"
    assert snapshot.title == "Queue limits"
    assert "Retries are capped at five attempts." in snapshot.text
    assert "The queue keeps messages 14 days." in snapshot.text
