"""Serper and SearXNG providers, built from settings by `composition.providers`, against real local
servers of their shape: what is sent (site: scoping, key header), what comes back (allowed hosts
only, once each, in the provider's order, capped), and how refusals become typed errors."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta

import httpx
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.research import ResearchActivities
from activities.search import CorpusSearch, SearchProvider
from composition.providers import open_search
from runtime.database import open_pool
from runtime.settings import Settings
from tests.conftest import free_port
from tests.fakes.search_servers import Answer, FakeSearch, Shape, serve
from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE
from workflows.models import Brief
from workflows.scope import RunScope
from workflows.tools.search_web import SearchInput

DOCS = "docs.example.com"
KEY = "serper-secret-key"


def environ(shape: Shape, root: str, **extra: str) -> dict[str, str]:
    if shape == "serper":
        return {
            "RESEARCH_SEARCH_PROVIDER": "serper",
            "SERPER_API_KEY": KEY,
            "SERPER_URL": f"{root}/search",
            **extra,
        }
    return {"RESEARCH_SEARCH_PROVIDER": "searxng", "SEARXNG_URL": root, **extra}


@asynccontextmanager
async def provider(
    shape: Shape, fake: FakeSearch, ledger: Ledger | None = None, **extra: str
) -> AsyncIterator[SearchProvider]:
    """The provider `open_search` builds from settings pointing at the fake server."""
    with serve(fake) as root:
        settings = Settings.from_env(environ(shape, root, **extra))
        async with open_search(settings, ledger) as search:  # type: ignore[arg-type]
            yield search


async def _search(
    shape: Shape, fake: FakeSearch, allowed: list[str], limit: int = 8, query: str = "dlq"
) -> list[tuple[str, str, str]]:
    async with provider(shape, fake) as search:
        hits = await search.search(query, allowed, limit)
    return [(hit.url, hit.title, hit.snippet) for hit in hits]


async def _refusal(shape: Shape, answer: Answer) -> ApplicationError:
    fake = FakeSearch(shape)
    fake.answer = answer
    with pytest.raises(ApplicationError) as raised:
        await _search(shape, fake, [DOCS])
    return raised.value


SHAPES: list[Shape] = ["serper", "searxng"]


async def test_serper_posts_the_scoped_query_with_the_key_header() -> None:
    fake = FakeSearch("serper", [(f"https://{DOCS}/dlq", "DLQ", "dead letters")])
    hits = await _search("serper", fake, [DOCS, "example.org"], limit=3)
    assert hits == [(f"https://{DOCS}/dlq", "DLQ", "dead letters")]
    (sent,) = fake.requests
    assert (sent.method, sent.path) == ("POST", "/search")
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["content-type"] == "application/json"
    assert httpx.Response(200, content=sent.body).json() == {
        "q": f"dlq (site:{DOCS} OR site:example.org)",
        "num": 10,
    }


async def test_searxng_gets_the_scoped_query_as_json() -> None:
    fake = FakeSearch("searxng", [(f"https://{DOCS}/dlq", "DLQ", "dead letters")])
    hits = await _search("searxng", fake, [DOCS])
    assert hits == [(f"https://{DOCS}/dlq", "DLQ", "dead letters")]
    (sent,) = fake.requests
    assert (sent.method, sent.path) == ("GET", "/search")
    assert sent.query == {"q": f"dlq site:{DOCS}", "format": "json"}


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_wildcard_rule_is_scoped_to_its_domain_once(shape: Shape) -> None:
    fake = FakeSearch(shape)
    await _search(shape, fake, ["*.example.com", "example.com"])
    sent = fake.requests[0]
    body = httpx.Response(200, content=sent.body or b"{}").json()
    assert sent.query.get("q", body.get("q")) == "dlq site:example.com"


@pytest.mark.parametrize("shape", SHAPES)
async def test_results_off_the_allowlist_are_dropped_whatever_the_provider_returns(
    shape: Shape,
) -> None:
    fake = FakeSearch(
        shape,
        [
            ("https://evil.example.net/dlq", "evil", ""),
            ("https://api.example.com/a", "subdomain", ""),
            ("https://example.com.evil.net/b", "suffix trick", ""),
            ("https://example.com/c", "apex, not a subdomain", ""),
            ("ftp://api.example.com/d", "not http", ""),
            ("https://user@api.example.com/e", "userinfo", ""),
            ("https://api.example.com/f", "kept", ""),
        ],
    )
    hits = await _search(shape, fake, ["*.example.com"])
    assert [title for _, title, _ in hits] == ["subdomain", "kept"]


@pytest.mark.parametrize("shape", SHAPES)
async def test_duplicates_collapse_in_the_providers_order_up_to_the_limit(shape: Shape) -> None:
    fake = FakeSearch(
        shape,
        [
            (f"https://{DOCS}/b", "B", ""),
            ("HTTPS://Docs.Example.com:443/a#part", "A", ""),
            (f"https://{DOCS}/a", "A again", ""),
            (f"https://{DOCS}", "root", ""),
            (f"https://{DOCS}/", "root again", ""),
            (f"https://{DOCS}/a/", "A with a slash", ""),
            (f"https://{DOCS}/c", "over the limit", ""),
        ],
    )
    hits = await _search(shape, fake, [DOCS], limit=4)
    assert [(url, title) for url, title, _ in hits] == [
        (f"https://{DOCS}/b", "B"),
        (f"https://{DOCS}/a", "A"),
        (f"https://{DOCS}/", "root"),
        (f"https://{DOCS}/a/", "A with a slash"),
    ]


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_rejected_key_is_final_and_never_echoed(shape: Shape) -> None:
    refused = await _refusal(shape, Answer(401, body=f'{{"message": "bad key {KEY}"}}'.encode()))
    assert refused.type == PROVIDER_ERROR and refused.non_retryable
    assert f"search provider {shape} answered HTTP 401" in refused.message
    assert KEY not in refused.message
    hint = "SERPER_API_KEY" if shape == "serper" else "json format"
    assert hint in refused.message


@pytest.mark.parametrize("shape", SHAPES)
async def test_control_characters_never_reach_the_ledger_and_text_is_capped(shape: Shape) -> None:
    fake = FakeSearch(
        shape,
        [
            (f"https://{DOCS}/a", "Dead\x00 letters\n\tqueue", "x" * 5_000),
            (f"https://{DOCS}/b\x00c", "NUL in the URL", "dropped"),
        ],
    )
    hits = await _search(shape, fake, [DOCS])
    assert hits == [(f"https://{DOCS}/a", "Dead letters queue", "x" * 1_000)]


@pytest.mark.parametrize("shape", SHAPES)
async def test_an_oversized_answer_is_a_clear_final_error(shape: Shape) -> None:
    refused = await _refusal(shape, Answer(body=b'{"results": "' + b"x" * 3_000_000 + b'"}'))
    assert refused.type == PROVIDER_ERROR and refused.non_retryable
    assert "answered with more than 2000000 bytes" in refused.message


async def test_a_key_echoed_in_an_error_page_is_blanked_out() -> None:
    echoed = Answer(status=400, body=f"bad request (X-API-KEY: {KEY})".encode())
    refused = await _refusal("serper", echoed)
    assert KEY not in refused.message and "X-API-KEY: [redacted]" in refused.message


async def test_searxng_without_the_json_format_says_how_to_enable_it() -> None:
    refused = await _refusal("searxng", Answer(403, body=b"Forbidden"))
    assert refused.non_retryable and "enables the json format (search.formats)" in refused.message


@pytest.mark.parametrize("shape", SHAPES)
async def test_rate_limits_are_retried_after_the_providers_delay(shape: Shape) -> None:
    limited = await _refusal(shape, Answer(429, headers={"Retry-After": "3"}))
    assert limited.type == PROVIDER_RETRYABLE and not limited.non_retryable
    assert limited.next_retry_delay == timedelta(seconds=3)


@pytest.mark.parametrize("shape", SHAPES)
async def test_server_errors_are_retried(shape: Shape) -> None:
    failed = await _refusal(shape, Answer(500, body=b"<html>oops</html>"))
    assert failed.type == PROVIDER_RETRYABLE and not failed.non_retryable
    assert "HTTP 500" in failed.message and failed.next_retry_delay is None


async def test_a_missing_page_is_final_and_names_the_url_setting() -> None:
    refused = await _refusal("serper", Answer(404, body=b"no such page"))
    assert refused.non_retryable and "not found (check SERPER_URL)" in refused.message


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>a login page</html>", "a body that is not JSON"),
        (b"[1, 2]", "JSON that is not an object"),
        (b'{"organic": "x", "results": "x"}', "field that is not a list"),
    ],
)
async def test_a_malformed_body_is_a_clear_final_error(
    shape: Shape, body: bytes, problem: str
) -> None:
    refused = await _refusal(shape, Answer(200, headers={"content-type": "text/html"}, body=body))
    assert refused.type == PROVIDER_ERROR and refused.non_retryable
    url_setting = "SERPER_URL" if shape == "serper" else "SEARXNG_URL"
    assert problem in refused.message and f"(check {url_setting})" in refused.message


@pytest.mark.parametrize("shape", SHAPES)
async def test_an_unreachable_provider_is_retried(shape: Shape) -> None:
    root = f"http://127.0.0.1:{free_port()}"
    settings = Settings.from_env(environ(shape, root))
    with pytest.raises(ApplicationError) as failed:
        async with open_search(settings, None) as search:  # type: ignore[arg-type]
            await search.search("dlq", [DOCS], 8)
    assert failed.value.type == PROVIDER_RETRYABLE
    assert "could not be reached" in failed.value.message


@contextmanager
def _silent_provider() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


async def test_a_provider_that_does_not_answer_in_time_is_retried() -> None:
    with _silent_provider() as root:
        settings = Settings.from_env(
            environ("searxng", root, RESEARCH_SEARCH_TIMEOUT_SECONDS="0.3")
        )
        with pytest.raises(ApplicationError) as failed:
            async with open_search(settings, None) as search:  # type: ignore[arg-type]
                await search.search("dlq", [DOCS], 8)
    assert failed.value.type == PROVIDER_RETRYABLE
    assert "did not answer in time" in failed.value.message


async def test_the_corpus_stays_the_default(embedded_pg_url: str) -> None:
    pool = await open_pool(embedded_pg_url)
    try:
        async with open_search(Settings.from_env({}), Ledger(pool)) as search:
            assert isinstance(search, CorpusSearch) and search.name == "corpus"
    finally:
        await pool.close()


async def test_the_search_activity_records_the_web_providers_hits(embedded_pg_url: str) -> None:
    fake = FakeSearch(
        "serper",
        [(f"https://{DOCS}/dlq", "DLQ", "dead letters"), ("https://evil.example.net/", "x", "")],
    )
    pool = await open_pool(embedded_pg_url)
    run_id = f"web-{uuid.uuid4().hex[:8]}"
    try:
        ledger = Ledger(pool)
        await ledger.start_run(
            run_id, Brief(question="Q?", allowed_hosts=[DOCS]), "2026-01-01T00:00:00+00:00"
        )
        async with provider("serper", fake, ledger) as search, httpx.AsyncClient() as http:
            settings = Settings.from_env({})
            activities = ResearchActivities(ledger, http, settings.research_options(), search)
            request = SearchInput(
                scope=RunScope.tool_of(run_id, "", 1, 0, ""), query="dlq", allowed_hosts=[DOCS]
            )
            first = await ActivityEnvironment().run(activities.search_web, request)
            again = await ActivityEnvironment().run(activities.search_web, request)
    finally:
        await pool.close()
    assert first.provider == "serper" and [hit.url for hit in first.hits] == [f"https://{DOCS}/dlq"]
    assert first.hits[0].host == DOCS
    assert again == first and len(fake.requests) == 1, "a retried search is read from the ledger"
