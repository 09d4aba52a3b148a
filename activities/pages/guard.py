"""The fetcher's guard (I/O at the edge): which URLs, names and addresses a fetch may reach.

Two stages, both used by `fetch_page` and by `research check-url`, so a user debugs exactly the
fetcher's policy:

1. `check_url` / `check_redirect` (no DNS): one parse, https only (plain http only for configured
   local hosts), no userinfo, backslashes or control characters, no IP literals, default ports only,
   and the host on the allowlist after IDNA, case and trailing-dot normalisation.
2. `checked_addresses` (DNS): every address a name resolves to must be globally routable, unless
   the name is a configured local host. `GuardedBackend` runs this inside httpcore's connect step
   and connects to the address it checked, so there is no second resolution to race.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx
import idna

from workflows.hosts import (
    MAX_HOST_CHARS,
    host_matches,
    local_host_entry,
    looks_like_address,
    normalise_host,
)

Resolver = Callable[[str, int], Awaitable[list[str]]]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_PORTS = {"https": 443, "http": 80}
MAX_CONNECTIONS = 100  # httpx's own defaults, which a bare httpcore pool would not apply
MAX_KEEPALIVE_CONNECTIONS = 20
KEEPALIVE_SECONDS = 5.0
# Globally routable on paper, but cloud control planes: Azure's wire server and the AWS/GCP/Azure
# metadata endpoint (link-local, refused anyway) and its IPv6 form.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("168.63.129.16", "169.254.169.254", "fd00:ec2::254")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known prefix: the low 32 bits are IPv4
# Not globally routable, or tunnels whose far end is an IPv4 address we would have to trust; some of
# these are `is_global` in Python 3.11's tables.
_NON_GLOBAL = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",
        "100.64.0.0/10",  # CGNAT
        "192.0.0.0/24",
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "198.18.0.0/15",
        "240.0.0.0/4",
        "::/96",  # IPv4-compatible (deprecated)
        "64:ff9b:1::/48",  # NAT64 local-use
        "100::/64",  # discard-only
        "2001::/32",  # Teredo
        "2001:db8::/32",
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation (2024)
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",  # site-local (deprecated)
    )
)


class FetchRefused(Exception):
    """The fetch broke a policy rule (host, scheme, address, redirects, type, size)."""


# The kinds of refusal, for metrics and spans (a small fixed set; the message keeps the detail).
# The first phrase a refusal message contains names its kind; order matters ("redirects to a
# refused URL: host ... is not in the allowed hosts" is a redirect).
_REFUSAL_KINDS = (
    ("redirect", "redirect"),
    ("not in the allowed hosts", "host_not_allowed"),
    ("corpus host", "host_not_allowed"),
    ("does not resolve", "dns"),
    ("refused address", "address"),
    ("names an ip address", "address"),
    ("unix socket", "address"),
    ("scheme", "scheme"),
    ("plain http", "scheme"),
    ("names port", "port"),
    ("user name or password", "userinfo"),
    ("not a page type", "content_type"),
    ("larger than", "size"),
    ("encoding", "encoding"),
    ("decod", "encoding"),
    ("compress", "encoding"),
    ("of cpu time", "cpu_time"),
)


def refusal_reason(message: str) -> str:
    """The kind of a refusal message: one of _REFUSAL_KINDS's names, else `invalid_url`."""
    lowered = message.lower()
    return next((kind for phrase, kind in _REFUSAL_KINDS if phrase in lowered), "invalid_url")


