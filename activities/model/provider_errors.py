"""Provider failures as typed Temporal errors, shared by the model and the web-search activities.

408/409/429/5xx and network trouble may pass: they raise PROVIDER_RETRYABLE and Temporal's retry
policy tries again, after the provider's `retry-after-ms` / `Retry-After` when it sent one. Every
other refusal is final (PROVIDER_ERROR, non-retryable). A 401/403 never repeats the provider's
text: it can echo part of the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.secrets import MIN_SECRET_CHARS, REDACTED, Scrubber, spread_pattern
from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE
from workflows.cleaning import clean

RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_RETRY_DELAY_SECONDS = 120.0
MAX_DETAIL_CHARS = 300
MIN_SHORT_SECRET_CHARS = 4  # a shorter secret is not looked for at all
MAX_SCANNED_CHARS = 4_000  # of a provider's text, before redaction; the rest is never kept


@dataclass(frozen=True)
class Provider:
    """How errors name a provider and what they tell the user to check."""

    label: str  # "model provider openai", "search provider serper"
    credentials: str  # what to check when the provider refuses the credentials
    endpoint: str  # what to check when the provider answers 404
    # Every secret the worker holds: blanked out of any provider text an error repeats (a gateway
    # may echo the request's headers in its error page, a hostile one the key in disguise).
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def with_secrets(self, *secrets: str | None) -> Provider:
        return replace(self, secrets=tuple(secret for secret in secrets if secret))


def status_failure(
    provider: Provider, status: int, headers: Mapping[str, str], detail: str
) -> ApplicationError:
    """The error for an HTTP refusal: retryable with the provider's delay, or final."""
    prefix = f"{provider.label} answered HTTP {status}"
    if status in (401, 403):
        return _final(f"{prefix}: the credentials were rejected (check {provider.credentials})")
    text = excerpt(detail, provider.secrets)
    if status in RETRYABLE_STATUS or status >= 500:
        return _transient(f"{prefix}", text, retry_delay(headers))
    if status == 404:
        return _final(f"{prefix}: not found (check {provider.endpoint}): {text}")
    return _final(f"{prefix}: the request was refused: {text}")


def network_failure(
    provider: Provider, *, timed_out: bool, within: float | None = None
) -> ApplicationError:
    """The provider could not be reached or did not answer in time (`within` seconds, the
    model's RESEARCH_MODEL_TIMEOUT_SECONDS): worth another try."""
    what = "did not answer in time" if timed_out else "could not be reached"
    if timed_out and within is not None:
        what = f"did not answer within {within:g} s (RESEARCH_MODEL_TIMEOUT_SECONDS)"
    return _transient(f"{provider.label} {what}", "", None)


# A provider's transient failures get this many attempts of the activity (the workflow's policy
# retries faults of our own infrastructure until the deadline; a provider down is not one).
PROVIDER_ATTEMPTS = 5


def _transient(what: str, text: str, delay: timedelta | None) -> ApplicationError:
    """Retryable with the provider's delay, until the activity's PROVIDER_ATTEMPTS-th attempt;
    then final, naming the provider's last answer."""
    attempt = activity.info().attempt if activity.in_activity() else 1
    detail = f": {text}" if text else ""
    if attempt >= PROVIDER_ATTEMPTS:
        return ApplicationError(
            f"{what} on {attempt} attempts, giving up{detail}",
            type=PROVIDER_RETRYABLE,
            non_retryable=True,
        )
    return ApplicationError(
        f"{what}, will retry{detail}", type=PROVIDER_RETRYABLE, next_retry_delay=delay
    )


def malformed_failure(provider: Provider, problem: str) -> ApplicationError:
    """A 2xx answer that is not the provider's documented JSON: a wrong URL, not bad luck."""
    return _final(f"{provider.label} answered with {problem} (check {provider.endpoint})")


def credential_failure(label: str, fix: str) -> ApplicationError:
    """A credential (Microsoft Entra ID) could not produce a token: retrying will not log in."""
    return _final(f"{label} could not get a Microsoft Entra ID token ({fix})")


def retry_delay(headers: Mapping[str, str], now: datetime | None = None) -> timedelta | None:
    """`retry-after-ms`, else `Retry-After` (seconds or an HTTP date), capped; None when absent."""
    seconds = _number(headers.get("retry-after-ms"))
    if seconds is not None:
        seconds /= 1000
    else:
        seconds = _after(headers.get("retry-after"), now or datetime.now(UTC))
    if seconds is None:
        return None
    return timedelta(seconds=min(max(seconds, 0.0), MAX_RETRY_DELAY_SECONDS))


def _after(raw: str | None, now: datetime) -> float | None:
    seconds = _number(raw)
    if seconds is not None or raw is None:
        return seconds
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def excerpt(text: str, secrets: tuple[str, ...]) -> str:
    """A provider's text as it may be kept: one cleaned line of at most MAX_DETAIL_CHARS, with
    every form of every secret removed (`redacted`)."""
    line = " ".join(redacted(clean(text[:MAX_SCANNED_CHARS]), secrets).split())
    return line[:MAX_DETAIL_CHARS] or "no detail given"


def redacted(text: str, secrets: tuple[str, ...]) -> str:
    """`text` without any form of the secrets (`activities.secrets.Scrubber`). A secret too short
    for the scrubber is still never repeated whole in an error (a provider's text can lose a word
    that happens to be a short password)."""
    text = Scrubber(secrets).scrub(text)
    for secret in secrets:
        if MIN_SHORT_SECRET_CHARS <= len(secret) < MIN_SECRET_CHARS:
            text = spread_pattern(secret).sub(REDACTED, text)
    return text


def _final(message: str) -> ApplicationError:
    return ApplicationError(message, type=PROVIDER_ERROR, non_retryable=True)
