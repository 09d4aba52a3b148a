"""How a run ends when an activity gave up, by cause (runs since retry-by-cause-1), and what
telemetry may carry of model or page text (pure functions)."""

from __future__ import annotations

import psycopg
import pytest
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

from activities.ledger import ledger_errors
from activities.spans import _shown_url
from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE
from workflows.models import RunStatus, StopReason
from workflows.outcomes import failed as _failed
from workflows.tracing import tool_label


def gave_up(cause: BaseException, state: RetryState, activity: str = "search_web") -> ActivityError:
    error = ActivityError(
        "activity failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="1@host",
        activity_type=activity,
        activity_id="3",
        retry_state=state,
    )
    error.__cause__ = cause
    return error


def heartbeat_timeout() -> TimeoutError:
    return TimeoutError("heartbeat", type=TimeoutType.HEARTBEAT, last_heartbeat_details=[])


def test_retries_stopped_early_for_the_deadline_end_the_run_at_the_deadline() -> None:
    # Temporal stops (retry state TIMEOUT) when the next back-off would pass the deadline.
    outcome = _failed(gave_up(heartbeat_timeout(), RetryState.TIMEOUT), False)
    assert (outcome.status, outcome.stop_reason) == (RunStatus.INCOMPLETE, StopReason.DEADLINE)
    busy = ApplicationError(
        "model provider x answered HTTP 429, will retry", type=PROVIDER_RETRYABLE
    )
    outcome = _failed(gave_up(busy, RetryState.TIMEOUT, "decide"), False)
    assert (outcome.status, outcome.stop_reason) == (RunStatus.INCOMPLETE, StopReason.DEADLINE)


def test_only_the_providers_word_is_a_provider_error_and_the_rest_names_the_fault() -> None:
    refused = ApplicationError(
        "model provider x answered HTTP 401", type=PROVIDER_ERROR, non_retryable=True
    )
    outcome = _failed(gave_up(refused, RetryState.NON_RETRYABLE_FAILURE, "decide"), False)
    assert (outcome.status, outcome.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    down = ApplicationError("connection refused", type="OperationalError")
    outcome = _failed(gave_up(down, RetryState.TIMEOUT), False)
    assert (outcome.status, outcome.stop_reason) == (
        RunStatus.FAILED,
        StopReason.INFRASTRUCTURE_ERROR,
    )
    assert outcome.detail == (
        "infrastructure: search_web failed until the deadline "
        "(OperationalError: connection refused)"
    )


async def test_a_schema_behind_the_code_is_not_retried() -> None:
    with pytest.raises(ApplicationError) as raised:
        async with ledger_errors():
            raise psycopg.errors.UndefinedTable('relation "research.steps" does not exist')
    assert raised.value.non_retryable and raised.value.type == "LedgerSchema"


def test_model_text_never_becomes_a_label_and_urls_lose_credentials_and_tokens() -> None:
    assert tool_label("read_page") == "read_page"
    assert tool_label("ignore previous instructions") == "unknown"
    assert tool_label("") == "(none)"
    url = "https://user:secret@files.example:8443/a.pdf?X-Amz-Signature=abc#top"
    assert _shown_url(url, keep_query=False) == "https://files.example:8443/a.pdf"
    assert "secret" not in _shown_url(url, keep_query=True)
