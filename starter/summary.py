"""A run's summary: DESIGN.md's four lines, and the same as `research status --json`, made from
plain data (a workflow result or a progress answer as JSON). No pydantic, no workflow model and
no dataclasses (inspect's import tree) here: `research status` reads a run without loading them
(bench/cli_startup.py)."""

from __future__ import annotations

from typing import Any, NamedTuple

COMPLETED = "completed"  # RunStatus.COMPLETED's value (tests/unit/test_cli_startup.py)
RUNNING = "running"
# How a completed run whose meaning no verifier model checked is told (DESIGN.md, Outcomes;
# workflows.models.UNVERIFIED, tests/unit/test_cli_startup.py keeps them the same).
UNVERIFIED = "rules only, meaning not checked"

# `research status --json`: the same keys, in this order, whatever the state (docs/operations.md).
# A value the run cannot tell in that state is null (a number, limits) or empty (a list, a text).
STATUS_SCHEMA: dict[str, Any] = {
    "run_id": "",
    "status": "",
    "stop_reason": None,
    # a completed run: true when a verifier model checked its meaning (`verifier` names it),
    # false when the rules alone passed it; null otherwise
    "verified": None,
    "verifier": "",
    # the lanes the run entered, in order ("fixed", "agent"), and why it left the fixed lane
    "lanes": [],
    "escalation": "",
    "counters": None,
    "evidence": None,
    "sources": None,
    "independent_sources": None,
    "open_questions": [],
    "limits": None,
    "seconds_left": None,
    "last_action": "",
    "message": "",
}


def in_schema(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with every key of STATUS_SCHEMA, in its order (and nothing else)."""
    return {name: data.get(name, default) for name, default in STATUS_SCHEMA.items()}


class Summary(NamedTuple):
    """The four DESIGN.md summary lines of a run, whether it completed, and the same as data
    (`research status --json`)."""

    lines: list[str]
    status: str
    data: dict[str, Any]

    @property
    def completed(self) -> bool:
        return self.status == COMPLETED

    def text(self) -> str:
        return "\n".join(self.lines)

    def json_data(self) -> dict[str, Any]:
        """`research status --json`: one schema whatever the state (STATUS_SCHEMA)."""
        return in_schema(self.data)


def counted(data: dict[str, Any]) -> Summary:
    """The summary of a run whose counters are known (`data` in STATUS_SCHEMA's keys)."""
    counters = data["counters"]
    stop = data.get("stop_reason")
    lines = [
        f"Run: {data['run_id']}",
        f"Status: {outcome(data['status'], data.get('verified'))} | Stop: {stop or '-'}",
        f"Steps: {counters['steps']} | Searches: {counters['searches']} | "
        f"Pages: {counters['page_fetches']} | Evidence: {data['evidence']}",
        f"Reported tokens: {counters['tokens']}" + _estimated(counters),
    ]
    lanes = data.get("lanes") or []
    if "fixed" in lanes:  # a run of the agent alone reads as every run did before lanes
        why = f" (escalated: {data['escalation']})" if data.get("escalation") else ""
        lines.append(f"Lanes: {' -> '.join(lanes)}{why}")
    return Summary(lines, str(data["status"]), data)


def outcome(status: str, verified: bool | None) -> str:
    """The run's status as a user reads it: a completed run no verifier model read says so."""
    return f"{status}: {UNVERIFIED}" if status == COMPLETED and verified is False else status


def _estimated(counters: dict[str, Any]) -> str:
    if not counters.get("estimated_tokens"):
        return ""
    return (
        f" ({counters['estimated_tokens']} of them estimated by the host: the provider's usage "
        "was missing, not numbers or far below what was sent; see model_calls.usage_note)"
    )


def result_summary(result: dict[str, Any]) -> Summary:
    """A run that returned its result (`RunResult` as JSON)."""
    return counted(
        {
            "run_id": result["run_id"],
            "status": result["status"],
            "stop_reason": result.get("stop_reason") or None,
            "verified": result.get("verified"),
            "verifier": result.get("verifier") or "",
            "lanes": result.get("lanes") or [],
            "escalation": result.get("escalation") or "",
            "counters": result["counters"],
            "evidence": result.get("evidence_count", 0),
            "sources": result.get("source_count", 0),
            "independent_sources": result.get("independent_sources", 0),
            "open_questions": (result.get("report") or {}).get("open_questions") or [],
            "message": result.get("message") or "",
        }
    )


def progress_summary(progress: dict[str, Any], run_id: str) -> Summary:
    """A run as its progress query answered (`Progress` as JSON)."""
    summary = counted(
        {
            "run_id": progress.get("run_id") or run_id,
            "status": progress["status"],
            "stop_reason": progress.get("stop_reason") or None,
            "lanes": progress.get("lanes") or [],
            "escalation": progress.get("escalation") or "",
            "counters": progress["counters"],
            "evidence": progress.get("evidence_count", 0),
            "sources": progress.get("source_count", 0),
            "open_questions": progress.get("open_questions") or [],
            "limits": progress.get("limits"),
            "seconds_left": progress.get("seconds_left"),
            "last_action": progress.get("last_action") or "",
        }
    )
    if progress.get("message"):  # it could not start: say why
        summary.lines.append(f"Reason: {progress['message']}")
        summary.data["message"] = progress["message"]
    return summary


def closed_summary(run_id: str, status: str, reason: str = "", stop: str = "") -> Summary:
    """A run told without its counters: one that ended (its outcome from its search attributes;
    the counters are in its report), or one no worker answers for."""
    lines = [f"Run: {run_id}", f"Status: {status} | Stop: {stop or '-'}"]
    if reason:
        lines.append(f"Reason: {reason}")
    elif status == RUNNING:
        lines.append("(no worker answered the progress query)")
    else:
        lines.append(f"(its counters and report: `research report {run_id}`)")
    data = {"run_id": run_id, "status": status, "stop_reason": stop or None, "message": reason}
    return Summary(lines, status, data)
