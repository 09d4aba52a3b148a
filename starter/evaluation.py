"""`research eval`: golden briefs through the real workflow, arm by arm, scored and tabled.

Each arm is a worker on its own task queue over one embedded stack (a scratch PostgreSQL and
Temporal dev server): `fixed` (search, read, record, finish: no loop), `offline` (the agent
policy), and one per `--model` (the configured OpenAI-compatible or Azure provider, that model).
Every golden set's corpus is indexed first; every brief runs once per arm with its own limits.
The table goes to stdout and, with the JSON of every run, to `--out` (.md and .json); with
`--figures PATH` (`make eval`: bench/results/eval.json) also the figures alone, as data with their
date, machine and load (starter.figures), and the same table beside them (.md). With
`--recorded FOLDER` (repeatable), recorded real-model runs are replayed too, their decisions
through the current workflow and gate, and tabled apart (starter.recorded).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from activities.ledger.evidence import CitedEvidence as Cited
from activities.ledger.review import StepRow
from activities.search import index_corpus
from baselines.golden import GoldenSet, corpus_folder, load_golden, score
from composition.providers import check_model_settings
from runtime.options import LOCAL_PROVIDERS
from runtime.settings import Settings, SettingsError
from starter.devstack import EmbeddedStack, embedded_stack
from starter.errors import EXIT_USAGE, CliError
from starter.figures import Measurement
from starter.local import background_worker
from starter.recorded import Recording, load_recording, replay
from starter.recorded import render as render_recorded
from starter.runs import start_run
from workflows.rules import refused_by
from workflows.tools import GateFailed

POLICIES = ("fixed", "offline")
# The lane ablation (`workflows.lanes`): named with agent or auto, the arms are lanes. With a model
# each runs on it in that lane; without one, fixed is the fixed policy and agent and auto the
# offline policy's own loop (the deterministic arms, as before lanes).
LANES = ("fixed", "agent", "auto")


@dataclass(frozen=True)
class Arm:
    name: str
    settings: Settings


async def evaluate(settings: Settings, args: argparse.Namespace) -> int:
    measurement = Measurement.begin("eval", command_line(args))
    paths = [Path(path) for path in args.golden]
    goldens = [(path, _load(path)) for path in paths]
    arms = _arms(settings, args)
    corpus = await asyncio.to_thread(Path(args.corpus).resolve) if args.corpus else None
    folders = [await _folder(golden, path, corpus) for path, golden in goldens]
    recordings = [await _recording(Path(folder)) for folder in args.recorded or []]
    with tempfile.TemporaryDirectory(prefix="research-eval-") as scratch:
        stack_settings = dataclasses.replace(
            settings,
            state_dir=Path(scratch) / "state",
            corpus_dir=Path(scratch) / "no-corpus",
            database_url=None,
            temporal_address=f"127.0.0.1:{_free_port()}",
            temporal_api_key=None,
            ui_port=_free_port(),
        )
        async with embedded_stack(stack_settings) as stack:
            for (path, golden), folder in zip(goldens, folders, strict=True):
                await _index(stack, golden, path, folder)
            runs = await _run_all(stack, goldens, arms, args.limit)
            indexed = {
                (folder, golden.host or None)
                for (_, golden), folder in zip(goldens, folders, strict=True)
            }
            recorded = await _replay_all(stack, settings, recordings, indexed)
    report = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "golden": [
            {"file": str(path), "corpus": golden.corpus, "briefs": len(golden.briefs)}
            for path, golden in goldens
        ],
        "arms": [arm.name for arm in arms],
        "summary": {arm.name: summarise([r for r in runs if r["arm"] == arm.name]) for arm in arms},
        "by_golden": {
            path.name: {
                arm.name: summarise(
                    [r for r in runs if r["arm"] == arm.name and r["golden"] == path.name]
                )
                for arm in arms
            }
            for path, _ in goldens
        },
        "runs": runs,
        "recorded": recorded,
    }
    markdown = render(report)
    print(markdown)
    out = Path(args.out) if args.out else settings.state_dir / "eval" / _stamp()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(markdown + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out.with_suffix('.md')} and {out.with_suffix('.json')}")
    if args.figures:
        written = measurement.write(figures(report), Path(args.figures))
        written.with_suffix(".md").write_text(markdown + "\n", encoding="utf-8")
        print(f"wrote the figures to {written} and {written.with_suffix('.md')}")
    return 0


# Per run, what may differ between two evaluations of the same code: not its id or its seconds.
_RUN_VARIES = {"run_id", "seconds", "cited_evidence"}


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """The evaluation's figures: per set and arm, over all, and each run's outcome and scores
    (without its random id, its timing or its quotes, so two runs of the same code compare)."""
    return {
        "golden": report["golden"],
        "arms": report["arms"],
        "summary": report["summary"],
        "by_golden": report["by_golden"],
        "runs": [
            {key: value for key, value in run.items() if key not in _RUN_VARIES}
            for run in report["runs"]
        ],
        "recorded": [
            {key: value for key, value in row.items() if key != "run_id"}
            for row in report.get("recorded", [])
        ],
    }


def command_line(args: argparse.Namespace) -> str:
    words = ["research", "eval", *args.golden, "--arms", args.arms]
    for model in args.model or []:
        words += ["--model", model]
    if args.limit:
        words += ["--limit", str(args.limit)]
    for folder in args.recorded or []:
        words += ["--recorded", folder]
    return " ".join(words)


async def _recording(folder: Path) -> Recording:
    try:
        recording = await asyncio.to_thread(load_recording, folder)
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    if not await asyncio.to_thread(recording.corpus.is_dir):
        raise CliError(
            f"the corpus of the recording {folder} is not at {recording.corpus}: install it (for "
            "the Celery runs, apt-get install python-celery-doc)",
            EXIT_USAGE,
        )
    return recording


async def _replay_all(
    stack: EmbeddedStack,
    settings: Settings,
    recordings: list[Recording],
    indexed: set[tuple[Path, str | None]],
) -> list[dict[str, Any]]:
    """Each recording replayed on one worker of the deterministic kind with no verifier of its
    own: a rerun's decisions and verdicts are its source's, whatever the worker's providers."""
    if not recordings:
        return []
    for folder, host in dict.fromkeys((r.corpus, r.host) for r in recordings):
        if (folder, host) not in indexed:
            await _index_folder(stack, folder, host, folder)
    worker = dataclasses.replace(
        settings,
        model_provider="offline",
        verifier=dataclasses.replace(settings.verifier, provider="off"),
        task_queue="eval-recorded",
        search_provider="corpus",
        database_url=stack.database_url,
        worker_database_url=stack.settings.worker_database_url,
        temporal_address=stack.temporal_address,
        state_dir=stack.settings.state_dir,
        corpus_dir=stack.settings.corpus_dir,
    )
    rows = []
    async with background_worker(dataclasses.replace(stack, settings=worker)):
        for number, recording in enumerate(recordings, start=1):
            run_id = f"eval-recorded-{recording.name}-{uuid.uuid4().hex[:6]}"
            rows.append(await replay(stack, worker, recording, run_id))
            print(f"[recorded {number}/{len(recordings)}] {recording.name}: "
                  f"{rows[-1]['end']}", flush=True)  # fmt: skip
    return rows


