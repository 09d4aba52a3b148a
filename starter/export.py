"""`research export RUN DIR`: one run for a reader with no database access, and back.

One JSON file per ledger table (the rows as they are), the report as Markdown, as JSON (quotes
and URLs) and as a review page (`report.html`, `starter.page`), every snapshot as a text file,
and the workflow history when Temporal still has it: `history.json` the latest execution's, and
for a run that continued as new `history-1.json`, `history-2.json`, ... the executions before
it, oldest first. `research audit DIR` and `research replay DIR` read the folder as they read
the ledger and the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from temporalio.client import WorkflowHistory

from activities.ledger import RunRows
from activities.ledger.review import (
    EvidenceRow,
    ModelCallRow,
    PassageRow,
    ReportRow,
    RunRow,
    SearchRow,
    SourceRow,
    StepRow,
    VerdictRow,
)
from runtime.settings import Settings
from runtime.temporal import TemporalUnavailable
from starter.errors import EXIT_USAGE, CliError
from starter.history import fetch_histories, read_history_file
from starter.links import web_ui_link
from starter.page import PageLinks, render_page
from starter.review import ReportView, ledger_for, load_rows, report_view

TABLES: dict[str, type[BaseModel]] = {
    "model_calls": ModelCallRow,
    "steps": StepRow,
    "searches": SearchRow,
    "passages": PassageRow,
    "evidence": EvidenceRow,
}
# Tables an older export may lack (read as no rows).
OPTIONAL_TABLES: dict[str, type[BaseModel]] = {"verdicts": VerdictRow}
HISTORY = "history.json"
REVIEW_PAGE = "report.html"
EARLIER = re.compile(r"^history-(\d+)\.json$")  # an execution before the latest (continue-as-new)


async def export(settings: Settings, args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if await asyncio.to_thread(_occupied, folder):
        raise CliError(f"{folder} exists and is not an empty folder: name a new one", EXIT_USAGE)
    async with ledger_for(settings) as ledger:
        rows = await load_rows(ledger, args.id)
    history: list[WorkflowHistory] | None = None
    why_not = "not asked for (--no-history)"
    if not args.no_history:
        history, why_not = await _history(settings, args.id)
    links = PageLinks(web_ui=web_ui_link(settings, args.id))
    files = await asyncio.to_thread(write_export, rows, history, folder, links)
    print(f"exported run {args.id} to {folder}: {', '.join(files)}")
    if history is None:
        print(f"no {HISTORY}: {why_not}")
    if rows.report is None:
        print("no report: the run has not saved one (yet)")
    return 0


def _occupied(folder: Path) -> bool:
    return folder.exists() and (not folder.is_dir() or any(folder.iterdir()))


async def _history(settings: Settings, run_id: str) -> tuple[list[WorkflowHistory] | None, str]:
    try:
        return await fetch_histories(settings, run_id), ""
    except (TemporalUnavailable, CliError) as error:
        return None, str(error)


def write_export(
    rows: RunRows,
    history: WorkflowHistory | list[WorkflowHistory] | None,
    folder: Path,
    links: PageLinks | None = None,
) -> list[str]:
    """Write the folder; the names of the files written (snapshots as `snapshots/`). `history`:
    the run's executions, oldest first (or the one); `links`: what the review page links to."""
    histories = [history] if isinstance(history, WorkflowHistory) else history or []
    (folder / "snapshots").mkdir(parents=True, exist_ok=True)
    written = {"run.json": _dump(rows.run)}
    for table in [*TABLES, *OPTIONAL_TABLES]:
        written[f"{table}.json"] = [_dump(row) for row in getattr(rows, table)]
    written["sources.json"] = [_source(row) for row in rows.sources]
    urls = {source.source_id: source.final_url or source.url for source in rows.sources}
    for item in written["evidence.json"]:
        item["url"] = urls.get(item["source_id"], "")  # for the reader; ignored on the way back
    if rows.report is not None:
        written["report.json"] = _dump(report_view(rows))
        (folder / "report.md").write_text(rows.report.markdown, encoding="utf-8")
        (folder / REVIEW_PAGE).write_text(render_page(rows, links), encoding="utf-8")
    for name, value in written.items():
        (folder / name).write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    for source in rows.sources:
        if source.snapshot is not None:
            (folder / _snapshot_file(source)).write_text(source.snapshot, encoding="utf-8")
    history_names = [f"history-{n}.json" for n in range(1, len(histories))]
    history_names += [HISTORY] if histories else []
    for name, one in zip(history_names, histories, strict=True):
        (folder / name).write_text(one.to_json(), encoding="utf-8")
    (folder / "README.md").write_text(_readme(rows, len(histories)), encoding="utf-8")
    names = sorted([*written, *(["report.md", REVIEW_PAGE] if rows.report else [])])
    return ["README.md", *names, *history_names, "snapshots/"]


