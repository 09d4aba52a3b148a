"""The SSRF suite: URLs, DNS answers and redirect chains that must never reach a refused address.

Every fetch runs through the real `fetch_page` and the real guarded httpx client. DNS answers come
from a stub resolver; every connection the client opens is routed to a trap server on 127.0.0.1
that counts it. A refused case asserts FetchRefused *and* that the trap saw no connection; URL cases
also assert that no name was resolved (checks that need no DNS happen first). Control cases show
the same harness does see connections to allowed addresses, so the zero counts mean something.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from activities.pages.fetch import FetchFailed, FetchRefused, build_http_client, fetch_page
from activities.pages.guard import FetchPolicy, check_redirect, check_url, refusal_for_address
from runtime.settings import Settings
from tests.fakes.network import (
    GuardedNet,
    HttpsPage,
    LoopbackRouter,
    StubResolver,
    TrapServer,
    guarded_net,
    http_response,
    raw_http,
    self_signed,
)

ALLOWED = ["docs.allowed.example", "*.wild.example", "pages.test"]
PUBLIC = "93.184.215.14"  # a globally routable answer

# Names the stub resolver answers; each resolves inside (or to a metadata address).
INSIDE_ANSWERS: dict[str, list[str]] = {
    "loopback": ["127.0.0.1"],
    "loopback-high": ["127.255.255.254"],
    "zero": ["0.0.0.0"],
    "zero-net": ["0.1.2.3"],
    "private-10": ["10.0.0.1"],
    "private-172": ["172.16.0.1"],
    "private-172-top": ["172.31.255.254"],
    "private-192": ["192.168.1.1"],
    "cgnat": ["100.64.0.1"],
    "cgnat-alibaba-metadata": ["100.100.100.200"],
    "link-local": ["169.254.1.1"],
    "metadata": ["169.254.169.254"],
    "azure-wireserver": ["168.63.129.16"],
    "ietf-protocol": ["192.0.0.8"],
    "test-net-1": ["192.0.2.1"],
    "test-net-2": ["198.51.100.7"],
    "test-net-3": ["203.0.113.9"],
    "benchmark": ["198.18.0.1"],
    "multicast": ["224.0.0.1"],
    "multicast-high": ["239.255.255.250"],
    "reserved": ["240.0.0.1"],
    "broadcast": ["255.255.255.255"],
    "v6-loopback": ["::1"],
    "v6-unspecified": ["::"],
    "v6-link-local": ["fe80::1"],
    "v6-link-local-scoped": ["fe80::1%1"],
    "v6-unique-local": ["fc00::1"],
    "v6-unique-local-fd": ["fd12:3456:789a::1"],
    "v6-aws-metadata": ["fd00:ec2::254"],
    "v6-multicast": ["ff02::1"],
    "v6-documentation": ["2001:db8::1"],
    "v6-mapped-loopback": ["::ffff:127.0.0.1"],
    "v6-mapped-private": ["::ffff:10.0.0.1"],
    "v6-mapped-metadata": ["::ffff:169.254.169.254"],
    "v6-mapped-hex": ["::ffff:7f00:1"],
    "v6-compatible-loopback": ["::127.0.0.1"],
    "v6-nat64-loopback": ["64:ff9b::7f00:1"],
    "v6-nat64-private": ["64:ff9b::a00:1"],
    "v6-nat64-metadata": ["64:ff9b::a9fe:a9fe"],
    "v6-6to4-loopback": ["2002:7f00:1::1"],
    "v6-6to4-private": ["2002:c0a8:101::1"],
    "v6-teredo": ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    "mixed-public-first": [PUBLIC, "10.0.0.1"],
    "mixed-private-first": ["192.168.0.1", PUBLIC],
    "mixed-v6-inside": [PUBLIC, "::1"],
    "empty-answer": [],
}
ANSWERS = {f"{name}.wild.example": addresses for name, addresses in INSIDE_ANSWERS.items()}
ANSWERS |= {"docs.allowed.example": [PUBLIC], "ok.wild.example": ["2606:4700::6810:84e5"]}
ANSWERS |= {"mapped-public.wild.example": ["::ffff:" + PUBLIC]}

# URLs refused before any DNS lookup, with the reason's key words.
URL_CASES: list[tuple[str, str]] = [
    # scheme
    ("ftp://docs.allowed.example/", "scheme 'ftp'"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://docs.allowed.example:70/_GET", "scheme 'gopher'"),
    ("ws://docs.allowed.example/", "scheme 'ws'"),
    ("data:text/html,<p>hi</p>", "scheme 'data'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("dict://docs.allowed.example:11211/stat", "scheme 'dict'"),
    ("//docs.allowed.example/page", "scheme ''"),
    ("docs.allowed.example/page", "scheme ''"),
    ("http://docs.allowed.example/", "plain http"),
    ("HTTP://docs.allowed.example/", "plain http"),
    # userinfo
    ("https://user@docs.allowed.example/", "user name or password"),
    ("https://user:pass@docs.allowed.example/", "user name or password"),
    ("https://:@docs.allowed.example/", "not in the allowed hosts|user name"),
    ("https://docs.allowed.example@evil.example/", "user name or password"),
    ("https://docs.allowed.example%40evil.example/", "no valid host name"),
    ("https://evil.example#@docs.allowed.example/", "not in the allowed hosts"),
    ("https://evil.example?@docs.allowed.example/", "not in the allowed hosts"),
    # backslashes, spaces and control characters
    ("https://docs.allowed.example\\@evil.example/", "backslash"),
    ("https:\\\\evil.example\\", "backslash"),
    ("https://docs.allowed.example/a\\b", "backslash"),
    ("https://docs.allowed.example /", "space"),
    ("https://docs.allowed.example/\t", "control character"),
    ("https://docs.allowed.example/\r\nHost: evil", "control character"),
    ("https://docs.allowed.example/\n", "control character"),
    ("https://docs.allowed.example\x00.evil.example/", "control character"),
    ("https://docs.allowed.example/\x7f", "control character"),
    ("https://docs.allowed.example/\x85", "control character"),
    (" https://docs.allowed.example/", "space"),
    # ports
    ("https://docs.allowed.example:8443/", "port 8443"),
    ("https://docs.allowed.example:80/", "port 80"),
    ("https://docs.allowed.example:22/", "port 22"),
    ("https://docs.allowed.example:6379/", "port 6379"),
    ("https://docs.allowed.example:0/", "port 0"),
    ("https://docs.allowed.example:65536/", "port 65536"),
    ("https://docs.allowed.example:99999/", "port 99999"),
    ("https://docs.allowed.example:-1/", "port -1"),
    ("https://docs.allowed.example:abc/", "not a valid URL"),
    # IP literals and names a resolver would read as addresses
    ("https://127.0.0.1/", "IP address"),
    ("https://127.1/", "IP address"),
    ("https://0/", "IP address"),
    ("https://0.0.0.0/", "IP address"),
    ("https://2130706433/", "IP address"),
    ("https://0x7f000001/", "IP address"),
    ("https://0x7f.0x0.0x0.0x1/", "IP address"),
    ("https://017700000001/", "IP address"),
    ("https://0177.0.0.1/", "IP address|not a valid URL"),
    ("https://10.0.0.1/", "IP address"),
    ("https://169.254.169.254/latest/meta-data/", "IP address"),
    ("https://168.63.129.16/", "IP address"),
    ("https://93.184.215.14/", "IP address"),
    ("https://[::1]/", "IP address"),
    ("https://[::]/", "IP address"),
    ("https://[::ffff:127.0.0.1]/", "IP address"),
    ("https://[::ffff:7f00:1]/", "IP address"),
    ("https://[0:0:0:0:0:ffff:7f00:1]/", "IP address"),
    ("https://[fe80::1%25eth0]/", "IP address"),
    ("https://[fd00:ec2::254]/", "IP address"),
    ("https://[64:ff9b::a9fe:a9fe]/", "IP address"),
    ("https://[2606:4700::6810:84e5]/", "IP address"),
    ("https://1.2.3.4.wild.example.5/", "IP address"),
    # the allowlist: exact hosts, dot boundaries, look-alikes
    ("https://evil.example/", "not in the allowed hosts"),
    ("https://allowed.example/", "not in the allowed hosts"),
    ("https://sub.docs.allowed.example/", "not in the allowed hosts"),
    ("https://docs.allowed.example.evil.example/", "not in the allowed hosts"),
    ("https://docs-allowed.example/", "not in the allowed hosts"),
    ("https://evildocs.allowed.example/", "not in the allowed hosts"),
    ("https://wild.example/", "not in the allowed hosts"),
    ("https://evilwild.example/", "not in the allowed hosts"),
    ("https://x.wild.example.evil.example/", "not in the allowed hosts"),
    ("https://docs.allowed.example../", "no valid host name"),
    ("https://docs..allowed.example/", "no valid host name"),
    ("https://docs_allowed.example/", "no valid host name"),
    ("https://-docs.allowed.example/", "no valid host name"),
    ("https://%64ocs.allowed.example/", "no valid host name"),
    ("https://docs.allowed.example%2f@evil.example/", "user name or password"),
    ("https:///docs.allowed.example/", "no host"),
    ("https://", "no host"),
    # IDN: look-alikes are other hosts; full-width dots and invalid labels never parse
    ("https://docs.\u0430llowed.example/", "not in the allowed hosts"),  # Cyrillic a
    ("https://d\u043ecs.allowed.example/", "not in the allowed hosts"),  # Cyrillic o
    ("https://docs.allowed.example\u3002evil.example/", "not a valid URL|not in the allowed"),
    (
        "https://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/",
        "not a valid URL",
    ),  # full-width
    ("https://xn--dcs-5cd.allowed.example/", "not in the allowed hosts"),
    ("https://docs.allowed.exam\u200bple/", "not a valid URL|no valid host name"),
]

REDIRECT_CASES: list[tuple[str, str]] = [
    *[
        (f"https://{name}.wild.example/", "resolves to|does not resolve")
        for name in (
            "loopback",
            "private-10",
            "metadata",
            "azure-wireserver",
            "cgnat",
            "v6-loopback",
            "v6-mapped-loopback",
            "v6-nat64-metadata",
            "v6-6to4-private",
            "mixed-public-first",
        )
    ],
    ("https://127.0.0.1/", "IP address"),
    ("https://[::1]/", "IP address"),
    ("https://2130706433/", "IP address"),
    ("https://169.254.169.254/latest/meta-data/", "IP address"),
    ("https://evil.example/", "not in the allowed hosts"),
    ("//evil.example/path", "plain http"),  # joined onto the http start
    ("http://docs.allowed.example/", "plain http"),
    ("https://user:pass@docs.allowed.example/", "user name or password"),
    ("https://docs.allowed.example:8443/", "port 8443"),
    ("https://docs.allowed.example\\@evil.example/", "backslash"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://docs.allowed.example/", "scheme 'gopher'"),
    ("https://nxdomain.wild.example/", "does not resolve"),
    ("https://empty-answer.wild.example/", "does not resolve"),
    ("/redirect?to=" + quote("https://metadata.wild.example/", safe=""), "resolves to"),
    ("/redirect?to=" + quote("/redirect?to=https%3A%2F%2F10.0.0.1%2F", safe=""), "IP address"),
    ("/chain?n=6", "more than 5 redirects"),
    ("/chain?n=9", "more than 5 redirects"),
]


class Net(GuardedNet):
    async def fetch(self, url: str) -> None:
        await fetch_page(self.client, url, ALLOWED, max_bytes=100_000, timeout_seconds=5)


def _page(target: str) -> bytes:
    """A local page server that redirects: /redirect?to=URL and /chain?n=N (N hops back to it)."""
    path, _, query = target.partition("?")
    value = query.partition("=")[2]
    if path == "/redirect":
        return http_response("302 Found", Location=unquote(value))
    if path == "/chain" and int(value or 0) > 0:
        return http_response("302 Found", Location=f"/chain?n={int(value) - 1}")
    body = b"<html><title>ok</title><p>the end of the chain</p></html>"
    return http_response("200 OK", body, Content_Type="text/html")


@pytest.fixture
async def net(tmp_path: Path) -> AsyncIterator[Net]:
    async with guarded_net(ANSWERS, raw_http(_page), tmp_path) as observed:
        yield Net(**vars(observed))


@pytest.mark.parametrize(("url", "reason"), URL_CASES)
async def test_refused_url_never_resolves_or_connects(net: Net, url: str, reason: str) -> None:
    with pytest.raises(FetchRefused, match=reason):
        await net.fetch(url)

    assert net.resolver.lookups == []  # refused before any DNS
    assert (net.router.asked, net.trap.connections) == ([], 0)


@pytest.mark.parametrize("name", sorted(INSIDE_ANSWERS))
async def test_names_resolving_inside_are_refused_before_connecting(net: Net, name: str) -> None:
    host = f"{name}.wild.example"
    with pytest.raises(FetchRefused, match=f"host {host} (resolves to|does not resolve)"):
        await net.fetch(f"https://{host}/")

    assert net.resolver.lookups == [host]  # resolved exactly once
    assert (net.router.asked, net.trap.connections) == ([], 0)


@pytest.mark.parametrize(("location", "reason"), REDIRECT_CASES)
async def test_redirects_to_refused_targets_stop_at_the_last_allowed_hop(
    net: Net, location: str, reason: str
) -> None:
    own_path = location.startswith(("/redirect?", "/chain?"))
    start = location if own_path else "/redirect?to=" + quote(location, safe="")
    with pytest.raises(FetchRefused, match=reason):
        await net.fetch(net.page(start))

    assert all(asked == ("127.0.0.1", net.pages_port) for asked in net.router.asked)
    assert net.trap.connections == 0


# ---------------------------------------------------------------- controls: the harness can see


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("https://docs.allowed.example/page", PUBLIC),
        ("https://DOCS.Allowed.Example./page", PUBLIC),
        ("https://docs.allowed.example:443/page", PUBLIC),
        ("https://ok.wild.example/page", "2606:4700::6810:84e5"),
        ("https://mapped-public.wild.example/", "::ffff:" + PUBLIC),
    ],
)
async def test_allowed_names_connect_to_the_checked_address(
    net: Net, url: str, address: str
) -> None:
    with pytest.raises(FetchFailed):  # the trap does not speak TLS: the handshake fails
        await net.fetch(url)

    assert net.router.asked == [(address, 443)]
    assert net.trap.connections == 1
    assert len(net.resolver.lookups) == 1  # one resolution, and the connection used its answer


async def test_a_redirect_to_an_allowed_public_host_connects_once(net: Net) -> None:
    with pytest.raises(FetchFailed):
        await net.fetch(net.page("/redirect?to=" + quote("https://docs.allowed.example/", safe="")))

    assert net.router.asked == [("127.0.0.1", net.pages_port), (PUBLIC, 443)]
    assert net.trap.connections == 1


async def test_a_five_hop_chain_on_a_local_host_is_followed(net: Net) -> None:
    page = await fetch_page(
        net.client, net.page("/chain?n=5"), ALLOWED, max_bytes=10_000, timeout_seconds=5
    )

    assert page.final_url == net.page("/chain?n=0")
    assert net.trap.connections == 0


# ---------------------------------------------------------------- the pure checks on their own


@pytest.mark.parametrize(
    "address", sorted({a for answers in INSIDE_ANSWERS.values() for a in answers} - {PUBLIC})
)
def test_every_inside_address_has_a_refusal(address: str) -> None:
    assert refusal_for_address(address) is not None


@pytest.mark.parametrize(
    "address", [PUBLIC, "8.8.8.8", "1.1.1.1", "2606:4700::6810:84e5", "::ffff:8.8.8.8"]
)
def test_global_addresses_pass(address: str) -> None:
    assert refusal_for_address(address) is None


def test_https_to_http_redirect_is_refused_even_for_a_local_host() -> None:
    policy = FetchPolicy.from_entries(["pages.test"])
    current = check_url("https://pages.test/a", ["pages.test"], policy)

    with pytest.raises(FetchRefused, match="from https to plain http"):
        check_redirect(current, "http://pages.test/b", ["pages.test"], policy)


def test_local_hosts_are_explicit() -> None:
    assert check_url(
        "http://pages.test:8080/", ["pages.test"], FetchPolicy.from_entries(["pages.test"])
    )
    with pytest.raises(FetchRefused, match="plain http"):
        check_url("http://pages.test:8080/", ["pages.test"], FetchPolicy())
    with pytest.raises(ValueError, match="not `host` or `host=IP address`"):
        FetchPolicy.from_entries(["pages.test=not-an-ip"])


def test_the_suite_is_large_enough() -> None:
    cases = len(URL_CASES) + len(INSIDE_ANSWERS) + len(REDIRECT_CASES)
    assert cases >= 150, cases


# ---------------------------------------------------------------- TLS to the checked address


@pytest.mark.parametrize(
    ("certificate_for", "succeeds"), [("docs.allowed.example", True), ("other.example", False)]
)
async def test_https_connects_to_the_checked_address_and_verifies_the_host_name(
    tmp_path: Path, certificate_for: str, succeeds: bool
) -> None:
    """The connection goes to the resolved address, yet TLS still checks the certificate against
    the URL's host name (SNI): a certificate for another name fails the fetch."""
    cert, key = self_signed(certificate_for, tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    page = b"<html><title>pinned</title><p>served over TLS to the checked address</p></html>"
    async with TrapServer() as trap, HttpsPage(cert, key, page) as https:
        router = LoopbackRouter(trap.port, forward={(PUBLIC, 443): https.port})
        settings = Settings(corpus_dir=tmp_path / "no-corpus", state_dir=tmp_path)
        resolver = StubResolver(ANSWERS)
        async with build_http_client(
            settings.fetch_options(), resolver=resolver, backend=router, verify=trust
        ) as client:
            fetch = fetch_page(
                client,
                "https://docs.allowed.example/",
                ALLOWED,
                max_bytes=10_000,
                timeout_seconds=5,
            )
            if succeeds:
                fetched = await fetch
                assert fetched.body == page
            else:
                with pytest.raises(FetchFailed, match=r"(?i)certificate|hostname"):
                    await fetch

    assert router.asked == [(PUBLIC, 443)]
    assert resolver.lookups == ["docs.allowed.example"]
    assert (https.served, trap.connections) == (int(succeeds), 0)