def _load(path: Path) -> GoldenSet:
    try:
        return load_golden(path)
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None


def _arms(settings: Settings, args: argparse.Namespace) -> list[Arm]:
    names = [name.strip() for name in args.arms.split(",") if name.strip()]
    unknown = [name for name in names if name not in (*POLICIES, *LANES)]
    if unknown:
        raise CliError(
            f"unknown arm {unknown[0]!r}: the arms are the policies fixed and offline, or the "
            "lanes fixed, agent and auto",
            EXIT_USAGE,
        )
    if {"agent", "auto"} & set(names):
        return _lane_arms(settings, args, names)
    arms = [
        Arm(name, dataclasses.replace(settings, model_provider=name, task_queue=f"eval-{name}"))
        for name in names
    ]
    for number, model in enumerate(args.model or [], start=1):
        if settings.model_provider in LOCAL_PROVIDERS:
            raise CliError(
                "--model needs a model provider: set RESEARCH_MODEL_PROVIDER=openai or azure "
                "and its key or endpoint",
                EXIT_USAGE,
            )
        model_settings = dataclasses.replace(
            settings, model=model, task_queue=f"eval-m{number}", lane="agent"
        )
        try:
            check_model_settings(model_settings)
        except SettingsError as error:
            raise CliError(str(error), EXIT_USAGE) from None
        arms.append(Arm(f"{settings.model_provider}:{model}", model_settings))
    if not arms:
        raise CliError("no arm to run: give --arms and/or --model", EXIT_USAGE)
    return arms


