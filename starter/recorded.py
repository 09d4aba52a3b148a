"""`research eval --recorded FOLDER`: recorded real-model runs replayed through the current code.

A recording is a folder holding `calls.json` (the tool calls the model sent, one list a turn),
`recorded.json` (the run's brief; the corpus it ran on, relative to the folder, and the host to
index it as when it is one host's folder; the verifier that checked it, "" for none; its end;
every step as the host answered it then: step, tool, accepted, refusal; and the verifier's
verdicts) and optionally `judged.json` (refusals a reader judged: the step, words of the refusal,
FAIR or FALSE, why). The eval writes the recorded turns, verdicts and verifier into its ledger as
a source run and starts a run whose brief names that source (`Brief.rerun_of`): the `replay`
provider hands back each recorded decision and verdict, so no model is asked, while search,
reading, evidence, the gate and the report are the current code's. A submission the gate now
passes that the verifier never read (the gate refused it then) ends the replay as the replay
provider ends it: `gate passed, no recorded verdict`.

Where the current host answers a step otherwise than it did when recorded (accepts what it refused,
refuses what it accepted, or runs another tool), the later recorded turns reacted to the old
answer: the replay goes on, but the row names the first such step as its divergence, and a judged
refusal after it is not compared. A replay that runs out of recorded turns ends as the replay
provider ends it (a provider refusal naming the turn), and is tabled so.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from activities.ledger.review import StepRow
from starter.devstack import EmbeddedStack
from starter.runs import start_run
from workflows.contracts import SaveReportInput
from workflows.models import (
    Brief,
    Counters,
    Decision,
    Report,
    RunResult,
    RunStatus,
    StopReason,
    ToolCall,
)
from workflows.rules import refused_by
from workflows.scope import RunScope
from workflows.tools import GateFailed
from workflows.verification import Verdict, Verification

PROVIDER = "recorded"  # the provider named on the source run's model calls and verdicts
# How the replay provider ends a run whose submission the recorded verifier never read
# (activities.model.verify: the gate passed it, the verifier cannot be asked offline), and one that
# asks for a turn the recording lacks (activities.model.replay).
_NO_VERDICT = re.compile(r"recorded no verdict on .* submitted at step (\d+)")
_NO_TURN = re.compile(r"recorded no model decision for turn (\d+)")
VERDICTS = ("FAIR", "FALSE")


@dataclass(frozen=True)
class Judged:
    """A refusal a reader judged: FALSE (the step was correct) or FAIR (the model was wrong)."""

    step: int
    says: str  # words of the refusal's sentence that name it
    verdict: str
    why: str = ""


@dataclass(frozen=True)
class Recording:
    name: str
    brief: Brief
    corpus: Path
    host: str | None
    verifier: str  # "provider model" of the verifier that checked the run ("": none)
    turns: list[list[dict[str, Any]]]
    status: str
    stop_reason: str
    steps: list[tuple[int, str, bool, str]]
    judged: list[Judged] = field(default_factory=list)
    verdicts: list[tuple[int, Verdict]] = field(default_factory=list)  # (step, verdict)


def load_recording(folder: Path) -> Recording:
    """The recording in `folder`; ValueError saying what is missing or malformed."""
    try:
        turns = json.loads((folder / "calls.json").read_text(encoding="utf-8"))
        record = json.loads((folder / "recorded.json").read_text(encoding="utf-8"))
        judged_path = folder / "judged.json"
        judged = json.loads(judged_path.read_text(encoding="utf-8")) if judged_path.exists() else []
        recording = Recording(
            name=folder.name,
            brief=Brief.model_validate(record["brief"]),
            corpus=(folder / record["corpus_dir"]).resolve(),
            host=record.get("host") or None,
            verifier=str(record["verifier"]),
            turns=turns,
            status=record["status"],
            stop_reason=record["stop_reason"],
            steps=[(int(s), str(t), bool(ok), str(e)) for s, t, ok, e in record["steps"]],
            judged=[Judged(**item) for item in judged],
            verdicts=[
                (int(item.pop("step")), Verdict.model_validate(item))
                for item in record.get("verdicts", [])
            ],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{folder} is not a recorded run: {error}") from None
    bad = [item.verdict for item in recording.judged if item.verdict not in VERDICTS]
    if bad:
        raise ValueError(f"{folder}/judged.json: a verdict is FAIR or FALSE, not {bad[0]!r}")
    return recording


async def replay(
    stack: EmbeddedStack, settings: Any, recording: Recording, run_id: str
) -> dict[str, Any]:
    """Replay the recording's decisions as run `run_id` on the worker `settings` names; its row."""
    row: dict[str, Any] = {
        "recording": recording.name,
        "recorded": _end(recording.status, recording.stop_reason, []),
    }
    source = f"recorded-{recording.name}-{uuid.uuid4().hex[:6]}"
    await _source(stack, recording, source)
    brief = recording.brief.model_copy(update={"rerun_of": source})
    handle = await start_run(stack.client, settings, brief, run_id)
    result: RunResult = await handle.result()
    rows = await stack.ledger.steps(run_id)
    return row | replayed_row(recording, result, rows)


