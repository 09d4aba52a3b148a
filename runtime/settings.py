"""Process configuration: one frozen Settings read from the environment (see .env.example)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from runtime.connection import (
    API_KEY_VARIABLE,
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    temporal_connection,
)
from runtime.options import (
    LOCAL_PROVIDERS,
    SERPER_URL,
    ChatOptions,
    FetchLimits,
    FetchOptions,
    ResearchOptions,
    SearchOptions,
    VerifierProvider,
    VerifierSettings,
)
from workflows.hosts import local_host_entry

# workflows.models.STEPS_PER_EXECUTION, which a brief's history budget counts on (not imported:
# the CLI's --version and --help import no pydantic; tests/unit/test_settings.py compares them).
STEPS_PER_EXECUTION = 100

ModelProvider = Literal["offline", "fixed", "openai", "azure"]
# "deterministic": the offline policy's runs, whose deterministic checks are their verifier.
VERIFIER_CHOICES: tuple[VerifierProvider, ...] = ("off", "openai", "azure")
SearchProvider = Literal["corpus", "serper", "searxng"]
MODEL_PROVIDERS: tuple[ModelProvider, ...] = ("offline", "fixed", "openai", "azure")
SEARCH_PROVIDERS: tuple[SearchProvider, ...] = ("corpus", "serper", "searxng")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
WORKFLOW_PACKAGE = "workflows"  # the deterministic code a worker deployment version names
# Temporal splits a version's canonical name `<deployment>.<build id>` at the first dot.
_DEPLOYMENT = re.compile(r"[A-Za-z0-9_-]{1,100}")
_BUILD_ID = re.compile(r"[A-Za-z0-9_.+-]{1,100}")


@functools.cache
def code_build_id() -> str:
    """A build id derived from the workflow code (every source file of the `workflows` package):
    the same code gives the same id on every machine, a changed decision a new one."""
    spec = importlib.util.find_spec(WORKFLOW_PACKAGE)
    assert spec is not None and spec.submodule_search_locations, "no workflows package"
    return build_id_of(Path(next(iter(spec.submodule_search_locations))))


def build_id_of(root: Path) -> str:
    """`wf-` and 12 hex digits of a hash of the Python sources under `root`, names and bytes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return f"wf-{digest.hexdigest()[:12]}"


T = TypeVar("T", int, float)


class SettingsError(ValueError):
    """A configuration value is missing or malformed; the message says how to fix it."""


def _int(env: dict[str, str], name: str, default: int, *, zero: bool = False) -> int:
    """A whole number above 0, or from 0 up with `zero`."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, got {raw!r}") from None
    if zero and value < 0:
        raise SettingsError(f"{name} must be 0 or more, got {raw!r}")
    return value if zero else _positive(name, raw, value)


def _float(env: dict[str, str], name: str, default: float, *, zero: bool = False) -> float:
    """A finite number above 0 (sizes, seconds), or from 0 up with `zero`."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise SettingsError(f"{name} must be a number, got {raw!r}")
    if zero and value < 0:
        raise SettingsError(f"{name} must be 0 or more, got {raw!r}")
    return value if zero else _positive(name, raw, value)