def _lane_arms(settings: Settings, args: argparse.Namespace, names: list[str]) -> list[Arm]:
    """An arm per lane named and model (`--model`, else RESEARCH_MODEL); without a model, the
    deterministic arms: fixed the fixed policy, the others the offline policy's loop."""
    if settings.model_provider in LOCAL_PROVIDERS:
        if args.model:
            raise CliError(
                "--model needs a model provider: set RESEARCH_MODEL_PROVIDER=openai or azure "
                "and its key or endpoint",
                EXIT_USAGE,
            )
        return [
            Arm(name, dataclasses.replace(
                settings, model_provider="fixed" if name == "fixed" else "offline",
                task_queue=f"eval-{name}",
            ))
            for name in names
        ]  # fmt: skip
    models = args.model or [settings.model]
    arms = []
    for number, model in enumerate(models, start=1):
        for name in names:
            lane = "agent" if name == "offline" else name
            model_settings = dataclasses.replace(
                settings, model=model, fixed_model=model, lane=lane,
                task_queue=f"eval-m{number}-{name}",
            )  # fmt: skip
            try:
                check_model_settings(model_settings)
            except SettingsError as error:
                raise CliError(str(error), EXIT_USAGE) from None
            arms.append(Arm(name if len(models) == 1 else f"{model}:{name}", model_settings))
    return arms


async def _folder(golden: GoldenSet, path: Path, corpus: Path | None) -> Path:
    folder = corpus_folder(golden, path, corpus)
    if folder is None or not await asyncio.to_thread(folder.is_dir):
        raise CliError(
            f"the corpus of {path} is not at {folder}: install it (for the Python docs, "
            "apt-get install python3.11-doc) or pass --corpus DIR",
            EXIT_USAGE,
        )
    return folder


async def _index(stack: EmbeddedStack, golden: GoldenSet, path: Path, folder: Path) -> None:
    await _index_folder(stack, folder, golden.host if golden.host else None, path)


async def _index_folder(stack: EmbeddedStack, folder: Path, host: str | None, path: Path) -> None:
    count = await index_corpus(
        stack.ledger,
        folder,
        max_chars=stack.settings.max_snapshot_chars,
        host=host,
        progress=lambda line: print(f"indexed {line}", flush=True),
    )
    if count == 0:
        raise CliError(f"no readable document in {folder} for {path}", EXIT_USAGE)


async def _run_all(
    stack: EmbeddedStack,
    goldens: list[tuple[Path, GoldenSet]],
    arms: list[Arm],
    limit: int | None,
) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    total = sum(len(golden.briefs[:limit]) for _, golden in goldens) * len(arms)
    for arm in arms:
        settings = dataclasses.replace(
            arm.settings,
            search_provider="corpus",
            database_url=stack.database_url,
            worker_database_url=stack.settings.worker_database_url,  # its role, on its server
            temporal_address=stack.temporal_address,
            state_dir=stack.settings.state_dir,
            corpus_dir=stack.settings.corpus_dir,
        )
        async with background_worker(dataclasses.replace(stack, settings=settings)):
            for path, golden in goldens:
                for number, entry in enumerate(golden.briefs[:limit], start=1):
                    run = await _run_one(stack, settings, golden, entry, f"{path.stem}-{number}")
                    runs.append({"arm": arm.name, "golden": path.name, "brief": number, **run})
                    print(_progress(len(runs), total, runs[-1]), flush=True)
    return runs


