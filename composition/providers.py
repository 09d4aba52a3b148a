"""Provider clients built from settings, once per worker: the model client and the search provider.

A missing secret or URL is found here, where a client is built, and not in `Settings.from_env`: the
CLI commands that call no model and search nothing run without them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace

import httpx
from azure.core.credentials_async import AsyncTokenCredential
from azure.identity.aio import DefaultAzureCredential, get_bearer_token_provider
from openai import AsyncOpenAI, Omit

from activities.ledger import Ledger
from activities.model import ModelClient
from activities.search import CorpusSearch, SearchProvider
from activities.search.web import SearxngSearch, SerperSearch
from runtime.options import LOCAL_PROVIDERS, SearchOptions
from runtime.settings import Settings, SettingsError

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


def check_model_settings(settings: Settings) -> None:
    """Raise SettingsError, one sentence saying what to set, when the model provider lacks it."""
    provider = settings.model_provider
    if provider == "openai" and not (settings.openai_api_key or settings.openai_base_url):
        raise SettingsError(
            "RESEARCH_MODEL_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a "
            "local OpenAI-compatible server); set it in the environment"
        )
    if provider == "azure" and not settings.azure_openai_endpoint:
        raise SettingsError(
            "RESEARCH_MODEL_PROVIDER=azure needs AZURE_OPENAI_ENDPOINT "
            "(https://NAME.openai.azure.com); set it in the environment"
        )


def check_verifier_settings(settings: Settings) -> None:
    """Raise SettingsError, one sentence saying what to set, when the verifier lacks it."""
    verifier = settings.verifier
    if verifier.provider == "openai" and not (verifier.api_key or verifier.base_url):
        raise SettingsError(
            "the verifier (RESEARCH_VERIFIER_PROVIDER=openai) needs RESEARCH_VERIFIER_API_KEY or "
            "RESEARCH_VERIFIER_BASE_URL (or the model's OPENAI_API_KEY / OPENAI_BASE_URL); set "
            "one, or RESEARCH_VERIFIER_PROVIDER=off"
        )
    if verifier.provider == "azure" and not verifier.base_url:
        raise SettingsError(
            "the verifier (RESEARCH_VERIFIER_PROVIDER=azure) needs RESEARCH_VERIFIER_BASE_URL "
            "(https://NAME.openai.azure.com) or AZURE_OPENAI_ENDPOINT; set one, or "
            "RESEARCH_VERIFIER_PROVIDER=off"
        )


def verifier_as_model(settings: Settings) -> Settings:
    """The settings with the verifier's provider, model, endpoint and key as the model's: the
    verifier's client is built as the model's is."""
    verifier = settings.verifier
    assert verifier.provider in ("openai", "azure")
    return replace(
        settings,
        model_provider=verifier.provider,
        model=verifier.model,
        openai_base_url=verifier.base_url if verifier.provider == "openai" else None,
        openai_api_key=verifier.api_key if verifier.provider == "openai" else None,
        azure_openai_endpoint=verifier.base_url if verifier.provider == "azure" else None,
        azure_openai_api_key=verifier.api_key if verifier.provider == "azure" else None,
    )


@asynccontextmanager
async def open_verifier_client(
    settings: Settings, *, credential: AsyncTokenCredential | None = None
) -> AsyncIterator[ModelClient | None]:
    """The verifier's client (None when no model verifies), closed on the way out."""
    check_verifier_settings(settings)
    if not settings.verifier.asks_a_model:
        yield None
        return
    async with open_model_client(verifier_as_model(settings), credential=credential) as client:
        yield client


def check_search_settings(settings: Settings) -> None:
    """Raise SettingsError, one sentence saying what to set, when the search provider lacks it."""
    if settings.search_provider == "serper" and not settings.serper_api_key:
        raise SettingsError(
            "RESEARCH_SEARCH_PROVIDER=serper needs SERPER_API_KEY (a key from serper.dev); "
            "set it in the environment"
        )
    if settings.search_provider == "searxng" and not settings.searxng_url:
        raise SettingsError(
            "RESEARCH_SEARCH_PROVIDER=searxng needs SEARXNG_URL (the address of a SearXNG "
            "instance with the json format enabled); set it in the environment"
        )


@asynccontextmanager
async def open_model_client(
    settings: Settings, *, credential: AsyncTokenCredential | None = None
) -> AsyncIterator[ModelClient | None]:
    """The model client of the configured provider (None offline), closed on the way out.

    `credential` replaces DefaultAzureCredential for Azure without a key (tests inject one).
    """
    check_model_settings(settings)
    if settings.model_provider in LOCAL_PROVIDERS:
        yield None
        return
    async with AsyncExitStack() as resources:
        if settings.model_provider == "azure":
            if credential is None and not settings.azure_openai_api_key:
                credential = DefaultAzureCredential()
                resources.push_async_callback(credential.close)
            client = azure_client(settings, credential)
        else:
            client = openai_client(settings)
        resources.push_async_callback(client.openai.close)
        yield client


def openai_client(settings: Settings) -> ModelClient:
    """OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio) at OPENAI_BASE_URL."""
    return ModelClient(
        AsyncOpenAI(
            api_key=settings.openai_api_key or "unused",  # local servers need none
            base_url=settings.openai_base_url,
            max_retries=0,  # Temporal's retry policy owns retries (and honours Retry-After)
            timeout=settings.model_timeout_seconds,
        )
    )


def azure_client(settings: Settings, credential: AsyncTokenCredential | None) -> ModelClient:
    """Azure OpenAI / Foundry through its OpenAI-compatible `/openai/v1/` API.

    With AZURE_OPENAI_API_KEY the key is sent as Azure's `api-key` header (and no Authorization
    header); without it, each request carries a Microsoft Entra ID bearer token from `credential`.
    """
    assert settings.azure_openai_endpoint is not None
    key = settings.azure_openai_api_key
    if key:
        client = AsyncOpenAI(
            api_key="sent-as-api-key",  # the openai client insists on one; never sent
            default_headers={"api-key": key},
            base_url=settings.azure_openai_endpoint,
            max_retries=0,
            timeout=settings.model_timeout_seconds,
        )
        return ModelClient(client, headers={"Authorization": Omit()})
    assert credential is not None
    client = AsyncOpenAI(
        api_key=get_bearer_token_provider(credential, AZURE_SCOPE),  # awaited per request
        base_url=settings.azure_openai_endpoint,
        max_retries=0,
        timeout=settings.model_timeout_seconds,
    )
    return ModelClient(client)


@asynccontextmanager
async def open_search(settings: Settings, ledger: Ledger) -> AsyncIterator[SearchProvider]:
    """The configured search provider; a web provider gets its own HTTP client, closed after."""
    check_search_settings(settings)
    options = settings.search_options()
    if options.provider == "corpus":
        yield CorpusSearch(ledger)
        return
    secrets = tuple(settings.secrets().values())
    async with search_http_client(options) as http:
        if options.provider == "serper":
            assert options.serper_api_key is not None
            yield SerperSearch(
                http, api_key=options.serper_api_key, url=options.serper_url, secrets=secrets
            )
        else:
            assert options.searxng_url is not None
            yield SearxngSearch(http, url=options.searxng_url, secrets=secrets)


def search_http_client(options: SearchOptions) -> httpx.AsyncClient:
    # trust_env=False: no proxy or netrc credentials from the environment reach the provider.
    return httpx.AsyncClient(
        trust_env=False,
        follow_redirects=False,
        timeout=httpx.Timeout(options.timeout_seconds),
    )
