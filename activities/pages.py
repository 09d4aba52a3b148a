"""Page fetching (I/O): the policy-checked HTTP fetch, and the local corpus as an httpx transport.

Every fetch parses its URL once, checks scheme, userinfo and the host allowlist before any request,
follows redirects by hand (re-checking each hop), streams the body under a byte cap and bounds the
whole fetch by one deadline. Extraction of the fetched bytes lives in `activities.extract`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import httpx

from runtime.settings import Settings
from workflows.hosts import host_matches, normalise_host

MAX_REDIRECTS = 5
USER_AGENT = "research-agent/0.1"
ALLOWED_CONTENT_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)
REDIRECTS_FILE = "_redirects.json"
_CORPUS_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".pdf": "application/pdf",
}
_TEXT = {"Content-Type": "text/plain; charset=utf-8"}


@dataclass(frozen=True)
class FetchedPage:
    url: str  # the URL asked for
    final_url: str  # after redirects
    status: int
    content_type: str  # media type without parameters, lower-case
    charset: str | None
    body: bytes


class FetchRefused(Exception):
    """The fetch broke a policy rule (host, scheme, redirects, type, size); retrying cannot help."""


class FetchFailed(Exception):
    """The fetch was allowed but did not succeed (network error, HTTP error status, timeout)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status when the server answered, else None


# ---------------------------------------------------------------- the local corpus as a transport


class CorpusTransport(httpx.AsyncBaseTransport):
    """Serves https://<host>/<path> from <corpus_dir>/<host>/<path> (GET/HEAD only).

    `/` and directories serve their `index.html` when present. A `_redirects.json` in a host folder
    maps paths to other URLs (`{"/old": "https://other.example/new"}`), answered with a 301.
    """

    def __init__(self, corpus_dir: Path) -> None:
        self._root = corpus_dir.resolve()

    def hosts(self) -> list[str]:
        """The host names this transport serves: the directory names under the corpus folder."""
        if not self._root.is_dir():
            return []
        return sorted(p.name for p in self._root.iterdir() if p.is_dir() and _is_host_name(p.name))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method not in ("GET", "HEAD"):
            return httpx.Response(405, headers={"Allow": "GET, HEAD"}, request=request)
        status, headers, body = await asyncio.to_thread(self._lookup, request.url)
        content = b"" if request.method == "HEAD" else body
        return httpx.Response(status, headers=headers, content=content, request=request)

    def _lookup(self, url: httpx.URL) -> tuple[int, dict[str, str], bytes]:
        host = url.raw_host.decode("ascii")
        host_dir = self._root / host
        parts = PurePosixPath(url.path).parts[1:]
        if any(part in ("..", ".") or "\\" in part or "\x00" in part for part in parts):
            return 400, _TEXT, b"bad path"
        if not _is_host_name(host) or not host_dir.is_dir():
            return 404, _TEXT, b"not found"
        try:
            location = _redirect_for(host_dir, url.path)
        except ValueError:
            return 500, _TEXT, b"malformed redirects file"
        if location is not None:
            return 301, {"Location": location}, b""
        path = _resolve(host_dir, parts)
        if path is None:
            return 404, _TEXT, b"not found"
        content_type = _CORPUS_TYPES.get(path.suffix.lower(), "application/octet-stream")
        return 200, {"Content-Type": content_type}, path.read_bytes()


def _resolve(host_dir: Path, parts: tuple[str, ...]) -> Path | None:
    """The file a path names inside one host folder; None when missing or outside it."""
    if parts and parts[-1] == REDIRECTS_FILE:
        return None
    path = host_dir.joinpath(*parts).resolve()
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_relative_to(host_dir.resolve()) and path.is_file() else None


def _redirect_for(host_dir: Path, path: str) -> str | None:
    """The Location for `path` from the host's _redirects.json; ValueError when it is malformed."""
    redirects_file = host_dir / REDIRECTS_FILE
    if not redirects_file.is_file():
        return None
    redirects = json.loads(redirects_file.read_text(encoding="utf-8"))
    if not isinstance(redirects, dict):
        raise ValueError(f"{redirects_file} must hold one JSON object")
    target = redirects.get(path)
    return target if isinstance(target, str) else None


def _is_host_name(name: str) -> bool:
    try:
        return normalise_host(name) == name
    except ValueError:
        return False


# ---------------------------------------------------------------- the client


class FetchClient(httpx.AsyncClient):
    """An httpx client for `fetch_page`: no environment proxies, no automatic redirects, and the
    hosts that may be fetched over plain http."""

    def __init__(
        self,
        *,
        timeout_seconds: float,
        plain_http_hosts: Iterable[str] = (),
        transport: httpx.AsyncBaseTransport | None = None,
        mounts: dict[str, httpx.AsyncBaseTransport | None] | None = None,
    ) -> None:
        super().__init__(
            trust_env=False,  # no proxies or certificates from the environment
            follow_redirects=False,  # fetch_page follows redirects by hand, re-checking each hop
            timeout=httpx.Timeout(timeout_seconds),
            headers={"User-Agent": USER_AGENT},
            transport=transport,
            mounts=mounts,
        )
        self.plain_http_hosts = frozenset(normalise_host(host) for host in plain_http_hosts)