async def _run_one(
    stack: EmbeddedStack, settings: Settings, golden: GoldenSet, entry: Any, name: str
) -> dict[str, Any]:
    brief = golden.brief(entry)
    run_id = f"{settings.task_queue}-{name}-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    handle = await start_run(stack.client, settings, brief, run_id)
    result = await handle.result()
    seconds = time.perf_counter() - started
    cited = await stack.ledger.cited_evidence(run_id)
    found = await _recorded(stack, run_id)
    refused = _last_refusal(await stack.ledger.steps(run_id))
    labels = golden.labels(entry)
    return {
        "question": entry.question,
        "run_id": run_id,
        "status": result.status.value,
        "stop_reason": result.stop_reason.value,
        "completed": result.status.value == "completed",
        # completed with its meaning checked by a verifier model, or by the rules alone
        "verified": bool(result.verified),
        # the rules the last refused report broke (none when no report was refused)
        "refused_by": refused,
        **score(golden, entry, cited).as_dict(),
        # questions with recorded evidence on a page labelled for them, cited or not: what the
        # arm found, comparable whether its report completed or not
        "found": score(golden, entry, found).recalled,
        "steps": result.counters.steps,
        # it entered the fixed lane and escalated to the agent; its model calls (the verifier's
        # not counted: its tokens are; a no-model policy's decisions are not model calls)
        "escalated": "fixed" in result.lanes and "agent" in result.lanes,
        "model_calls": 0
        if settings.model_provider in LOCAL_PROVIDERS
        else result.counters.model_calls,
        "tokens": result.counters.tokens,
        "seconds": round(seconds, 2),
        "cited_evidence": [
            {
                "question_id": c.question_id,
                "url": c.url,
                "on_label": c.url in labels.get(c.question_id, set()),
                "quote": c.quote,
            }
            for c in cited
        ],
    }


async def _recorded(stack: EmbeddedStack, run_id: str) -> list[Cited]:
    """Every piece of evidence the run recorded, with its page's URL, as the scores read it."""
    pages = {source.id: source for source in await stack.ledger.sources(run_id)}
    return [
        Cited(item.question_id, pages[item.source_id].final_url or pages[item.source_id].url,
              pages[item.source_id].content_hash, item.quote)
        for item in await stack.ledger.evidence_rows(run_id)
        if item.source_id in pages
    ]  # fmt: skip


def _last_refusal(steps: list[StepRow]) -> list[str]:
    """The rules the run's last refused report broke, by name, in the gate's order of gaps."""
    for row in reversed(steps):
        data = row.entry.result.data if row.entry is not None else None
        if isinstance(data, GateFailed):
            return list(dict.fromkeys(refused_by(gap) or "other" for gap in data.gaps))
    return []


def _short_of_sources(run: dict[str, Any]) -> bool:
    """Incomplete, its last refused report answering every required question: refused only
    for citing too few independent sources."""
    return not run["completed"] and run.get("refused_by") == ["independent"]


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def total(key: str) -> int:
        return sum(int(run[key]) for run in runs)

    count = max(len(runs), 1)
    return {
        "briefs": len(runs),
        "completed": total("completed"),
        # a verifier model checked the completed report's meaning, or the rules alone passed it
        "completed_verified": sum(bool(run["completed"]) and _verified(run) for run in runs),
        "completed_unverified": sum(bool(run["completed"]) and not _verified(run) for run in runs),
        # completed with every required question's cited quotes holding its answer phrase, or not
        "completed_correct": sum(_correct(run) for run in runs),
        "completed_wrong": sum(bool(run["completed"]) and not _correct(run) for run in runs),
        "incomplete": len(runs) - total("completed"),
        "short_of_sources": sum(_short_of_sources(run) for run in runs),
        # completed with every cited piece of evidence on a page labelled for its question
        "clean": sum(bool(run["completed"]) and run["on_label"] == run["cited"] for run in runs),
        "questions": total("questions"),
        "recalled": total("recalled"),
        "found": sum(int(run.get("found", run["recalled"])) for run in runs),
        "cited": total("cited"),
        "on_label": total("on_label"),
        "precision": round(total("on_label") / total("cited"), 3) if total("cited") else None,
        "phrases": total("phrases"),
        "phrase_hits": total("phrase_hits"),
        "phrase_misses": sum(int(run.get("phrase_misses", 0)) for run in runs),
        "mean_sources": round(total("sources") / count, 2),
        "mean_steps": round(total("steps") / count, 1),
        "escalated": sum(bool(run.get("escalated")) for run in runs),
        "mean_model_calls": round(sum(int(run.get("model_calls", 0)) for run in runs) / count, 1),
        "mean_tokens": round(total("tokens") / count),
        "mean_seconds": round(sum(float(run["seconds"]) for run in runs) / count, 2),
    }


