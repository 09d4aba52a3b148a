"""Telemetry pieces that need no exporter: what a span may carry, refusal kinds, log lines, and
the bootstrap's choices by configuration (the exported traces: tests/system/test_telemetry.py)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator

import pytest

from activities.pages.guard import refusal_reason
from activities.spans import chat_attributes
from runtime import telemetry

PROMPT = [{"role": "user", "content": "the page says: the secret plan " + "x" * 5_000}]


def test_a_chat_span_carries_no_prompt_unless_content_capture_is_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(telemetry.CAPTURE_CONTENT, raising=False)
    attributes = chat_attributes(
        "azure", "gpt-x", "https://acct.openai.azure.com/openai/v1/", PROMPT
    )
    assert "secret plan" not in json.dumps(attributes)
    assert attributes["gen_ai.provider.name"] == "azure.ai.openai"
    assert attributes["gen_ai.system"] == "azure.ai.openai"
    assert (attributes["server.address"], attributes["server.port"]) == (
        "acct.openai.azure.com",
        443,
    )

    monkeypatch.setenv(telemetry.CAPTURE_CONTENT, "true")
    captured = chat_attributes("openai", "gpt-x", None, PROMPT)["gen_ai.input.messages"]
    assert "secret plan" in captured
    assert len(captured) == telemetry.CONTENT_CAP + 1, "capped, with an ellipsis"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("host evil.example is not in the allowed hosts", "host_not_allowed"),
        ("URL https://1.2.3.4/ names an IP address: only host names are fetched", "address"),
        ("host a.example resolves to a refused address: 10.0.0.1 is private", "address"),
        ("URL http://a.example/ is plain http: only https is fetched from a.example", "scheme"),
        ("URL ftp://a.example/ uses scheme 'ftp': only https is fetched", "scheme"),
        ("URL https://a.example:8443/ names port 8443: only the default port is fetched", "port"),
        ("URL https://u:p@a.example/ carries a user name or password", "userinfo"),
        (
            "https://a.example/x redirects to a refused URL: host b is not in the allowed hosts",
            "redirect",
        ),
        ("fetching https://a.example/ took more than 5 redirects", "redirect"),
        ("https://a.example/x is image/png, not a page type that can be read", "content_type"),
        ("https://a.example/x is larger than 5000000 bytes", "size"),
        (
            "https://a.example/x: the page uses content encoding 'zstd', which is not accepted",
            "encoding",
        ),
        ("host nowhere.example does not resolve (Name or service not known)", "dns"),
        ("URL 'not a url' is not a valid URL", "invalid_url"),
    ],
)
def test_every_refusal_has_a_kind_for_metrics(message: str, kind: str) -> None:
    assert refusal_reason(message) == kind


def test_log_lines_off_a_terminal_are_json_with_the_run_and_step() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(telemetry.JsonFormatter())
    logger = logging.getLogger("research.test-json")
    logger.addHandler(handler)
    logger.propagate = False
    logger.warning("step %d %s", 3, "read_page", extra={"run_id": "r-1", "step": 3})
    line = json.loads(stream.getvalue())
    assert line["message"] == "step 3 read_page"
    assert (line["level"], line["run_id"], line["step"]) == ("warning", "r-1", 3)
    assert line["time"].endswith("Z") and line["logger"] == "research.test-json"


def test_without_an_exporter_nothing_is_installed() -> None:
    off = telemetry.Telemetry({})
    assert (off.enabled, off.plugins, off.runtime) == (False, (), None)
    assert telemetry.tracing_enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert telemetry.tracing_enabled(
        {"APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=x"}
    )


@pytest.fixture
def sdk_log() -> Iterator[Callable[[bool], io.StringIO]]:
    """`quiet_activity_failures` onto a fresh stream; the SDK's logger as it was afterwards."""
    logger = logging.getLogger("temporalio")
    before, propagate = list(logger.handlers), logger.propagate

    def install(debug: bool) -> io.StringIO:
        stream = io.StringIO()
        telemetry.quiet_activity_failures(stream, debug=debug)
        return stream

    yield install
    logger.handlers[:], logger.propagate = before, propagate


def _failed_attempt() -> None:
    """What the SDK's activity worker logs for a failed attempt (temporalio/worker/_activity.py:
    `temporalio.activity.logger.warning("Completing activity as failed", exc_info=True)`, whose
    adapter adds the activity's details as the `temporal_activity` extra)."""
    details = {"activity_type": "decide", "attempt": 2, "workflow_id": "research-r1"}
    try:
        raise RuntimeError("the model provider answered 500\nwith a body of many lines")
    except RuntimeError:
        logging.getLogger("temporalio.activity").warning(
            "Completing activity as failed", exc_info=True, extra={"temporal_activity": details}
        )


@pytest.mark.parametrize("debug", [False, True])
def test_a_failed_activity_attempt_is_one_line_and_its_traceback_only_for_debug(
    sdk_log: Callable[[bool], io.StringIO], debug: bool
) -> None:
    stream = sdk_log(debug)

    _failed_attempt()

    line = json.loads(stream.getvalue())
    assert line["message"] == (
        "decide attempt 2 failed: RuntimeError: the model provider answered 500"
    )
    assert (line["level"], line["run_id"]) == ("warning", "research-r1")
    assert ("Traceback" in line.get("error", "")) is debug


@pytest.mark.parametrize("debug", [False, True])
def test_an_activity_completing_after_its_run_ended_is_said_only_for_debug(
    sdk_log: Callable[[bool], io.StringIO], debug: bool
) -> None:
    """After `finish_now` the unread model call completes late; the core's warning is expected."""
    stream = sdk_log(debug)

    core = logging.getLogger("temporalio.core-sdk_core::temporalio_sdk_core::worker::activities")
    core.warning(
        "[sdk_core::temporalio_sdk_core::worker::activities] Activity not found on completion. "
        "This may happen if the activity has already been cancelled but completed anyway."
    )
    logging.getLogger("temporalio.activity").warning("another warning")

    messages = [json.loads(line)["message"] for line in stream.getvalue().splitlines()]
    assert messages[-1] == "another warning"
    assert (len(messages) == 2) is debug