def _readme(rows: RunRows, executions: int) -> str:
    run = rows.run
    lines = [
        f"# Run {run.run_id}",
        "",
        f"Question: {' '.join(run.question.split())}",
        f"Status: {run.status} | Stop: {run.stop_reason or '-'}",
        "",
        "- `report.html`: the report to review in a browser, each quote highlighted in its passage",
        "- `report.md`, `report.json`: the report; the JSON lists each cited quote with its URL",
        "- `evidence.json`: every piece of evidence, its quote, offsets and source URL",
        "- `sources.json`, `snapshots/`: every page read (URL, final URL, content hash, outcome)",
        "  and the stored text each quote's offsets point into",
        "- `run.json`, `steps.json`, `model_calls.json`, `searches.json`, `passages.json`,",
        "  `verdicts.json`: the ledger's other rows of this run, one file per table",
    ]
    if executions == 1:
        lines.append("- `history.json`: the Temporal workflow history")
    elif executions:
        lines.append(
            f"- `history.json`, `history-1.json` ... `history-{executions - 1}.json`: the Temporal"
            f" workflow histories of the run's {executions} executions (it continued as new):"
            " the latest, then the ones before it, oldest first"
        )
    lines += ["", "Check it: `research audit <this folder>`"]
    if executions:
        lines.append("Replay it: `research replay <this folder>`")
    return "\n".join(lines) + "\n"


def _dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json")


def _snapshot_file(source: SourceRow) -> str:
    return f"snapshots/{source.source_id}.txt"


def _source(source: SourceRow) -> dict[str, Any]:
    data: dict[str, Any] = source.model_dump(mode="json", exclude={"snapshot"})
    data["snapshot_file"] = _snapshot_file(source) if source.snapshot is not None else None
    return data


# ---------------------------------------------------------------- reading an export back


def is_export(folder: Path) -> bool:
    return (folder / "run.json").is_file()


def history_files(folder: Path) -> list[Path]:
    """An export's history files, oldest execution first (history.json, the latest, last)."""
    earlier = sorted(
        (int(found.group(1)), path)
        for path in folder.iterdir()
        if (found := EARLIER.match(path.name)) is not None
    )
    latest = folder / HISTORY
    return [path for _, path in earlier] + ([latest] if latest.is_file() else [])


def load_export(folder: Path) -> tuple[RunRows, list[WorkflowHistory] | None]:
    """The rows and the histories an export holds (oldest execution first), or CliError naming
    the file that is wrong."""
    try:
        rows = RunRows(
            run=RunRow.model_validate(_read(folder, "run.json")),
            sources=[_read_source(folder, item) for item in _read(folder, "sources.json")],
            report=_read_report(folder),
            **{table: _read(folder, f"{table}.json") for table in TABLES if table != "steps"},
            steps=[with_result_kind(step) for step in _read(folder, "steps.json")],
            **{
                table: _read(folder, f"{table}.json")
                for table in OPTIONAL_TABLES
                if (folder / f"{table}.json").is_file()
            },
        )
    except ValidationError as error:
        raise CliError(
            f"export {folder}: a file does not hold ledger rows ({error.errors()[0]['msg']})",
            EXIT_USAGE,
        ) from None
    files = history_files(folder)
    return rows, [read_history_file(path) for path in files] if files else None


# The kind of each tool's one result model, for a step exported before results had a kind (as
# migration 023_step_result_kinds gives the ledger's rows one); finish_research's has two.
_KIND_BEFORE_KINDS = {
    "search_web": "search_results",
    "read_page": "page_window",
    "record_evidence": "evidence",
}


def with_result_kind(step: Any) -> Any:
    """An exported step row whose result has its kind: one exported before results had a kind
    gets its tool's (the rest as it is)."""
    try:
        entry = step["entry"]
        name, data = entry["call"]["name"], entry["result"]["data"]
    except (KeyError, TypeError):  # no entry, no result data: nothing to name
        return step
    if not isinstance(data, dict) or "kind" in data:
        return step
    if name == "finish_research":
        kind = "gate_passed" if "passed" in data else "gate_failed"
    elif name in _KIND_BEFORE_KINDS:
        kind = _KIND_BEFORE_KINDS[name]
    else:
        return step
    result = {**entry["result"], "data": {**data, "kind": kind}}
    return {**step, "entry": {**entry, "result": result}}


def _read(folder: Path, name: str) -> Any:
    path = folder / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"export {folder}: {name} is missing", EXIT_USAGE) from None
    except (ValueError, UnicodeDecodeError):
        raise CliError(f"export {folder}: {name} is not JSON", EXIT_USAGE) from None


def _read_source(folder: Path, item: dict[str, Any]) -> SourceRow:
    name = item.pop("snapshot_file", None)
    snapshot = None
    if name:
        path = (folder / name).resolve()
        if folder.resolve() not in path.parents:
            raise CliError(
                f"export {folder}: snapshot file {name} is outside the folder", EXIT_USAGE
            )
        snapshot = path.read_text(encoding="utf-8") if path.is_file() else ""
    return SourceRow.model_validate({**item, "snapshot": snapshot})


def _read_report(folder: Path) -> ReportRow | None:
    if not (folder / "report.json").is_file():
        return None
    view = ReportView.model_validate(_read(folder, "report.json"))
    markdown = (
        (folder / "report.md").read_text(encoding="utf-8")
        if (folder / "report.md").is_file()
        else ""
    )
    return ReportRow.model_validate(
        {
            "status": view.status,
            "stop_reason": view.stop_reason,
            "report": view.model_dump(
                include={"answer", "findings", "limitations", "open_questions", "composed"}
            ),
            "markdown": markdown,
            "saved_at": view.saved_at,
            "verification": view.verification,
        }
    )