async def _source(stack: EmbeddedStack, recording: Recording, source: str) -> None:
    """The recording as an ended run in the ledger: its brief, model turns, the verifier's
    verdicts and how its report was checked (what a rerun reads of its source)."""
    now = datetime.now(UTC).isoformat()
    await stack.ledger.start_run(source, recording.brief, now)
    for turn, calls in enumerate(recording.turns, start=1):
        decision = Decision(
            tool_calls=[
                ToolCall(
                    id=f"call_{turn}_{number}",
                    name=call["name"],
                    arguments=json.dumps(call["arguments"], ensure_ascii=False),
                )
                for number, call in enumerate(calls)
            ]
        )
        await stack.ledger.record_model_call(source, turn, decision, PROVIDER, 0)
    for step, verdict in recording.verdicts:
        await stack.ledger.record_verdict(source, step, verdict, PROVIDER)
    checked = (
        Verification(mode="model", verifier=recording.verifier)
        if recording.verifier
        else Verification(mode="off")
    )
    ended = SaveReportInput(
        scope=RunScope(run_id=source),
        status=RunStatus(recording.status),
        stop_reason=StopReason(recording.stop_reason),
        report=Report(answer="(the recorded run's report is not replayed)"),
        counters=Counters(steps=len(recording.steps)),
        finished_at=now,
        verification=checked,
    )
    await stack.ledger.save_report(ended, "")


def replayed_row(recording: Recording, result: RunResult, rows: list[StepRow]) -> dict[str, Any]:
    """How the current code ended the replay, where it first answered otherwise than recorded,
    and what became of each judged refusal."""
    steps = [(row.step, row.tool, row.ok, row.error or "") for row in rows]
    unread = _NO_VERDICT.search(result.message)
    if unread:  # the submission the gate passed ends the run unrecorded: the gate accepted it
        steps.append((int(unread.group(1)), "finish_research", True, ""))
    divergence = _divergence(recording.steps, steps)
    return {
        "run_id": result.run_id,
        "end": _end(
            result.status.value, result.stop_reason.value, _refused_by(rows), result.message
        ),
        "verified": bool(result.verified),
        "message": result.message,
        "steps": len(steps),
        "recorded_steps": len(recording.steps),
        "refused": [[step, tool, error] for step, tool, ok, error in steps if not ok],
        "divergence": divergence,
        "judged": [_judge(item, steps, divergence) for item in recording.judged],
    }


def _end(status: str, stop_reason: str, rules: list[str], message: str = "") -> str:
    """completed, refused (the rules of the last refused report), or incomplete (why); a replay
    the replay provider ended: its submission passed the gate but the recorded verifier never
    read it, or it asked for a turn past the recording's last."""
    if status == "completed":
        return "completed"
    if stop_reason == "provider_error" and _NO_VERDICT.search(message):
        return "gate passed, no recorded verdict"
    turn = _NO_TURN.search(message) if stop_reason == "provider_error" else None
    if turn:
        return f"out of recorded turns at turn {turn.group(1)}"
    if stop_reason == "finish_attempts_exhausted" and rules:
        return "refused: " + ", ".join(rules)
    return f"incomplete: {stop_reason}"