def _verified(run: dict[str, Any]) -> bool:
    return bool(run.get("verified"))


def _correct(run: dict[str, Any]) -> bool:
    return bool(run["completed"]) and int(run.get("phrase_misses", 0)) == 0


# The table's columns per set and arm (docs/evaluation.md says what each means).
COLUMNS = (
    "set", "arm", "briefs", "completed verified", "completed unverified", "correct", "wrong",
    "incomplete", "recall", "found", "escalated", "model calls", "tokens", "steps", "seconds",
)  # fmt: skip


def render(report: dict[str, Any]) -> str:
    """The summary table (a row per golden set and arm, and per arm over all sets when there are
    several), then each brief's end per arm."""
    sets = ", ".join(f"{g['file']} ({g['briefs']} briefs)" for g in report["golden"])
    lines = [
        f"## research eval: {sets}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---" * len(COLUMNS) + "|",
    ]
    rows = [(name, arms) for name, arms in report.get("by_golden", {}).items()]
    if len(rows) != 1:
        rows.append(("all", report["summary"]))
    for name, summaries in rows:
        for arm, s in summaries.items():
            lines.append(f"| {name} | {arm} | " + _summary_cells(s))
    lines += [
        "",
        "Completed verified: a verifier model checked the report's meaning; unverified: the "
        "rules alone passed it. Correct and wrong: completed, with every required question's "
        "labelled answer phrase in its cited quotes, or not. Recall: questions whose cited "
        "evidence is on a page labelled for them; found: the same over all recorded evidence. "
        "Escalated: runs that left the fixed lane for the agent. Model calls (the verifier's "
        "not counted; none for the no-model arms), tokens (for a no-model arm, what its prompts "
        "would have cost a model, at four characters a token), steps and seconds: means per "
        "brief.",
        "",
    ]
    arms = report["arms"]
    lines += ["| brief | " + " | ".join(arms) + " |", "|---" * (len(arms) + 1) + "|"]
    by_brief: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for run in report["runs"]:
        by_brief.setdefault((run["golden"], run["brief"]), {})[run["arm"]] = run
    for (golden, number), ends in by_brief.items():
        question = next(iter(ends.values()))["question"].replace("|", "\\|")
        cells = [_cell(ends[arm]) if arm in ends else "" for arm in arms]
        lines.append(f"| {golden} {number}: {question} | " + " | ".join(cells) + " |")
    if report.get("recorded"):
        lines += ["", *render_recorded(report["recorded"])]
    return "\n".join(lines)


def _summary_cells(s: dict[str, Any]) -> str:
    briefs = s["briefs"]
    counts = (
        "completed_verified", "completed_unverified", "completed_correct", "completed_wrong",
        "incomplete",
    )  # fmt: skip
    return (
        f"{briefs} | "
        + "".join(f"{s[key]} | " for key in counts)
        + f"{s['recalled']}/{s['questions']} | {s.get('found', s['recalled'])}/{s['questions']} "
        f"| {s.get('escalated', 0)} | {s.get('mean_model_calls', 0)} "
        f"| {s['mean_tokens']:,} | {s['mean_steps']} | {s['mean_seconds']} |"
    )


def _cell(run: dict[str, Any]) -> str:
    end = run["stop_reason"]
    if run["completed"]:
        end = "✓" if _correct(run) else "✗ wrong"
        end += "" if _verified(run) else " (unverified)"
    elif _short_of_sources(run):
        end += " (short of sources)"
    return f"{end}, {run['recalled']}/{run['questions']} recalled, {run['steps']} steps"


def _progress(done: int, total: int, run: dict[str, Any]) -> str:
    return (
        f"[{done}/{total}] {run['arm']:>8} {run['status']:10} {run['stop_reason']:26} "
        f"recalled {run['recalled']}/{run['questions']}  steps {run['steps']:3}  "
        f"{run['seconds']:5.1f} s  {run['question']}"
    )


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
