"""The small config objects the activities are built with: each takes only what it needs.

`Settings` builds them (`settings.fetch_options()`, `settings.chat_options()`, ...); an activity
or client never sees the whole `Settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # an annotation only: the CLI's --version and --help import no pydantic
    from workflows.verification import VerifierMode

# Deterministic policies that run in the worker: no client, no key, usage estimated.
LOCAL_PROVIDERS: frozenset[str] = frozenset({"offline", "fixed"})
SERPER_URL = "https://google.serper.dev/search"
VerifierProvider = Literal["off", "deterministic", "openai", "azure"]


@dataclass(frozen=True)
class FetchLimits:
    """What one page read may take and keep."""

    max_bytes: int = 5_000_000  # on the wire
    max_decoded_bytes: int = 20_000_000  # a compressed page may expand to at most this
    timeout_seconds: float = 20.0
    max_snapshot_chars: int = 200_000  # of extracted text
    extract_cpu_seconds: float = 2.0  # CPU time turning one fetched page into text may take


@dataclass(frozen=True)
class FetchOptions:
    """How the fetch client is built: the local corpus, the hosts served inside, its limits."""

    corpus_dir: Path
    local_hosts: tuple[str, ...] = ()  # `host` or `host=IP`: plain http, any port, inside
    limits: FetchLimits = field(default_factory=FetchLimits)


@dataclass(frozen=True)
class ResearchOptions:
    """What the tool activities need besides their clients."""

    fetch: FetchLimits = field(default_factory=FetchLimits)
    search_attributes: bool = True  # ResearchStatus / ResearchStopReason / ResearchVerified
    local_model: bool = False  # decide is a local policy (runs as a local activity)
    model_timeout_seconds: float = 120.0  # what one decide may take (the workflow's timeout)
    verifier_mode: VerifierMode = "deterministic"  # how the worker checks meaning
    verifier_name: str = "deterministic"  # how the report names the verifier
    # The worker has a model (not a local policy): a brief's lane may be the fixed lane.
    lanes: bool = False
    default_lane: str = "auto"  # a brief's that names none (RESEARCH_LANE)
    continue_after_steps: int = 100  # steps an execution takes, then continues as new


@dataclass(frozen=True)
class ChatOptions:
    """How `decide` asks the model, and the worker's secrets its answers must never carry."""

    provider: str = "offline"
    model: str = "gpt-4o-mini"  # the agent lane's (RESEARCH_MODEL)
    fixed_model: str = ""  # the fixed lane's composing call (RESEARCH_FIXED_MODEL; "": `model`)
    temperature: float | None = 0.0  # None: not sent
    max_output_tokens: int = 1_024
    parallel_tool_calls: bool = False
    timeout_seconds: float = 120.0  # one whole model call, the body's last byte included
    # A local policy waits this long before each answer (`research demo --pace`): a run slow
    # enough to watch and steer.
    pace_seconds: float = 0.0
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)  # by variable name

    @property
    def local(self) -> bool:
        return self.provider in LOCAL_PROVIDERS


@dataclass(frozen=True)
class SearchOptions:
    """The search provider and how to reach it."""

    provider: str = "corpus"
    serper_api_key: str | None = field(default=None, repr=False)
    serper_url: str = SERPER_URL
    searxng_url: str | None = None
    timeout_seconds: float = 15.0


@dataclass(frozen=True)
class VerifierSettings:
    """The independent check of meaning: a model of its own (by default the research model's
    provider, model, endpoint and key), `off`, or `deterministic` (the offline policy)."""

    provider: VerifierProvider = "deterministic"
    model: str = "gpt-4o-mini"
    # OpenAI-compatible base URL, or the Azure /openai/v1/ endpoint; may carry a key (secrets())
    base_url: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)  # None with Azure: Microsoft Entra ID
    concurrency: int = 8  # claims asked at once (RESEARCH_VERIFIER_CONCURRENCY)

    @property
    def asks_a_model(self) -> bool:
        return self.provider in ("openai", "azure")

    @property
    def mode(self) -> VerifierMode:
        """How this worker checks meaning: a model, `off`, or the deterministic checks."""
        if self.asks_a_model:
            return "model"
        return "off" if self.provider == "off" else "deterministic"

    @property
    def name(self) -> str:
        """How the report names it: `openai gpt-4o-mini`, or the mode."""
        return f"{self.provider} {self.model}" if self.asks_a_model else self.provider
