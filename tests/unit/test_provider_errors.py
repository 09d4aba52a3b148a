"""Provider refusals as typed errors: which statuses retry, after how long, what the user reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from activities.model.provider_errors import (
    MAX_DETAIL_CHARS,
    Provider,
    credential_failure,
    malformed_failure,
    network_failure,
    retry_delay,
    status_failure,
)
from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE

SEARCH = Provider(label="search provider fake", credentials="FAKE_KEY", endpoint="FAKE_URL")
NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retryable(status: int) -> None:
    error = status_failure(SEARCH, status, {}, "busy")

    assert error.type == PROVIDER_RETRYABLE and not error.non_retryable
    assert error.message == f"search provider fake answered HTTP {status}, will retry: busy"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "search provider fake answered HTTP 400: the request was refused: bad query"),
        (404, "search provider fake answered HTTP 404: not found (check FAKE_URL): bad query"),
        (422, "search provider fake answered HTTP 422: the request was refused: bad query"),
    ],
)
def test_other_client_errors_are_final(status: int, message: str) -> None:
    error = status_failure(SEARCH, status, {"retry-after": "5"}, "bad query")

    assert error.type == PROVIDER_ERROR and error.non_retryable
    assert error.message == message and error.next_retry_delay is None


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_credentials_never_repeat_the_providers_text(status: int) -> None:
    error = status_failure(SEARCH, status, {}, "invalid key sk-abc123")

    assert error.type == PROVIDER_ERROR and error.non_retryable
    assert error.message == (
        f"search provider fake answered HTTP {status}: the credentials were rejected "
        "(check FAKE_KEY)"
    )


def test_the_providers_text_is_one_short_line() -> None:
    error = status_failure(SEARCH, 400, {}, "line one\n  line two\t" + "x" * 1_000)

    detail = error.message.split("refused: ", 1)[1]
    assert detail.startswith("line one line two x") and len(detail) == MAX_DETAIL_CHARS
    assert status_failure(SEARCH, 400, {}, "  ").message.endswith("refused: no detail given")


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the precise one wins
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "Thu, 01 Jan 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Thu, 01 Jan 2026 11:59:00 GMT"}, 0.0),  # already past
        ({"retry-after": "86400"}, 120.0),  # capped
        ({"retry-after": "Fri, 01 Jan 2100 00:00:00 GMT"}, 120.0),
        ({"retry-after": "-3"}, 0.0),
    ],
)
def test_retry_after_in_milliseconds_seconds_or_a_date(
    headers: dict[str, str], seconds: float
) -> None:
    assert retry_delay(headers, NOW) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "headers", [{}, {"retry-after": "soon"}, {"retry-after": "nan"}, {"retry-after-ms": "inf"}]
)
def test_no_usable_retry_after_leaves_the_delay_to_the_retry_policy(
    headers: dict[str, str],
) -> None:
    assert retry_delay(headers, NOW) is None


def test_network_trouble_is_retryable() -> None:
    assert network_failure(SEARCH, timed_out=True).message == (
        "search provider fake did not answer in time, will retry"
    )
    unreachable = network_failure(SEARCH, timed_out=False)
    assert unreachable.type == PROVIDER_RETRYABLE and not unreachable.non_retryable
    assert unreachable.message == "search provider fake could not be reached, will retry"


def test_a_malformed_answer_and_a_missing_token_are_final() -> None:
    malformed = malformed_failure(SEARCH, "a body that is not JSON")
    token = credential_failure("model provider azure", "sign in with `az login`")

    assert malformed.non_retryable and malformed.message == (
        "search provider fake answered with a body that is not JSON (check FAKE_URL)"
    )
    assert token.type == PROVIDER_ERROR and token.non_retryable
    assert token.message == (
        "model provider azure could not get a Microsoft Entra ID token (sign in with `az login`)"
    )
