"""Page fetching (I/O): the fetch client and the policy-checked fetch of one page.

Every fetch parses its URL once and checks it (`guard`) before any request; the client connects
only to checked addresses; redirects are followed by hand, re-checking each hop; the body streams
under a byte cap and a decompressed-size cap, and one deadline bounds the whole fetch. Corpus
hosts are served from disk (`corpus_transport`); extraction of the fetched bytes lives in
`extract` (decoding in `decode`, PDFs in `pdf`): the modules of this package.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path

import httpcore
import httpx

from activities import spans
from activities.pages.corpus_transport import CorpusTransport
from activities.pages.decode import ACCEPT_ENCODING, CappedDecoder, DecodeRefused
from activities.pages.guard import (
    DEFAULT_PORTS,
    FetchPolicy,
    FetchRefused,
    GuardedBackend,
    GuardedTransport,
    Resolver,
    check_redirect,
    check_url,
    checked_addresses,
    refusal_reason,
    system_resolver,
    url_host,
)
from activities.pages.page import FetchedPage
from runtime.options import FetchOptions

__all__ = [
    "FetchFailed",
    "FetchRefused",
    "FetchedPage",
    "build_http_client",
    "client_policy",
    "fetch_page",
]

MAX_REDIRECTS = 5
USER_AGENT = "research-agent/0.1"
ALLOWED_CONTENT_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)


class FetchFailed(Exception):
    """The fetch was allowed but did not succeed (network error, HTTP error status, timeout)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status when the server answered, else None


# ---------------------------------------------------------------- the client

_NO_COOKIES = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class FetchClient(httpx.AsyncClient):
    """An httpx client for `fetch_page`: no environment proxies, no automatic redirects, and the
    operator's fetch policy (local hosts). The transport is required: there is no unguarded default.
    """

    def __init__(
        self,
        *,
        timeout_seconds: float,
        transport: httpx.AsyncBaseTransport,
        policy: FetchPolicy | None = None,
        mounts: dict[str, httpx.AsyncBaseTransport | None] | None = None,
        offline_hosts: frozenset[str] = frozenset(),
    ) -> None:
        # Corpus hosts a read of never leaves the disk (`CorpusTransport.offline_hosts`).
        self.offline_hosts = offline_hosts
        super().__init__(
            trust_env=False,  # no proxies or certificates from the environment
            follow_redirects=False,  # fetch_page follows redirects by hand, re-checking each hop
            timeout=httpx.Timeout(timeout_seconds),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            transport=transport,
            mounts=mounts,
            cookies=_NO_COOKIES,  # a page's cookies never travel to another fetch
            event_hooks={"response": [_hold_location]},
        )
        self.policy = policy or FetchPolicy()


HELD_LOCATION = "research.location"


async def _hold_location(response: httpx.Response) -> None:
    """Take a redirect's Location away from httpx, which would parse it (to build a next request
    we never send) and fail on a malformed one in its own or the IDNA library's words: the guard
    alone reads it (`check_redirect`), so every unacceptable target is a refusal naming it."""
    if "Location" in response.headers:
        response.extensions[HELD_LOCATION] = response.headers["Location"]
        del response.headers["Location"]


def build_http_client(
    options: FetchOptions,
    *,
    corpus_folders: Mapping[str, Path] | None = None,
    resolver: Resolver = system_resolver,
    backend: httpcore.AsyncNetworkBackend | None = None,
    default_transport: httpx.AsyncBaseTransport | None = None,
    verify: ssl.SSLContext | bool = True,
) -> FetchClient:
    """The fetch client: corpus hosts served from `options.corpus_dir` and from `corpus_folders`
    (host -> the folder it was indexed from, which wins); every other host through
    `GuardedTransport`, which resolves with `resolver` and connects through `backend` (the real
    network when None) only to checked addresses. `default_transport` replaces the guarded
    transport altogether (tests of the corpus and redirect rules).
    """
    corpus = CorpusTransport(options.corpus_dir, corpus_folders)
    corpus_hosts = corpus.hosts()
    policy = fetch_policy(options, corpus_hosts)
    transport = default_transport or GuardedTransport(
        GuardedBackend(policy, resolver, backend), verify=verify
    )
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {
        f"all://{host}": corpus for host in corpus_hosts
    }
    return FetchClient(
        timeout_seconds=options.limits.timeout_seconds,
        transport=transport,
        policy=policy,
        mounts=mounts,
        offline_hosts=frozenset(corpus.offline_hosts()),
    )


def client_policy(client: httpx.AsyncClient) -> FetchPolicy:
    """The fetch policy a client carries (a plain client: the default policy)."""
    return client.policy if isinstance(client, FetchClient) else FetchPolicy()


def fetch_policy(options: FetchOptions, corpus_hosts: list[str]) -> FetchPolicy:
    """The configured local hosts, plus the corpus hosts (served from disk, never the network)."""
    return FetchPolicy.from_entries(options.local_hosts).with_corpus(corpus_hosts)