@dataclass(frozen=True)
class FetchPolicy:
    """What the operator configured beyond the brief's allowlist.

    `local_hosts` may be fetched over plain http, on any port, and may resolve to non-global
    addresses (a test server, an intranet mirror). `pinned` maps some of them to a fixed address,
    resolved without DNS (like curl's --resolve). `corpus_hosts` are served from the local corpus
    folder (plain http allowed) and are never looked up or connected to.
    """

    local_hosts: frozenset[str] = frozenset()
    pinned: Mapping[str, str] = field(default_factory=dict)
    corpus_hosts: frozenset[str] = frozenset()  # served from disk: never connected to

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> FetchPolicy:
        """Entries `host` or `host=address`; ValueError with one sentence when one is malformed."""
        hosts: set[str] = set()
        pinned: dict[str, str] = {}
        for entry in entries:
            host, address = local_host_entry(entry)
            if address is not None:
                pinned[host] = address
            hosts.add(host)
        return cls(local_hosts=frozenset(hosts), pinned=pinned)

    def with_corpus(self, hosts: Iterable[str]) -> FetchPolicy:
        return FetchPolicy(self.local_hosts, self.pinned, self.corpus_hosts | set(hosts))


# ---------------------------------------------------------------- stage 1: the URL, no DNS


def check_url(raw: str, allowed_hosts: list[str], policy: FetchPolicy) -> httpx.URL:
    """The parsed URL when it may be fetched (DNS aside); FetchRefused with the reason otherwise."""
    _check_characters(raw, f"URL {raw!r}")
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise FetchRefused(f"URL {raw!r} is not a valid URL") from None
    return _checked(url, allowed_hosts, policy)


def check_redirect(
    current: httpx.URL, location: str, allowed_hosts: list[str], policy: FetchPolicy
) -> httpx.URL:
    """The next hop of a redirect, under the same rules, and never from https down to http."""
    _check_characters(location, f"{current} redirects to a location that")
    try:
        target = current.join(location)
    except (httpx.InvalidURL, TypeError, ValueError) as error:  # IDNA errors are ValueErrors
        raise FetchRefused(
            f"{current} redirects to {location!r}, which is not a valid URL ({error})"
        ) from None
    if current.scheme == "https" and target.scheme == "http":
        raise FetchRefused(f"{current} redirects from https to plain http ({target})")
    try:
        return _checked(target, allowed_hosts, policy)
    except FetchRefused as refusal:
        raise FetchRefused(f"{current} redirects to a refused URL: {refusal}") from None


def _check_characters(raw: str, subject: str) -> None:
    if "\\" in raw or any(ord(char) <= 0x20 or 0x7F <= ord(char) <= 0x9F for char in raw):
        raise FetchRefused(f"{subject} contains a backslash, a space or a control character")


def _checked(url: httpx.URL, allowed_hosts: list[str], policy: FetchPolicy) -> httpx.URL:
    if url.scheme not in DEFAULT_PORTS:
        raise FetchRefused(f"URL {url} uses scheme {url.scheme!r}: only https is fetched")
    if url.userinfo:
        shown = url.copy_with(username=None, password=None)  # the credentials are not repeated
        raise FetchRefused(f"URL {shown} carries a user name or password")
    host = url_host(url)
    local = host in policy.local_hosts or host in policy.corpus_hosts
    if url.scheme == "http" and not local:
        raise FetchRefused(f"URL {url} is plain http: only https is fetched from {host}")
    port = url.port  # None when absent or the scheme's default
    if port is not None and not (local and 0 < port < 65536):
        raise FetchRefused(f"URL {url} names port {port}: only the default port is fetched")
    if not host_matches(host, allowed_hosts):
        raise FetchRefused(f"host {host} is not in the allowed hosts")
    # The canonical spelling from here on: the transport routing (corpus mounts), the Host header
    # and the connect step all see the name that was checked (no `docs.example.` variant).
    return url.copy_with(host=host)


def url_host(url: httpx.URL) -> str:
    """The URL's normalised host name; FetchRefused for IP literals and malformed names."""
    raw = url.raw_host.decode("ascii", errors="replace")
    if not raw:
        raise FetchRefused(f"URL {url} has no host")
    if looks_like_address(raw):
        raise FetchRefused(f"URL {url} names an IP address: only host names are fetched")
    if len(raw.rstrip(".")) > MAX_HOST_CHARS:  # DNS's limit: refused here, before any lookup
        raise FetchRefused(f"URL {url} has a host name longer than {MAX_HOST_CHARS} characters")
    try:
        host = normalise_host(raw)
    except ValueError:
        raise FetchRefused(f"URL {url} has no valid host name") from None
    unreadable = _unreadable_label(host)
    if unreadable:
        raise FetchRefused(f"URL {url} has no valid host name: {unreadable}")
    return host


