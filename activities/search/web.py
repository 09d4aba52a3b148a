"""Web search providers: Serper (Google results as JSON) and SearXNG (self-hosted metasearch).

Both implement `activities.search.SearchProvider` over an injected `httpx.AsyncClient`. The query is
scoped to the brief's hosts with `site:` (`(site:a OR site:b)`; a `*.x` rule becomes `site:x`),
which Google and most engines behind SearXNG honour. Scoping is only a hint: the results are always
filtered again to the allowed hosts (`activities.search.keep_allowed`, which the search activity
applies to every provider's results as well).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from activities import spans
from activities.model.provider_errors import (
    Provider,
    malformed_failure,
    network_failure,
    status_failure,
)
from activities.search import CONTROL_CHARACTERS, keep_allowed
from runtime.options import SERPER_URL
from workflows.models import SearchHit

MIN_RESULTS_ASKED = 10  # filtering drops some results: ask for a page, not just `limit`
MAX_RESPONSE_BYTES = 2_000_000  # a search answer larger than this is not a search answer
MAX_TITLE_CHARS = 300
MAX_SNIPPET_CHARS = 1_000

SERPER = Provider(
    label="search provider serper", credentials="SERPER_API_KEY", endpoint="SERPER_URL"
)
SEARXNG = Provider(
    label="search provider searxng",
    credentials="SEARXNG_URL, and that the instance enables the json format (search.formats)",
    endpoint="SEARXNG_URL",
)


class SerperSearch:
    """POST {"q", "num"} to Serper with the `X-API-KEY` header; read its `organic` results."""

    name = "serper"

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        api_key: str,
        url: str = SERPER_URL,
        secrets: tuple[str, ...] = (),  # the worker's others, kept out of its errors too
    ) -> None:
        self._http = http
        self._api_key = api_key
        self._url = url
        self._provider = SERPER.with_secrets(api_key, *secrets)

    async def search(self, query: str, allowed_hosts: list[str], limit: int) -> list[SearchHit]:
        if limit <= 0 or not allowed_hosts:
            return []
        request = self._http.build_request(
            "POST",
            self._url,
            json={"q": scoped_query(query, allowed_hosts), "num": max(limit, MIN_RESULTS_ASKED)},
            headers={"X-API-KEY": self._api_key},
        )
        rows = _rows(await _json(self._http, request, self._provider), "organic", self._provider)
        hits = (_hit(row, "link", "title", "snippet") for row in rows)
        return keep_allowed(hits, allowed_hosts, limit)


class SearxngSearch:
    """GET {SEARXNG_URL}/search?q=...&format=json; read its `results`."""

    name = "searxng"

    def __init__(self, http: httpx.AsyncClient, *, url: str, secrets: tuple[str, ...] = ()) -> None:
        self._http = http
        self._provider = SEARXNG.with_secrets(*secrets)
        base = url.rstrip("/")
        self._url = base if base.endswith("/search") else f"{base}/search"

    async def search(self, query: str, allowed_hosts: list[str], limit: int) -> list[SearchHit]:
        if limit <= 0 or not allowed_hosts:
            return []
        params = {"q": scoped_query(query, allowed_hosts), "format": "json"}
        request = self._http.build_request("GET", self._url, params=params)
        rows = _rows(await _json(self._http, request, self._provider), "results", self._provider)
        hits = (_hit(row, "url", "title", "content") for row in rows)
        return keep_allowed(hits, allowed_hosts, limit)


def scoped_query(query: str, allowed_hosts: list[str]) -> str:
    """`query (site:a OR site:b)`; one host needs no parentheses."""
    sites = list(dict.fromkeys(f"site:{rule.removeprefix('*.')}" for rule in allowed_hosts))
    if not sites:
        return query
    scope = sites[0] if len(sites) == 1 else f"({' OR '.join(sites)})"
    return f"{query.strip()} {scope}"


async def _json(http: httpx.AsyncClient, request: httpx.Request, provider: Provider) -> Any:
    # The span shows no query string: it carries the model's query (content, not telemetry).
    with spans.http_request(
        request.method, str(request.url), purpose="search", keep_query=False
    ) as span:
        try:
            response = await http.send(request, stream=True)
            try:
                body = await _capped_body(response, provider)
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise network_failure(provider, timed_out=True) from None
        except httpx.RequestError:
            raise network_failure(provider, timed_out=False) from None
        spans.http_response(span, response.status_code, len(body))
    if not response.is_success:
        detail = body.decode(response.encoding or "utf-8", errors="replace")
        raise status_failure(provider, response.status_code, response.headers, detail)
    try:
        return json.loads(body)
    except ValueError:
        raise malformed_failure(provider, "a body that is not JSON") from None


async def _capped_body(response: httpx.Response, provider: Provider) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > MAX_RESPONSE_BYTES:
            raise malformed_failure(provider, f"more than {MAX_RESPONSE_BYTES} bytes")
    return bytes(body)


def _rows(payload: Any, key: str, provider: Provider) -> list[dict[str, Any]]:
    """The result objects under `key`; a missing list is no results, a wrong shape an error."""
    if not isinstance(payload, dict):
        raise malformed_failure(provider, "JSON that is not an object")
    rows = payload.get(key, [])
    if not isinstance(rows, list):
        raise malformed_failure(provider, f"a `{key}` field that is not a list")
    return [row for row in rows if isinstance(row, dict)]


def _hit(row: dict[str, Any], url: str, title: str, snippet: str) -> SearchHit | None:
    """A hit from the provider's field names; None when the row has no URL."""
    if not isinstance(row.get(url), str):
        return None
    return SearchHit(
        url=row[url],
        title=_text(row.get(title), MAX_TITLE_CHARS),
        snippet=_text(row.get(snippet), MAX_SNIPPET_CHARS),
    )


def _text(value: Any, limit: int) -> str:
    """Web text as one clean line: control characters (NUL included) become spaces, then capped."""
    if not isinstance(value, str):
        return ""
    return " ".join(CONTROL_CHARACTERS.sub(" ", value).split())[:limit]
