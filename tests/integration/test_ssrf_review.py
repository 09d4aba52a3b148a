"""SSRF cases found by a security review of the fetcher, kept as regression tests.

The first group were confirmed bypasses when found (a trailing-dot corpus host that went to the
network, IPv6 ranges Python 3.11 calls global, an IDNA spelling mismatch between the allowlist and
the URL parser, hostile redirect answers that crashed the activity); the second pins down cases the
main suite (test_ssrf.py) did not. Same harness: stub DNS, every connection routed to a counting
trap on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpcore
import pytest

from activities.pages.fetch import (
    FetchFailed,
    FetchRefused,
    build_http_client,
    check_fetchable,
    fetch_page,
)
from activities.pages.guard import FetchPolicy, check_url, refusal_for_address
from runtime.settings import Settings
from tests.fakes.network import GuardedNet, guarded_net, raw_http
from workflows.hosts import normalise_host

CORPUS_HOST = "docs.corpus.example"
DISK_PAGE = b"<html><p>served from disk</p></html>"


class Net(GuardedNet):
    async def fetch(self, url: str, allowed: list[str]) -> bytes:
        page = await fetch_page(self.client, url, allowed, max_bytes=10_000, timeout_seconds=5)
        return page.body


NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
# Raw responses of a local page server (pages.test, pinned to 127.0.0.1), by request path.
RAW_RESPONSES = {
    "/two-locations": b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nLocation: https://evil.example/\r\n"
    b"Content-Length: 0\r\n\r\n",
    "/no-location": b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
    "/no-slashes": b"HTTP/1.1 302 Found\r\nLocation: http:evil.example\r\n"
    b"Content-Length: 0\r\n\r\n",
    "/https-no-slashes": b"HTTP/1.1 301 Moved\r\nLocation: https:x\r\nContent-Length: 0\r\n\r\n",
    "/ok": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\n<p>ok</p>",
}


@pytest.fixture
async def net(tmp_path: Path) -> AsyncIterator[Net]:
    host_dir = tmp_path / "corpus" / CORPUS_HOST
    host_dir.mkdir(parents=True)
    (host_dir / "index.html").write_bytes(DISK_PAGE)
    answers = {
        CORPUS_HOST: ["10.0.0.5"],  # if the corpus host ever reaches DNS: an inside address
        "site-local.wild.example": ["fec0::1"],
        "doc-3fff.wild.example": ["3fff::1"],
        "nat64-local.wild.example": ["64:ff9b:1::808:808"],
        "v4-compatible.wild.example": ["::8.8.8.8"],
        "teredo.wild.example": ["2001:0:a00:1::f7f7:f7f7"],
        "public.wild.example": ["93.184.215.14"],
    }
    pages = raw_http(lambda path: RAW_RESPONSES.get(path, NOT_FOUND))
    async with guarded_net(answers, pages, tmp_path, tmp_path / "corpus") as observed:
        yield Net(**vars(observed))


# ---------------------------------------------------------------- found by the review


@pytest.mark.parametrize(
    "url",
    [
        f"http://{CORPUS_HOST}.:6379/",  # plain http, any port, to whatever DNS says
        f"https://{CORPUS_HOST}./",
        f"https://{CORPUS_HOST.upper()}\u3002:22/",  # ideographic full stop = trailing dot
    ],
)
async def test_corpus_host_with_a_trailing_dot_goes_to_the_network(net: Net, url: str) -> None:
    """The corpus mount `all://host` misses `host.`, yet check_url and GuardedBackend normalise
    `host.` to `host`, a local host: http, any port, and no address check. It must be served from
    disk (or refused), never resolved or connected."""
    try:
        body = await net.fetch(url, [CORPUS_HOST])
    except FetchRefused:
        body = None
    except FetchFailed as failure:
        pytest.fail(f"went to the network: {failure}")

    assert body in (None, DISK_PAGE)
    assert (net.resolver.lookups, net.router.asked, net.trap.connections) == ([], [], 0)


async def test_check_url_cli_agrees_with_the_fetch_for_a_trailing_dot(net: Net) -> None:
    """`research check-url` says "served from the local corpus" while fetch_page connects out."""
    url = f"http://{CORPUS_HOST}.:6379/"
    said = await check_fetchable(net.settings.fetch_options(), url, [CORPUS_HOST], net.resolver)
    with contextlib.suppress(FetchRefused, FetchFailed):
        await net.fetch(url, [CORPUS_HOST])

    assert "local corpus" not in said or net.router.asked == []


@pytest.mark.parametrize(
    "name",
    [
        "site-local",  # fec0::/10, deprecated site-local (RFC 3879); Python 3.11 calls it global
        "doc-3fff",  # 3fff::/20, documentation (RFC 9637); unknown to Python 3.11
        "nat64-local",  # 64:ff9b:1::/48, local-use NAT64 (RFC 8215): not globally reachable
        "v4-compatible",  # ::/96 (deprecated) is reserved; the embedded-IPv4 early return skips it
        "teredo",  # 2001::/32 is non-global (2001::/23); the early return skips that too
    ],
)
async def test_non_global_ipv6_answers_are_refused(net: Net, name: str) -> None:
    host = f"{name}.wild.example"
    with pytest.raises(FetchRefused, match="resolves to"):
        await net.fetch(f"https://{host}/", ["*.wild.example"])

    assert (net.router.asked, net.trap.connections) == ([], 0)


def test_allowlist_uses_the_same_idna_as_the_url_parser() -> None:
    """normalise_host uses Python's IDNA 2003 codec (maps ß to ss); httpx uses IDNA 2008 (keeps ß
    as xn--fa-hia). Allowing `faß.example` must not admit the different domain `fass.example`."""
    rules = [normalise_host("faß.example")]

    with pytest.raises(FetchRefused, match="not in the allowed hosts"):
        check_url("https://fass.example/", rules, FetchPolicy())
    assert check_url("https://faß.example/", rules, FetchPolicy())


@pytest.mark.parametrize("path", ["/no-location", "/no-slashes", "/https-no-slashes"])
async def test_hostile_redirect_answers_end_in_a_typed_refusal_or_failure(
    net: Net, path: str
) -> None:
    """A 3xx without Location raises KeyError (httpx 0.28's is_redirect is the status alone); a
    Location like `https:x` raises httpx.InvalidURL inside client.stream (httpx builds
    next_request even with follow_redirects=False). Neither is FetchRefused/FetchFailed, so the
    read_page activity errors, is retried 5 times, and the whole run ends FAILED."""
    with pytest.raises((FetchRefused, FetchFailed)):
        await net.fetch(f"http://pages.test:{net.pages_port}{path}", ["pages.test"])
    # Only the guard reads Location now: `http:evil.example` from an http page is the relative
    # path `evil.example` on the same host (RFC 3986), followed there and nowhere else.
    assert set(net.router.asked) == {("127.0.0.1", net.pages_port)}
    assert net.trap.connections == 0


# ---------------------------------------------------------------- more coverage


async def test_corpus_host_without_a_dot_is_served_from_disk(net: Net) -> None:
    assert await net.fetch(f"https://{CORPUS_HOST.upper()}:8443/", [CORPUS_HOST]) == DISK_PAGE
    assert (net.resolver.lookups, net.router.asked) == ([], [])


async def test_multiple_location_headers_are_refused(net: Net) -> None:
    with pytest.raises(FetchRefused, match="space"):
        await net.fetch(f"http://pages.test:{net.pages_port}/two-locations", ["pages.test"])
    assert net.trap.connections == 0


async def test_proxy_environment_is_ignored(
    net: Net, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.setenv(var, "http://proxy.wild.example:3128")
    settings = Settings(corpus_dir=tmp_path / "none", state_dir=tmp_path)
    async with build_http_client(
        settings.fetch_options(), resolver=net.resolver, backend=net.router
    ) as client:
        with pytest.raises(FetchFailed):  # the trap does not speak TLS
            await fetch_page(
                client,
                "https://public.wild.example/",
                ["*.wild.example"],
                max_bytes=1000,
                timeout_seconds=5,
            )
    assert net.router.asked == [("93.184.215.14", 443)]
    assert net.resolver.lookups == ["public.wild.example"]


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:0:7f00:1",  # SIIT ::ffff:0:0:0/96
        "::ffff:0:a9fe:a9fe",
        "100::1",  # discard-only 100::/64
        "2001:10::1",  # ORCHID
        "2001:2::1",  # benchmarking
        "5f00::1",  # SRv6 SIDs
        "fe80::1%eth0",
        "ff0e::1",
        "64:ff9b::7f00:1",
        "2002:a9fe:a9fe::1",
        "192.0.0.170",  # NAT64 discovery
    ],
)
def test_more_inside_addresses_are_refused(address: str) -> None:
    assert refusal_for_address(address) is not None


def test_the_guarded_pool_is_http1_only_and_has_no_proxy(net: Net) -> None:
    """HTTP/2 would allow connection coalescing across hosts; a proxy pool would connect to the
    proxy, not the checked address. Neither may sneak in through a dependency upgrade."""
    pool = net.client._transport._pool  # type: ignore[attr-defined]
    assert type(pool) is httpcore.AsyncConnectionPool
    assert (pool._http1, pool._http2) == (True, False)
    assert not net.client._mounts or all(  # only the corpus mounts
        type(t).__name__ == "CorpusTransport" for t in net.client._mounts.values()
    )
