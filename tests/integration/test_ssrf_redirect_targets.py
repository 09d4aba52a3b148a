"""Redirect targets the fetcher cannot accept, whichever library fails on them (the IDNA codec,
httpx's URL parser), end in a typed refusal naming the URL and the reason; over-long host names
are refused before DNS. Same harness as test_ssrf.py: stub DNS, every connection routed to a
counting trap on 127.0.0.1, so a refusal proves zero connections past the first hop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.pages.fetch import FetchRefused, fetch_page
from activities.pages.guard import FetchPolicy, check_url, refusal_reason
from tests.fakes.network import GuardedNet, guarded_net, http_response, raw_http

ALLOWED = ["pages.test", "*.lab.test", "lab.test"]
POLICY = FetchPolicy(local_hosts=frozenset({"pages.test"}))
LONG_HOST = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 53]) + ".lab.test"  # 254 characters
# Where `/go?N` redirects: each a Location no fetch may follow, for its own reason.
TARGETS = [
    ("http://xn--/", "host name"),  # an empty punycode label
    ("https://xn--a.lab.test/", "host name"),  # punycode that decodes to nothing valid
    ("http://xn--zz--.lab.test/", "host name"),
    ("http://0177.0.0.2/", "not a valid URL"),  # octal IPv4: httpx refuses to parse it
    ("http://[::1/", "not a valid URL"),  # an unclosed IPv6 literal
    ("https://a.lab.test:443:443/", "not a valid URL"),  # a double port
    ("http://pages.test:80:81/x", "not a valid URL"),
    (f"https://{LONG_HOST}/", "longer than 253 characters"),
]


@pytest.fixture
async def net(tmp_path: Path) -> AsyncIterator[GuardedNet]:
    # An inside address for every name that gets as far as DNS: a follow would reach the trap.
    answers = {"a.lab.test": ["10.0.0.7"], LONG_HOST: ["10.0.0.8"]}

    def respond(path: str) -> bytes:
        index = int(path.partition("?")[2] or "0")
        return http_response("302 Found", Location=TARGETS[index][0])

    async with guarded_net(answers, raw_http(respond), tmp_path) as observed:
        yield observed


@pytest.mark.parametrize(("index", "reason"), [(i, r) for i, (_, r) in enumerate(TARGETS)])
async def test_a_redirect_to_an_unacceptable_url_is_a_typed_refusal(
    net: GuardedNet, index: int, reason: str
) -> None:
    start = net.page(f"/go?{index}")
    with pytest.raises(FetchRefused) as refused:
        await fetch_page(net.client, start, ALLOWED, max_bytes=10_000, timeout_seconds=5)

    message = str(refused.value)
    target = TARGETS[index][0]
    assert target in message or repr(target) in message, message  # names the URL
    assert reason in message, message
    assert refusal_reason(message) == "redirect"
    assert net.router.asked == [("127.0.0.1", net.pages_port)]  # only the first hop
    assert (net.trap.connections, net.resolver.lookups) == (0, [])


@pytest.mark.parametrize("url", [target for target, _ in TARGETS])
def test_the_same_urls_asked_directly_are_refused_before_any_request(url: str) -> None:
    with pytest.raises(FetchRefused) as refused:
        check_url(url, ALLOWED, POLICY)
    assert url in str(refused.value) or repr(url) in str(refused.value)


async def test_a_host_name_of_254_characters_is_refused_before_dns(net: GuardedNet) -> None:
    assert len(LONG_HOST) == 254
    with pytest.raises(FetchRefused, match="longer than 253 characters"):
        await fetch_page(
            net.client, f"https://{LONG_HOST}/", ALLOWED, max_bytes=10_000, timeout_seconds=5
        )
    assert (net.resolver.lookups, net.router.asked, net.trap.connections) == ([], [], 0)


def test_a_host_name_of_253_characters_passes_the_url_check() -> None:
    name = LONG_HOST[1:]
    assert len(name) == 253
    assert check_url(f"https://{name}/", ALLOWED, POLICY).host == name