def _unreadable_label(host: str) -> str | None:
    """Why httpx could not read `host` back, or None. It decodes a name starting `xn--` through
    IDNA (`URL.host`, which its mount routing and redirect code use) and would fail there in the
    IDNA library's words instead of being refused here; a punycode label anywhere that does not
    decode is no host name either."""
    labels = [label for label in host.split(".") if label.startswith("xn--")]
    for part in [*labels, *([host] if host.startswith("xn--") else [])]:
        try:
            idna.decode(part)
        except ValueError as error:  # idna.IDNAError is one
            return f"{part!r} is not valid punycode ({str(error).rstrip('.')})"
    return None


# ---------------------------------------------------------------- stage 2: the addresses


def refusal_for_address(address: str) -> str | None:
    """Why a fetch may not connect to `address`, or None when it is globally routable."""
    try:
        ip: Address = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return f"{address} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _translated_ipv4(ip)
        if embedded is not None:  # reaches exactly that IPv4 address: judge that one
            inner = refusal_for_address(str(embedded))
            return f"{ip} embeds {embedded}, and {inner}" if inner else None
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if any(ip in net for net in _NON_GLOBAL):
        return f"{ip} is in a reserved, shared or transition range"
    if not ip.is_global or ip.is_reserved or ip.is_unspecified:
        kind = "loopback" if ip.is_loopback else "private" if ip.is_private else "non-global"
        return f"{ip} is a {kind} address"
    return None


def _translated_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped or NAT64 (64:ff9b::/96) address stands for."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host` (TCP), in its order."""
    loop = asyncio.get_running_loop()
    # Absolute (trailing dot): no resolver search domain turns `docs.example` into an inside name.
    infos = await loop.getaddrinfo(host.rstrip(".") + ".", port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_addresses(
    host: str, port: int, policy: FetchPolicy, resolver: Resolver
) -> list[str]:
    """The addresses a fetch of `host` may connect to; FetchRefused when any answer is refused."""
    if host in policy.corpus_hosts:
        raise FetchRefused(
            f"host {host} is a corpus host: it is served from disk, never the network"
        )
    if host in policy.pinned:
        return [policy.pinned[host]]
    try:
        addresses = await resolver(host, port)
    except OSError as error:
        raise FetchRefused(f"host {host} does not resolve ({error.strerror or error})") from None
    if not addresses:
        raise FetchRefused(f"host {host} does not resolve to any address")
    if host in policy.local_hosts:
        return addresses
    for address in addresses:  # one inside answer taints the name: no picking the safe one
        reason = refusal_for_address(address)
        if reason is not None:
            raise FetchRefused(f"host {host} resolves to a refused address: {reason}")
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's connect step with the address check: resolve once, check every answer, connect
    to a checked address. TLS still verifies the certificate against the host name (SNI)."""

    def __init__(
        self,
        policy: FetchPolicy,
        resolver: Resolver = system_resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            name = normalise_host(host)
        except ValueError:
            raise FetchRefused(f"{host!r} is not a valid host name") from None
        try:
            async with asyncio.timeout(timeout):
                addresses = await checked_addresses(name, port, self._policy, self._resolver)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {name} timed out") from None
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as failure:
                error = failure
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchRefused("the fetcher never connects to unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, connecting through `GuardedBackend`, with no environment settings."""

    def __init__(self, backend: GuardedBackend, *, verify: Any = True) -> None:
        super().__init__(verify=verify, trust_env=False, retries=0)
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        # httpx has no public hook for the network backend; the pool it built is replaced by an
        # identical one that connects through the guard (tests/integration/test_ssrf.py proves it).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_KEEPALIVE_CONNECTIONS,
            keepalive_expiry=KEEPALIVE_SECONDS,
            network_backend=backend,
        )
