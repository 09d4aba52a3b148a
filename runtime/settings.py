"""Process configuration: one frozen Settings read from the environment (see .env.example)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ModelProvider = Literal["offline", "openai"]
SearchProvider = Literal["corpus"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class SettingsError(ValueError):
    """A configuration value is missing or malformed; the message says how to fix it."""


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, got {raw!r}") from None


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    state_dir: Path = PROJECT_ROOT / ".research"
    database_url: str | None = None  # None: the embedded PostgreSQL under state_dir
    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_api_key: str | None = field(default=None, repr=False)
    task_queue: str = "research"
    ui_port: int = 8233
    search_attributes: bool = True  # ResearchStatus / ResearchStopReason registered
    model_provider: ModelProvider = "offline"
    model: str = "gpt-4o-mini"
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    temperature: float = 0.0
    max_output_tokens: int = 1_024
    search_provider: SearchProvider = "corpus"
    corpus_dir: Path = PROJECT_ROOT / "examples" / "corpus"
    max_snapshot_chars: int = 200_000
    max_fetch_bytes: int = 5_000_000
    fetch_timeout_seconds: float = 20.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        provider = env.get("RESEARCH_MODEL_PROVIDER", "").strip().lower()
        if not provider:
            provider = (
                "openai" if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") else "offline"
            )
        if provider not in ("offline", "openai"):
            raise SettingsError(
                f"RESEARCH_MODEL_PROVIDER must be offline or openai, got {provider!r}"
            )
        search = env.get("RESEARCH_SEARCH_PROVIDER", "corpus").strip().lower()
        if search != "corpus":
            raise SettingsError(f"RESEARCH_SEARCH_PROVIDER must be corpus, got {search!r}")
        api_key = env.get("OPENAI_API_KEY") or None
        base_url = env.get("OPENAI_BASE_URL") or None
        if provider == "openai" and not (api_key or base_url):
            raise SettingsError(
                "RESEARCH_MODEL_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a "
                "local OpenAI-compatible server); set it in the environment"
            )
        state_dir = Path(env.get("RESEARCH_STATE_DIR") or PROJECT_ROOT / ".research")
        return cls(
            state_dir=state_dir.resolve(),
            database_url=env.get("DATABASE_URL") or None,
            temporal_address=env.get("TEMPORAL_ADDRESS") or "localhost:7233",
            temporal_namespace=env.get("TEMPORAL_NAMESPACE") or "default",
            temporal_api_key=env.get("TEMPORAL_API_KEY") or None,
            task_queue=env.get("RESEARCH_TASK_QUEUE") or "research",
            ui_port=_int(env, "RESEARCH_UI_PORT", 8233),
            search_attributes=env.get("RESEARCH_SEARCH_ATTRIBUTES", "1").strip() != "0",
            model_provider="openai" if provider == "openai" else "offline",
            model=env.get("RESEARCH_MODEL") or "gpt-4o-mini",
            openai_api_key=api_key,
            openai_base_url=base_url,
            temperature=_float(env, "RESEARCH_TEMPERATURE", 0.0),
            max_output_tokens=_int(env, "RESEARCH_MAX_OUTPUT_TOKENS", 1_024),
            search_provider="corpus",
            corpus_dir=Path(env.get("RESEARCH_CORPUS_DIR") or cls.corpus_dir).resolve(),
            max_snapshot_chars=_int(env, "RESEARCH_MAX_SNAPSHOT_CHARS", 200_000),
            max_fetch_bytes=_int(env, "RESEARCH_MAX_FETCH_BYTES", 5_000_000),
            fetch_timeout_seconds=_float(env, "RESEARCH_FETCH_TIMEOUT_SECONDS", 20.0),
        )