def build_http_client(
    settings: Settings,
    *,
    default_transport: httpx.AsyncBaseTransport | None = None,
    local_hosts: Iterable[str] = (),
) -> FetchClient:
    """The fetch client: corpus hosts served from `settings.corpus_dir`, every other host by
    `default_transport` (plain httpx when None; the seam for a DNS-checking, address-pinning one).

    Plain http is allowed for the corpus hosts and for `local_hosts` (e.g. a test server on
    127.0.0.1); everything else must be https.
    """
    corpus = CorpusTransport(settings.corpus_dir)
    corpus_hosts = corpus.hosts()
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {
        f"all://{host}": corpus for host in corpus_hosts
    }
    return FetchClient(
        timeout_seconds=settings.fetch_timeout_seconds,
        plain_http_hosts=[*corpus_hosts, *local_hosts],
        transport=default_transport,
        mounts=mounts,
    )


# ---------------------------------------------------------------- the fetch


async def fetch_page(
    client: httpx.AsyncClient,
    url: str,
    allowed_hosts: list[str],
    *,
    max_bytes: int,
    timeout_seconds: float,
) -> FetchedPage:
    """Fetch one page under the fetcher's security rules (DESIGN.md, "Security rules").

    https is always accepted; plain http only for hosts in `client.plain_http_hosts` (a client
    from `build_http_client`: its corpus hosts and `local_hosts`). Raises FetchRefused for a
    policy breach, before any request when the URL itself breaks it, and FetchFailed otherwise.
    """
    target = _checked_url(_parsed_url(url), allowed_hosts, _plain_http_hosts(client))
    try:
        async with asyncio.timeout(timeout_seconds):
            return await _follow_redirects(client, url, target, allowed_hosts, max_bytes)
    except TimeoutError:
        raise FetchFailed(f"fetching {url} took longer than {timeout_seconds:g} seconds") from None
    except httpx.TimeoutException:
        raise FetchFailed(f"fetching {url} timed out") from None
    except httpx.HTTPError as error:
        reason = str(error) or type(error).__name__
        raise FetchFailed(f"network error fetching {url}: {reason}") from None


def _plain_http_hosts(client: httpx.AsyncClient) -> frozenset[str]:
    return client.plain_http_hosts if isinstance(client, FetchClient) else frozenset()


def _parsed_url(raw: str) -> httpx.URL:
    if "\\" in raw or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in raw):
        raise FetchRefused(f"URL {raw!r} contains a backslash, a space or a control character")
    try:
        return httpx.URL(raw)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise FetchRefused(f"URL {raw!r} is not a valid URL") from None


def _checked_url(
    url: httpx.URL, allowed_hosts: list[str], plain_http_hosts: frozenset[str]
) -> httpx.URL:
    """The URL itself if it passes scheme, userinfo and allowlist checks, else FetchRefused."""
    if url.scheme not in ("http", "https"):
        raise FetchRefused(f"URL {url} uses scheme {url.scheme!r}: only https is fetched")
    host = _normalised_host(url)
    if url.scheme == "http" and host not in plain_http_hosts:
        raise FetchRefused(f"URL {url} is plain http: only https is fetched from {host}")
    if url.userinfo:
        raise FetchRefused(f"URL {url} carries a user name or password")
    if not host_matches(host, allowed_hosts):
        raise FetchRefused(f"host {host} is not in the allowed hosts")
    return url


def _normalised_host(url: httpx.URL) -> str:
    try:
        return normalise_host(url.raw_host.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise FetchRefused(f"URL {url} has no valid host name") from None


async def _follow_redirects(
    client: httpx.AsyncClient, asked: str, url: httpx.URL, allowed_hosts: list[str], max_bytes: int
) -> FetchedPage:
    plain_http_hosts = _plain_http_hosts(client)
    for hop in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", url) as response:
            if not response.is_redirect:
                return await _read_page(asked, url, response, max_bytes)
            if hop == MAX_REDIRECTS:
                break
            url = _redirect_target(url, response, allowed_hosts, plain_http_hosts)
    raise FetchRefused(f"fetching {asked} took more than {MAX_REDIRECTS} redirects")


def _redirect_target(
    current: httpx.URL,
    response: httpx.Response,
    allowed_hosts: list[str],
    plain_http_hosts: frozenset[str],
) -> httpx.URL:
    location = response.headers["Location"]
    if "\\" in location or any(ord(char) < 0x20 or ord(char) == 0x7F for char in location):
        raise FetchRefused(f"{current} redirects to a malformed location")
    try:
        target = current.join(location)
    except httpx.InvalidURL:
        raise FetchRefused(f"{current} redirects to an invalid URL") from None
    if current.scheme == "https" and target.scheme == "http":
        raise FetchRefused(f"{current} redirects from https to plain http ({target})")
    try:
        return _checked_url(target, allowed_hosts, plain_http_hosts)
    except FetchRefused as refusal:
        raise FetchRefused(f"{current} redirects to a refused URL: {refusal}") from None


async def _read_page(
    asked: str, url: httpx.URL, response: httpx.Response, max_bytes: int
) -> FetchedPage:
    if response.status_code >= 300 or response.status_code < 200:
        raise FetchFailed(f"HTTP {response.status_code} from {url}", status=response.status_code)
    content_type, charset = _content_type(url, response)
    body = await _read_capped(url, response, max_bytes)
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


async def _read_capped(url: httpx.URL, response: httpx.Response, max_bytes: int) -> bytes:
    """The decoded body, refused as soon as it passes max_bytes (caps decompression too)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchRefused(f"{url} is larger than {max_bytes} bytes")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise FetchRefused(f"{url} is larger than {max_bytes} bytes")
    return bytes(body)
