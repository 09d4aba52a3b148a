"""Provider failures as typed Temporal errors, shared by the model and the web-search activities.

408/409/429/5xx and network trouble may pass: they raise PROVIDER_RETRYABLE and Temporal's retry
policy tries again, after the provider's `retry-after-ms` / `Retry-After` when it sent one. Every
other refusal is final (PROVIDER_ERROR, non-retryable). A 401/403 never repeats the provider's
text: it can echo part of the key.
"""

from __future__ import annotations

import base64
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import unquote

from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.cleaning import clean
from workflows.contracts import PROVIDER_ERROR, PROVIDER_RETRYABLE

RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_RETRY_DELAY_SECONDS = 120.0
MAX_DETAIL_CHARS = 300
MAX_SCANNED_CHARS = 4_000  # of a provider's text, before redaction; the rest is never kept
PARTIAL_SECRET_CHARS = 12  # a token holding this many consecutive characters of a key goes too
REDACTED = "[redacted]"


@dataclass(frozen=True)
class Provider:
    """How errors name a provider and what they tell the user to check."""

    label: str  # "model provider openai", "search provider serper"
    credentials: str  # what to check when the provider refuses the credentials
    endpoint: str  # what to check when the provider answers 404
    # The configured keys: blanked out of any provider text an error repeats (a gateway may echo
    # the request's headers in its error page).
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


def network_failure(provider: Provider, *, timed_out: bool) -> ApplicationError:
    """The provider could not be reached or did not answer in time: worth another try."""
    what = "did not answer in time" if timed_out else "could not be reached"
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
    """`text` without any form of the secrets. The text is first folded (NFKC: fullwidth letters
    become plain ones; invisible format characters dropped; URL-decoded twice), then removed:
    the whole secret in any letter case, its characters split by whitespace or punctuation, and
    any token holding PARTIAL_SECRET_CHARS consecutive characters of the secret, of its base64
    encoding or of its hex encoding (a key cut short, only its tail, a Basic auth header)."""
    text = _folded(text)
    for secret in secrets:
        if len(secret) >= 4:
            text = _secret_pattern(secret).sub(REDACTED, text)
    grams = {gram for secret in secrets for form in _forms(secret) for gram in _grams(form)}
    if not grams:
        return text
    return re.sub(
        r"\S+",
        lambda token: REDACTED if _holds_any(token[0].lower(), grams) else token[0],
        text,
    )


def _folded(text: str) -> str:
    text = "".join(char for char in unicodedata.normalize("NFKC", text) if not _invisible(char))
    return unquote(unquote(text))


def _invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf"


def _forms(secret: str) -> list[str]:
    """The secret and the encodings a gateway may echo it in, lower-cased. Base64 depends on
    what precedes the secret (three alignments); the edges of each encoding are left out."""
    raw = secret.encode()
    forms = [secret.lower(), raw.hex()]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode().rstrip("=")
        forms.append(encoded[4:-4].lower())
    return forms


def _grams(form: str) -> set[str]:
    size = min(PARTIAL_SECRET_CHARS, len(form))
    return {form[start : start + size] for start in range(len(form) - size + 1)} if size else set()


def _secret_pattern(secret: str) -> re.Pattern[str]:
    gap = r"(?:\s|%(?:20|09|0a|0d)|[-+_.,:;|/\\])*"
    chars = [rf"(?:{re.escape(char)}|%{ord(char):02x})" for char in secret if not char.isspace()]
    return re.compile(gap.join(chars), re.IGNORECASE)


def _holds_any(token: str, grams: set[str]) -> bool:
    return any(
        token[start : start + PARTIAL_SECRET_CHARS] in grams
        for start in range(len(token) - PARTIAL_SECRET_CHARS + 1)
    )


def _final(message: str) -> ApplicationError:
    return ApplicationError(message, type=PROVIDER_ERROR, non_retryable=True)