def _refused_by(rows: list[StepRow]) -> list[str]:
    for row in reversed(rows):
        data = row.entry.result.data if row.entry is not None else None
        if isinstance(data, GateFailed):
            return list(dict.fromkeys(refused_by(gap) or "other" for gap in data.gaps))
    return []


def _divergence(
    recorded: list[tuple[int, str, bool, str]], replayed: list[tuple[int, str, bool, str]]
) -> dict[str, Any] | None:
    """The first step the current host answered otherwise than the recording (another tool, or
    accepted where it was refused or the reverse), or where one of the two ran out of steps."""
    for then, now in zip(recorded, replayed, strict=False):
        if then[1:3] != now[1:3]:
            return {
                "step": now[0],
                "recorded": _answer(then),
                "replayed": _answer(now),
            }
    if len(recorded) != len(replayed):
        step = min(len(recorded), len(replayed)) + 1
        longer = "recording" if len(recorded) > len(replayed) else "replay"
        return {"step": step, "recorded": "", "replayed": f"only the {longer} has this step"}
    return None


def _answer(step: tuple[int, str, bool, str]) -> str:
    _, tool, ok, error = step
    return f"{tool} accepted" if ok else f"{tool} refused: {error}"


def _judge(
    item: Judged, steps: list[tuple[int, str, bool, str]], divergence: dict[str, Any] | None
) -> dict[str, Any]:
    """What the current code did with a judged refusal's step: accepted, refused for it, or
    refused for another reason; and whether that is what the verdict asks (a FALSE refusal no
    longer made, a FAIR one still refusing the step). After a divergence: not compared."""
    judged = {"step": item.step, "says": item.says, "verdict": item.verdict}
    if divergence is not None and divergence["step"] < item.step:
        return judged | {"now": "after the divergence", "as_judged": None}
    now = next((step for step in steps if step[0] == item.step), None)
    if now is None:
        return judged | {"now": "not reached", "as_judged": None}
    if now[2]:
        state = "accepted"
    elif item.says in now[3]:
        state = "refused for it"
    else:
        state = "refused otherwise"
    wanted = state != "refused for it" if item.verdict == "FALSE" else state != "accepted"
    return judged | {"now": state, "as_judged": wanted}


def render(rows: list[dict[str, Any]]) -> list[str]:
    """The recorded runs: each one's end then and now, its divergence, its judged refusals."""
    lines = [
        "## Recorded real-model runs, replayed through the current code",
        "",
        "| run | recorded end | replayed end | steps | refused steps | diverged at | judged "
        "refusals as judged |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        end = row["end"]
        if end == "completed":
            end += " verified" if row["verified"] else " unverified"
        diverged = row["divergence"]
        where = f"step {diverged['step']}: {diverged['replayed']}" if diverged else "no"
        judged = [item for item in row["judged"] if item["as_judged"] is not None]
        held = sum(bool(item["as_judged"]) for item in judged)
        cells = [
            row["recording"], row["recorded"], end, f"{row['steps']} ({row['recorded_steps']})",
            str(len(row["refused"])), where, f"{held}/{len(judged)}" if row["judged"] else "",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += [
        "",
        "Each run's recorded model decisions replayed (no model asked) through the current "
        "workflow and gate, on the corpus it ran on. Steps: replayed (recorded). Diverged at: "
        "the first step the current host answered otherwise than the recording; the recorded "
        "turns after it reacted to the old answer. Judged refusals as judged: of the refusals a "
        "reader judged before any divergence, those the current code treats as judged (a FALSE "
        "one no longer made, a FAIR one still refusing its step).",
    ]
    return lines