async def check_fetchable(
    options: FetchOptions,
    url: str,
    allowed_hosts: list[str],
    resolver: Resolver = system_resolver,
    corpus_folders: Mapping[str, Path] | None = None,
) -> str:
    """Where a fetch of `url` would go, checked exactly as `fetch_page` checks its first hop;
    FetchRefused with the reason otherwise. No DNS happens unless the URL itself passes."""
    corpus = CorpusTransport(options.corpus_dir, corpus_folders)
    policy = fetch_policy(options, corpus.hosts())
    parsed = check_url(url, allowed_hosts, policy)
    host = url_host(parsed)
    if host in policy.corpus_hosts:
        return f"served from the local corpus folder {corpus.folder(host)}"
    port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    addresses = await checked_addresses(host, port, policy, resolver)
    return f"connects to {', '.join(addresses)} port {port}"


# ---------------------------------------------------------------- the fetch


async def fetch_page(
    client: httpx.AsyncClient,
    url: str,
    allowed_hosts: list[str],
    *,
    max_bytes: int,
    timeout_seconds: float,
    max_decoded_bytes: int | None = None,
) -> FetchedPage:
    """Fetch one page under the fetcher's security rules (DESIGN.md, "Security rules").

    `max_bytes` caps the bytes on the wire, `max_decoded_bytes` (default: `max_bytes`) the body
    after content decoding. Raises FetchRefused for a policy breach (before any request when the
    URL itself breaks it) and FetchFailed otherwise.
    """
    with spans.http_request("GET", url, purpose="page", keep_query=False) as span:
        try:
            page = await _fetch_page(
                client,
                url,
                allowed_hosts,
                _Caps(max_bytes, max_decoded_bytes or max_bytes),
                timeout_seconds,
            )
        except FetchRefused as error:
            spans.refused(span, refusal_reason(str(error)), str(error))
            raise
        except FetchFailed as error:
            if error.status is not None:
                spans.http_response(span, error.status, 0)
            raise
        final = page.final_url if page.final_url != url else None
        spans.http_response(span, page.status, len(page.body), final)
        return page


async def _fetch_page(
    client: httpx.AsyncClient,
    url: str,
    allowed_hosts: list[str],
    caps: _Caps,
    timeout_seconds: float,
) -> FetchedPage:
    policy = client_policy(client)
    target = check_url(url, allowed_hosts, policy)
    try:
        async with asyncio.timeout(timeout_seconds):
            return await _follow_redirects(client, url, target, allowed_hosts, policy, caps)
    except TimeoutError:
        raise FetchFailed(f"fetching {url} took longer than {timeout_seconds:g} seconds") from None
    except httpx.TimeoutException:
        raise FetchFailed(f"fetching {url} timed out") from None
    except httpx.InvalidURL:  # a Location httpx cannot even parse (`https:x`)
        raise FetchRefused(f"fetching {url} met a redirect to a malformed URL") from None
    except httpx.HTTPError as error:
        reason = str(error) or type(error).__name__
        raise FetchFailed(f"network error fetching {url}: {reason}") from None


@dataclass(frozen=True)
class _Caps:
    raw: int
    decoded: int


async def _follow_redirects(
    client: httpx.AsyncClient,
    asked: str,
    url: httpx.URL,
    allowed_hosts: list[str],
    policy: FetchPolicy,
    caps: _Caps,
) -> FetchedPage:
    for hop in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", url) as response:
            if not response.is_redirect:
                return await _read_page(asked, url, response, caps)
            if hop == MAX_REDIRECTS:
                break
            location = response.extensions.get(HELD_LOCATION, response.headers.get("Location"))
            if location is None:
                raise FetchFailed(f"HTTP {response.status_code} from {url} names no Location")
            url = check_redirect(url, location, allowed_hosts, policy)
    raise FetchRefused(f"fetching {asked} took more than {MAX_REDIRECTS} redirects")


async def _read_page(
    asked: str, url: httpx.URL, response: httpx.Response, caps: _Caps
) -> FetchedPage:
    if response.status_code >= 300 or response.status_code < 200:
        raise FetchFailed(f"HTTP {response.status_code} from {url}", status=response.status_code)
    content_type, charset = _content_type(url, response)
    body = await _read_capped(url, response, caps)
    return FetchedPage(
        url=asked,
        final_url=str(url),
        status=response.status_code,
        content_type=content_type,
        charset=charset,
        body=body,
    )


def _content_type(url: httpx.URL, response: httpx.Response) -> tuple[str, str | None]:
    header = response.headers.get("Content-Type", "")
    media_type = header.partition(";")[0].strip().lower()
    if media_type not in ALLOWED_CONTENT_TYPES:
        shown = media_type or "no content type"
        raise FetchRefused(f"{url} is {shown}, not a page type that can be read")
    charset = response.charset_encoding
    return media_type, charset.lower() if charset else None


async def _read_capped(url: httpx.URL, response: httpx.Response, caps: _Caps) -> bytes:
    """The decoded body; refused as soon as the wire bytes pass `caps.raw` or the decoded bytes
    pass `caps.decoded` (the decoder never inflates past its cap, so bombs stay small)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > caps.raw:
        raise FetchRefused(f"{url} is larger than {caps.raw} bytes")
    try:
        decoder = CappedDecoder(response.headers.get("Content-Encoding"), caps.decoded)
        received = 0
        body = bytearray()
        async for chunk in response.aiter_raw():
            received += len(chunk)
            if received > caps.raw:
                raise FetchRefused(f"{url} is larger than {caps.raw} bytes")
            body.extend(decoder.feed(chunk))
        body.extend(decoder.finish())
    except DecodeRefused as refused:
        raise FetchRefused(f"{url}: {refused}") from None
    return bytes(body)