def _positive(name: str, raw: str, value: T) -> T:
    if value <= 0:
        raise SettingsError(f"{name} must be greater than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    # A field declared `repr=False` holds a secret: never printed, and scrubbed (`secrets()`).
    state_dir: Path = PROJECT_ROOT / ".research"
    database_url: str | None = None  # None: the embedded PostgreSQL under state_dir
    database_entra: bool = False  # sign in to DATABASE_URL with a Microsoft Entra token
    # The worker's own sign-in (a role that may only insert, read and finish runs); None: the
    # worker uses DATABASE_URL, or on the embedded server signs in as worker_role.
    worker_database_url: str | None = field(default=None, repr=False)
    worker_role: str = "research_worker"  # created and granted by `research init-db`
    reader_role: str = "research_reader"
    temporal_address: str = DEFAULT_ADDRESS
    temporal_namespace: str = DEFAULT_NAMESPACE
    temporal_api_key: str | None = field(default=None, repr=False)
    task_queue: str = "research"
    # The worker deployment version this worker serves (Worker Versioning): runs stay pinned to
    # the version they started on.
    deployment_name: str = "research"
    build_id: str = field(default_factory=code_build_id)
    ui_port: int = 8233
    search_attributes: bool = True  # ResearchStatus / ResearchStopReason / ResearchVerified
    model_provider: ModelProvider = "offline"
    model: str = "gpt-4o-mini"
    fixed_model: str = "gpt-4o-mini"  # RESEARCH_FIXED_MODEL: the fixed lane's (default: model)
    lane: str = "auto"  # RESEARCH_LANE: the lane of a brief that names none (with a model)
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = field(default=None, repr=False)  # may carry a key
    # always ends in /openai/v1/; may carry a key, as the other provider URLs may
    azure_openai_endpoint: str | None = field(default=None, repr=False)
    azure_openai_api_key: str | None = field(default=None, repr=False)  # None: Microsoft Entra ID
    temperature: float | None = 0.0  # None: not sent (reasoning models accept only their default)
    max_output_tokens: int = 1_024
    parallel_tool_calls: bool = False
    # One model call, start to last byte; the workflow's decide timeout follows from it.
    model_timeout_seconds: float = 120.0
    verifier: VerifierSettings = field(default_factory=VerifierSettings)
    search_provider: SearchProvider = "corpus"
    serper_api_key: str | None = field(default=None, repr=False)
    serper_url: str = field(default=SERPER_URL, repr=False)
    searxng_url: str | None = field(default=None, repr=False)
    search_timeout_seconds: float = 15.0
    corpus_dir: Path = PROJECT_ROOT / "examples" / "corpus"
    max_snapshot_chars: int = 200_000
    max_fetch_bytes: int = 5_000_000
    fetch_timeout_seconds: float = 20.0
    max_decoded_bytes: int = 20_000_000  # a compressed page may expand to at most this
    extract_cpu_seconds: float = 2.0  # CPU time turning one fetched page into text may take
    local_hosts: tuple[str, ...] = ()  # `host` or `host=IP`: plain http, any port, inside addresses
    workflow_cache: int = 1_000  # workflows a worker keeps in memory (0: replay every task)
    # Steps one execution of a run takes before it continues as new (recorded by start_run).
    continue_after_steps: int = STEPS_PER_EXECUTION
    # How long a starting worker waits for Temporal, and then for PostgreSQL, to answer (0: not).
    startup_wait_seconds: float = 60.0
    # RESEARCH_DEBUG: a failed activity attempt is logged with its traceback (else one line).
    debug: bool = False
    policy_pace_seconds: float = 0.0  # `research demo --pace`: ChatOptions.pace_seconds
    # APPLICATIONINSIGHTS_CONNECTION_STRING (runtime.telemetry reads it): its InstrumentationKey
    # is scrubbed like a key.
    telemetry_connection_string: str | None = field(default=None, repr=False)

    def fetch_limits(self) -> FetchLimits:
        return FetchLimits(
            max_bytes=self.max_fetch_bytes,
            max_decoded_bytes=self.max_decoded_bytes,
            timeout_seconds=self.fetch_timeout_seconds,
            max_snapshot_chars=self.max_snapshot_chars,
            extract_cpu_seconds=self.extract_cpu_seconds,
        )

    def fetch_options(self) -> FetchOptions:
        return FetchOptions(self.corpus_dir, self.local_hosts, self.fetch_limits())

    def research_options(self) -> ResearchOptions:
        return ResearchOptions(
            fetch=self.fetch_limits(),
            search_attributes=self.search_attributes,
            # A paced policy (`research demo --pace`) waits: a regular activity, so the wait is
            # not inside a workflow task and the run answers queries and updates meanwhile.
            local_model=self.model_provider in LOCAL_PROVIDERS and not self.policy_pace_seconds,
            model_timeout_seconds=self.model_timeout_seconds,
            verifier_mode=self.verifier.mode,
            verifier_name=self.verifier.name,
            continue_after_steps=self.continue_after_steps,
            lanes=self.model_provider not in LOCAL_PROVIDERS,
            default_lane=self.lane,
        )

    def chat_options(self) -> ChatOptions:
        """How decide asks the model, with every secret of this process (for the scrubber)."""
        return ChatOptions(
            provider=self.model_provider,
            model=self.model,
            fixed_model=self.fixed_model,
            temperature=self.temperature,
            max_output_tokens=self.max_output_tokens,
            parallel_tool_calls=self.parallel_tool_calls,
            timeout_seconds=self.model_timeout_seconds,
            pace_seconds=self.policy_pace_seconds,
            secrets=self.secrets(),
        )

    def search_options(self) -> SearchOptions:
        return SearchOptions(
            provider=self.search_provider,
            serper_api_key=self.serper_api_key,
            serper_url=self.serper_url,
            searxng_url=self.searxng_url,
            timeout_seconds=self.search_timeout_seconds,
        )

    def secrets(self) -> dict[str, str]:
        """Every secret this process holds, by the variable it came from: each field declared
        `repr=False`, here or in a settings object of its own (a URL's password, not the URL),
        and DATABASE_URL's password. The scrubber (`activities.secrets`) removes them from
        whatever a model or provider hands back."""
        held = {"DATABASE_URL": _password_of(self.database_url)}
        held |= _secret_fields(self, "")
        urls = {name: getattr(self, attribute) for name, attribute in _PROVIDER_URLS.items()}
        urls["RESEARCH_VERIFIER_BASE_URL"] = self.verifier.base_url
        for name, url in urls.items():  # a key given in a URL (?token=, user:key@)
            for index, value in enumerate(url_credentials(url)):
                held[f"{name}#{index + 1}" if index else name] = value
        held["APPLICATIONINSIGHTS_CONNECTION_STRING"] = instrumentation_key(
            self.telemetry_connection_string
        )
        return {name: value for name, value in held.items() if value}

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        state_dir = Path(env.get("RESEARCH_STATE_DIR") or PROJECT_ROOT / ".research")
        model = _model_settings(env)
        temporal = temporal_connection(env)
        return cls(
            state_dir=state_dir.resolve(),
            database_url=env.get("DATABASE_URL") or None,
            database_entra=_database_entra(env),
            worker_database_url=env.get("RESEARCH_WORKER_DATABASE_URL") or None,
            worker_role=_role(env, "RESEARCH_WORKER_ROLE", "research_worker"),
            reader_role=_role(env, "RESEARCH_READER_ROLE", "research_reader"),
            temporal_address=temporal.address,
            temporal_namespace=temporal.namespace,
            temporal_api_key=temporal.api_key,
            task_queue=env.get("RESEARCH_TASK_QUEUE") or "research",
            deployment_name=_deployment_name(env),
            build_id=_build_id(env),
            ui_port=_int(env, "RESEARCH_UI_PORT", 8233),
            search_attributes=_bool(env, "RESEARCH_SEARCH_ATTRIBUTES", True),
            **model,
            verifier=_verifier_settings(env, model),
            **_search_settings(env),
            corpus_dir=Path(env.get("RESEARCH_CORPUS_DIR") or cls.corpus_dir).resolve(),
            max_snapshot_chars=_int(env, "RESEARCH_MAX_SNAPSHOT_CHARS", 200_000),
            max_fetch_bytes=_int(env, "RESEARCH_MAX_FETCH_BYTES", 5_000_000),
            fetch_timeout_seconds=_float(env, "RESEARCH_FETCH_TIMEOUT_SECONDS", 20.0),
            max_decoded_bytes=_int(env, "RESEARCH_MAX_DECODED_BYTES", 20_000_000),
            extract_cpu_seconds=_float(env, "RESEARCH_EXTRACT_CPU_SECONDS", 2.0),
            local_hosts=_local_hosts(env.get("RESEARCH_LOCAL_HOSTS", "")),
            workflow_cache=_int(env, "RESEARCH_WORKFLOW_CACHE", 1_000, zero=True),
            continue_after_steps=_continue_after_steps(env),
            startup_wait_seconds=_float(env, "RESEARCH_STARTUP_WAIT_SECONDS", 60.0, zero=True),
            debug=_bool(env, "RESEARCH_DEBUG", False),
            telemetry_connection_string=env.get("APPLICATIONINSIGHTS_CONNECTION_STRING") or None,
        )


# Variables a child process (the embedded Temporal dev server, PostgreSQL) never inherits: the
# configured secrets by name, and anything whose name says it holds one.
SECRET_VARIABLES = frozenset(
    {
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "RESEARCH_VERIFIER_API_KEY",
        "SERPER_API_KEY",
        API_KEY_VARIABLE,
        "APPLICATIONINSIGHTS_CONNECTION_STRING",
        "DATABASE_URL",
        "RESEARCH_WORKER_DATABASE_URL",
    }
)
_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|CONNECTION_STRING", re.I)


def is_secret_variable(name: str) -> bool:
    return name in SECRET_VARIABLES or _SECRET_NAME.search(name) is not None


def child_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: this one's, less every secret."""
    env = os.environ if environ is None else environ
    return {name: value for name, value in env.items() if not is_secret_variable(name)}


@contextmanager
def secrets_withheld() -> Iterator[None]:
    """Hide the secret variables from os.environ while a library starts a child process that
    inherits it (pgserver runs pg_ctl itself). Settings were read before; they are put back."""
    held = {name: value for name, value in os.environ.items() if is_secret_variable(name)}
    for name in held:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(held)


def _database_entra(env: dict[str, str]) -> bool:
    """RESEARCH_DATABASE_ENTRA=1: the password is a Microsoft Entra access token (Azure Database
    for PostgreSQL), fetched for each new connection; DATABASE_URL (and a worker's
    RESEARCH_WORKER_DATABASE_URL) names the user, no password."""
    if not _bool(env, "RESEARCH_DATABASE_ENTRA", False):
        return False
    urls = {name: env.get(name) or "" for name in ("DATABASE_URL", "RESEARCH_WORKER_DATABASE_URL")}
    if not any(urls.values()):
        raise SettingsError(
            "RESEARCH_DATABASE_ENTRA=1 needs DATABASE_URL, without a password: "
            "postgresql://IDENTITY@SERVER.postgres.database.azure.com/DATABASE?sslmode=require"
        )
    for name, url in urls.items():
        if url and _has_password(url):
            raise SettingsError(
                f"{name} holds a password and RESEARCH_DATABASE_ENTRA=1 asks for a Microsoft "
                f"Entra token instead: remove the password from {name} or unset the setting"
            )
    return True


_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _role(env: dict[str, str], name: str, default: str) -> str:
    """A PostgreSQL role name that needs no quoting (it is printed in SQL for an administrator)."""
    raw = env.get(name, "").strip() or default
    if not _ROLE.match(raw):
        raise SettingsError(
            f"{name} must be a role name of lower-case letters, digits and _ (at most 63, not "
            f"starting with a digit), got {raw!r}"
        )
    return raw


# A secret field's variable, where it is not the field's name in capitals.
_SECRET_SOURCES = {
    "worker_database_url": "RESEARCH_WORKER_DATABASE_URL",
    "telemetry_connection_string": "APPLICATIONINSIGHTS_CONNECTION_STRING",  # its key: secrets()
}
# Provider URLs that may carry a credential of their own, by the variable they come from.
_PROVIDER_URLS = {
    "SEARXNG_URL": "searxng_url",
    "SERPER_URL": "serper_url",
    "OPENAI_BASE_URL": "openai_base_url",
    "AZURE_OPENAI_ENDPOINT": "azure_openai_endpoint",
}


def url_credentials(url: str | None) -> list[str]:
    """What a URL carries that is a credential: its password (or a user name alone, as a token
    often is: `https://TOKEN@host/`), and every query value whose name says it holds one
    (`?token=`, `api_key=`, `auth=`, `secret=`, `key=`...)."""
    if not url:
        return []
    parts = urlsplit(url)
    found = [parts.password or parts.username or ""]
    found += [
        value
        for name, value in parse_qsl(parts.query, keep_blank_values=False)
        if _CREDENTIAL_PARAMETER.search(name)
    ]
    return [value for value in found if value]


_URL_FIELDS = frozenset(_PROVIDER_URLS.values())  # not printed; their credentials: secrets()
_CREDENTIAL_PARAMETER = re.compile(r"key|token|secret|auth|pass|sig|credential|code", re.I)


def instrumentation_key(connection_string: str | None) -> str:
    """The InstrumentationKey of an Application Insights connection string ("" when none); the
    endpoints beside it are public names, not secrets."""
    for part in (connection_string or "").split(";"):
        name, _, value = part.partition("=")
        if name.strip().casefold() == "instrumentationkey":
            return value.strip()
    return ""


def _secret_fields(settings: Any, prefix: str) -> dict[str, str]:
    """The `repr=False` fields of a settings dataclass and of the ones it holds (`verifier`:
    its key is RESEARCH_VERIFIER_API_KEY), by variable name."""
    held: dict[str, str] = {}
    for item in fields(settings):
        value = getattr(settings, item.name)
        if is_dataclass(value) and not isinstance(value, type):
            held |= _secret_fields(value, f"RESEARCH_{item.name.upper()}_")
        elif (
            not item.repr and isinstance(value, str) and item.name not in _URL_FIELDS | {"base_url"}
        ):
            name = _SECRET_SOURCES.get(item.name, item.name.upper())
            held[prefix + name] = _password_of(value) if "://" in value else value
    return held


def _password_of(url: str | None) -> str:
    """The password a database URL (or key=value string) holds, "" when none."""
    if not url:
        return ""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        return str(conninfo_to_dict(url).get("password") or "")
    except ProgrammingError:
        return ""


def _deployment_name(env: dict[str, str]) -> str:
    raw = env.get("RESEARCH_DEPLOYMENT_NAME", "").strip() or "research"
    if not _DEPLOYMENT.fullmatch(raw):
        raise SettingsError(
            "RESEARCH_DEPLOYMENT_NAME must be 1 to 100 letters, digits, - or _ (no dot), "
            f"got {raw!r}"
        )
    return raw


def _build_id(env: dict[str, str]) -> str:
    raw = env.get("RESEARCH_BUILD_ID", "").strip()
    if not raw:
        return code_build_id()
    if not _BUILD_ID.fullmatch(raw):
        raise SettingsError(
            f"RESEARCH_BUILD_ID must be 1 to 100 letters, digits, ., _, + or -, got {raw!r}"
        )
    return raw


def _has_password(url: str) -> bool:
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict  # libpq's parser: URLs and key=value strings

    try:
        return bool(conninfo_to_dict(url).get("password"))
    except ProgrammingError:  # malformed: it fails with libpq's own reason where it is used
        return False


def _local_hosts(raw: str) -> tuple[str, ...]:
    entries = tuple(entry.strip() for entry in raw.split(",") if entry.strip())
    try:
        for entry in entries:
            local_host_entry(entry)
    except ValueError as error:
        raise SettingsError(f"RESEARCH_LOCAL_HOSTS: {error}") from None
    return entries


# --- model and search providers. Only formats are checked here: whether the chosen provider has
# its key or URL is checked where its client is built (composition.providers), so that commands that
# call no model and search nothing (`research status`, `report`, ...) run without secrets.

Choice = TypeVar("Choice", bound=str)


def _continue_after_steps(env: dict[str, str]) -> int:
    name = "RESEARCH_CONTINUE_AS_NEW_STEPS"
    value = _int(env, name, STEPS_PER_EXECUTION)
    if value > STEPS_PER_EXECUTION:  # the brief's history budget counts on at most this many
        raise SettingsError(f"{name} must be at most {STEPS_PER_EXECUTION}, got {value}")
    return value


def _model_settings(env: dict[str, str]) -> dict[str, Any]:
    return {
        "model_provider": _model_provider(env),
        "model": env.get("RESEARCH_MODEL", "").strip() or "gpt-4o-mini",
        "fixed_model": env.get("RESEARCH_FIXED_MODEL", "").strip()
        or env.get("RESEARCH_MODEL", "").strip()
        or "gpt-4o-mini",
        "openai_api_key": _secret(env, "OPENAI_API_KEY"),
        "openai_base_url": _url(env, "OPENAI_BASE_URL"),
        "azure_openai_endpoint": _azure_endpoint(env.get("AZURE_OPENAI_ENDPOINT", "")),
        "azure_openai_api_key": _secret(env, "AZURE_OPENAI_API_KEY"),
        "temperature": _temperature(env),
        "max_output_tokens": _int(env, "RESEARCH_MAX_OUTPUT_TOKENS", 1_024),
        "parallel_tool_calls": _bool(env, "RESEARCH_PARALLEL_TOOL_CALLS", False),
        "lane": _choice(
            "RESEARCH_LANE", env.get("RESEARCH_LANE", "").strip().lower() or "auto", LANES
        ),
        "model_timeout_seconds": _float(env, "RESEARCH_MODEL_TIMEOUT_SECONDS", 120.0),
    }


def _verifier_settings(env: dict[str, str], model: dict[str, Any]) -> VerifierSettings:
    """RESEARCH_VERIFIER_*: each unset one is the research model's own setting. Unset with the
    offline policy, the deterministic checks are the verifier; `off` switches it off."""
    raw = env.get("RESEARCH_VERIFIER_PROVIDER", "").strip().lower()
    research = model["model_provider"]
    provider: VerifierProvider
    if raw:
        provider = _choice("RESEARCH_VERIFIER_PROVIDER", raw, VERIFIER_CHOICES)
    else:
        provider = "deterministic" if research in LOCAL_PROVIDERS else research
    same = provider == research
    if provider == "azure":
        base_url = _azure_endpoint(env.get("RESEARCH_VERIFIER_BASE_URL", "")) or (
            model["azure_openai_endpoint"] if same else None
        )
        key = _secret(env, "RESEARCH_VERIFIER_API_KEY") or (
            model["azure_openai_api_key"] if same else None
        )
    else:
        base_url = _url(env, "RESEARCH_VERIFIER_BASE_URL") or model["openai_base_url"]
        key = _secret(env, "RESEARCH_VERIFIER_API_KEY") or model["openai_api_key"]
    return VerifierSettings(
        provider=provider,
        model=env.get("RESEARCH_VERIFIER_MODEL", "").strip() or model["model"],
        base_url=base_url,
        api_key=key,
        concurrency=_int(env, "RESEARCH_VERIFIER_CONCURRENCY", 8),
    )


def _search_settings(env: dict[str, str]) -> dict[str, Any]:
    raw = env.get("RESEARCH_SEARCH_PROVIDER", "").strip().lower() or "corpus"
    return {
        "search_provider": _choice("RESEARCH_SEARCH_PROVIDER", raw, SEARCH_PROVIDERS),
        "serper_api_key": _secret(env, "SERPER_API_KEY"),
        "serper_url": _url(env, "SERPER_URL") or SERPER_URL,
        "searxng_url": _url(env, "SEARXNG_URL"),
        "search_timeout_seconds": _float(env, "RESEARCH_SEARCH_TIMEOUT_SECONDS", 15.0),
    }


def _model_provider(env: dict[str, str]) -> ModelProvider:
    raw = env.get("RESEARCH_MODEL_PROVIDER", "").strip().lower()
    if not raw:  # a key or a base URL is enough to mean an OpenAI-compatible endpoint
        return "openai" if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") else "offline"
    return _choice("RESEARCH_MODEL_PROVIDER", raw, MODEL_PROVIDERS)


LANES = ("auto", "fixed", "agent")


def _choice(name: str, raw: str, choices: tuple[Choice, ...]) -> Choice:
    for choice in choices:
        if raw == choice:
            return choice
    raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {raw!r}")


def _secret(env: dict[str, str], name: str) -> str | None:
    return env.get(name, "").strip() or None


def _bool(env: dict[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be 1 or 0 (true or false), got {raw!r}")


def _url(env: dict[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"{name} must be an http:// or https:// URL, got {raw!r}")
    return raw


def _azure_endpoint(raw: str) -> str | None:
    """The resource's `/openai/v1/` base URL, from the resource root or that URL itself."""
    raw = raw.strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    path = parts.path.rstrip("/")
    local = parts.hostname in ("localhost", "127.0.0.1", "::1")  # a test or a local proxy
    if (
        not parts.hostname
        or not (parts.scheme == "https" or (parts.scheme == "http" and local))
        or parts.username is not None
        or parts.query
        or parts.fragment
        or path not in ("", "/openai", "/openai/v1")
    ):
        raise SettingsError(
            "AZURE_OPENAI_ENDPOINT must be the https URL of the resource "
            f"(https://NAME.openai.azure.com) or of its /openai/v1 API, got {raw!r}"
        )
    return urlunsplit((parts.scheme, parts.netloc, "/openai/v1/", "", ""))


def _temperature(env: dict[str, str]) -> float | None:
    if env.get("RESEARCH_TEMPERATURE", "").strip().lower() == "default":
        return None
    return _float(env, "RESEARCH_TEMPERATURE", 0.0, zero=True)
