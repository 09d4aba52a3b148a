"""The operator's commands on real runs, as a user types them: `runs`, `status --json`,
`report --json`, `export`, `audit` (by id, on an export, after a row was edited), `replay` (by id,
on a `temporal workflow show` file), and the wording and pipes a new user met."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT
from starter.local import DEMO_BRIEF
from tests.conftest import installed_binary
from tests.fakes.postgres import rewrite_history
from tests.system.conftest import WorkerProcess, cli_env, research
from workflows.models import UNVERIFIED
from workflows.research import VERIFIED_KEY

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


@dataclass(frozen=True)
class Runs:
    env: dict[str, str]
    completed: str  # the sample brief, through the gate
    stopped: str  # the sample question with max_steps 4: incomplete, step_limit
    tampered: str  # another short run, whose ledger a test edits


@pytest.fixture(scope="module")
def runs(
    dev_server: WorkflowEnvironment,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("operations")
    env = cli_env(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-operations-{os.getpid()}",
        RESEARCH_STATE_DIR=str(folder / "state"),
        PYTHONUNBUFFERED="1",
    )
    short = json.loads(DEMO_BRIEF.read_text()) | {"limits": {"max_steps": 4}}
    (folder / "short.json").write_text(json.dumps(short))
    # stopped after recording E001 and E002 (the sample brief reads three pages first)
    recorded = json.loads(DEMO_BRIEF.read_text()) | {"limits": {"max_steps": 6}}
    (folder / "recorded.json").write_text(json.dumps(recorded))
    worker = WorkerProcess(env)
    try:
        worker.wait_ready()
        tag = uuid.uuid4().hex[:6]
        briefs = {"completed": DEMO_BRIEF, "stopped": folder / "short.json"}
        briefs["tampered"] = folder / "recorded.json"
        ids = [f"research-ops-{name}-{tag}" for name in briefs]
        for run_id, brief in zip(ids, briefs.values(), strict=True):
            started = research(env, "start", str(brief), "--id", run_id, "--wait")
            assert "Status: " in started.stdout, started.stdout + started.stderr
            # Exit codes: 0 for a run that completed, 1 for one that did not (incomplete).
            assert started.returncode == (0 if brief == DEMO_BRIEF else 1), started.stdout
            if brief == DEMO_BRIEF:  # no model read its meaning: its summary line says so
                unverified = f"Status: completed: {UNVERIFIED} | Stop: coverage_gate_passed"
                assert unverified in started.stdout, started.stdout
        yield Runs(env, *ids)
    finally:
        worker.stop()
        if worker.process.stdout is not None:
            worker.process.stdout.close()


def test_runs_lists_recent_runs_newest_first_with_a_status_filter_and_json(runs: Runs) -> None:
    listed = research(runs.env, "runs")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == [
        "RUN", "STATUS", "STOP", "STEPS", "EVIDENCE", "TOKENS", "AGE", "QUESTION"
    ]  # fmt: skip
    ours = [line.split() for line in lines if line.startswith("research-ops-")]
    assert [row[0] for row in ours] == [runs.tampered, runs.stopped, runs.completed]
    assert ours[2][1:5] == ["completed", "coverage_gate_passed", "13", "4"]
    assert ours[1][1:4] == ["incomplete", "step_limit", "4"]

    incomplete = research(runs.env, "runs", "--status", "incomplete", "--json")
    data = json.loads(incomplete.stdout)
    assert {run["status"] for run in data} == {"incomplete"}
    stopped = next(run for run in data if run["run_id"] == runs.stopped)
    assert (stopped["stop_reason"], stopped["steps"]) == ("step_limit", 4)
    assert stopped["tokens"] > 0 and stopped["age_seconds"] >= 0

    bad = research(runs.env, "runs", "--limit", "0")
    assert (bad.returncode, bad.stderr) == (2, "error: --limit must be 1 or more, got 0\n")


def test_status_and_report_as_json_html_and_markdown(runs: Runs, tmp_path: Path) -> None:
    status = research(runs.env, "status", runs.completed, "--json")
    assert status.returncode == 0, status.stderr
    summary = json.loads(status.stdout)
    assert (summary["status"], summary["stop_reason"], summary["evidence"]) == (
        "completed", "coverage_gate_passed", 4
    )  # fmt: skip
    assert summary["counters"]["steps"] == 13

    report = json.loads(research(runs.env, "report", runs.completed, "--json").stdout)
    assert report["status"] == "completed" and not report["composed"]
    cited = [eid for finding in report["findings"] for eid in finding["evidence_ids"]]
    assert [item["id"] for item in report["evidence"]] == list(dict.fromkeys(cited))
    markdown = research(runs.env, "report", runs.completed).stdout
    for item in report["evidence"]:
        assert item["url"].startswith("https://") and f"<{item['final_url']}>" in markdown
        assert item["quote"] and item["quote"].splitlines()[0] in markdown
    page = tmp_path / "review.html"
    wrote = research(runs.env, "report", runs.completed, "--html", "-o", str(page))
    assert wrote.stdout == f"wrote {page}\n", wrote.stderr
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="evidence-E001"' in html
    assert f"/workflows/{runs.completed}" in html  # the run's Web UI page
    saved = tmp_path / "report.md"
    research(runs.env, "report", runs.completed, "-o", str(saved))
    for item in report["evidence"]:  # the Markdown file holds each quote byte for byte
        assert f"\n{item['quote']}\n" in saved.read_text(encoding="utf-8")


async def test_a_run_no_model_verified_says_so_wherever_its_outcome_is_read(
    runs: Runs, dev_server: WorkflowEnvironment, tmp_path: Path
) -> None:
    """The offline policy's completed run passed the rules alone: the CLI, the JSON, the Web UI's
    search attribute, the report's header and the review page say its meaning was not checked;
    an incomplete run says nothing of the kind (`verified` is null)."""
    status = research(runs.env, "status", runs.completed)
    assert f"Status: completed: {UNVERIFIED} | Stop: coverage_gate_passed" in status.stdout
    told = json.loads(research(runs.env, "status", runs.completed, "--json").stdout)
    assert (told["status"], told["verified"], told["verifier"]) == ("completed", False, "")
    stopped = json.loads(research(runs.env, "status", runs.stopped, "--json").stdout)
    assert (stopped["status"], stopped["verified"]) == ("incomplete", None)
    for run_id, verified in ((runs.completed, False), (runs.stopped, None)):
        described = await dev_server.client.get_workflow_handle(run_id).describe()
        assert described.typed_search_attributes.get(VERIFIED_KEY) is verified
    listed = await anext(
        aiter(
            dev_server.client.list_workflows(
                f'WorkflowId="{runs.completed}" and ResearchVerified=false'
            )
        )
    )
    assert listed.id == runs.completed  # the Web UI's list filters on it
    report = json.loads(research(runs.env, "report", runs.completed, "--json").stdout)
    assert report["verified"] is False
    header = research(runs.env, "report", runs.completed).stdout.split("## Answer")[0]
    assert f"Status: completed: {UNVERIFIED} | Stop: coverage_gate_passed" in header
    assert "Meaning: not checked." in header and "no model read" in header
    page = tmp_path / "review.html"
    research(runs.env, "report", runs.completed, "--html", "-o", str(page))
    outcome = page.read_text(encoding="utf-8").split('id="outcome"')[1].split("</section>")[0]
    assert UNVERIFIED in outcome and "verified by" not in outcome


def test_export_holds_the_run_for_a_reader_and_audits_and_replays_clean(
    runs: Runs, tmp_path: Path
) -> None:
    folder = tmp_path / "export"
    exported = research(runs.env, "export", runs.completed, str(folder))
    assert exported.returncode == 0, exported.stderr
    names = {path.name for path in folder.iterdir()}
    assert names >= {"README.md", "report.md", "report.json", "evidence.json", "sources.json"}
    assert "report.html" in names
    assert {"history.json", "snapshots", "steps.json", "run.json"} <= names
    sources = json.loads((folder / "sources.json").read_text())
    for item in json.loads((folder / "evidence.json").read_text()):
        source = next(s for s in sources if s["source_id"] == item["source_id"])
        snapshot = (folder / source["snapshot_file"]).read_text()
        assert snapshot[item["start"] : item["end"]] == item["quote"]

    audited = research(runs.env, "audit", str(folder))
    assert audited.returncode == 0, audited.stdout
    assert audited.stdout.splitlines()[-1].endswith("ok, 0 failed, 0 skipped")
    replayed = research(runs.env, "replay", str(folder / "history.json"))
    assert replayed.stdout.startswith(f"replays cleanly: {runs.completed} ")

    again = research(runs.env, "export", runs.completed, str(folder))
    assert (again.returncode, again.stderr) == (
        2, f"error: {folder} exists and is not an empty folder: name a new one\n"
    )  # fmt: skip


def test_audit_by_run_id_passes_every_check_and_names_what_it_skips(runs: Runs) -> None:
    for run_id in (runs.completed, runs.stopped):
        audited = research(runs.env, "audit", run_id)
        assert audited.returncode == 0, audited.stdout + audited.stderr
        last = audited.stdout.splitlines()[-1]
        checks = int(last.split()[0])
        assert checks >= 25
        assert last == f"{checks} checks: {checks} ok, 0 failed, 0 skipped"

    ledger_only = research(runs.env, "audit", runs.stopped, "--no-history")
    assert ledger_only.returncode == 0
    assert " skip " in ledger_only.stdout and "0 failed" in ledger_only.stdout


def test_audit_fails_when_a_ledger_row_is_edited(runs: Runs, embedded_pg_url: str) -> None:
    with psycopg.connect(embedded_pg_url, autocommit=True) as connection:
        rewrite_history(  # as the tables' owner: the worker's role may not, nor may the owner
            connection,  # without saying so
            "UPDATE research.evidence SET quote = 'Harbor Queue retries a message forever.' "
            "WHERE run_id = %s AND evidence_id = 'E001'",
            (runs.tampered,),
        )

    audited = research(runs.env, "audit", runs.tampered)
    with psycopg.connect(embedded_pg_url) as connection:
        traced = connection.execute(
            "SELECT quote_matches_snapshot FROM research.evidence_trace "
            "WHERE run_id = %s AND evidence_id = 'E001'",
            (runs.tampered,),
        ).fetchone()

    assert traced == (False,)  # the reviewer view shows it too
    assert audited.returncode == 1
    row = next(line for line in audited.stdout.splitlines() if line.startswith("quotes-in-snap"))
    assert row.split()[1] == "FAIL" and "E001: the quote is not S" in row
    assert "\nProblems:\n  quotes-in-snapshots: E001: " in audited.stdout
    audited_json = json.loads(research(runs.env, "audit", runs.tampered, "--json").stdout)
    assert audited_json["passed"] is False


def test_replay_by_run_id_and_from_the_temporal_cli_export(runs: Runs, tmp_path: Path) -> None:
    by_id = research(runs.env, "replay", runs.stopped)
    assert by_id.returncode == 0, by_id.stdout + by_id.stderr
    assert by_id.stdout.startswith(f"replays cleanly: {runs.stopped} (")

    shown = subprocess.run(
        [installed_binary("temporal"), "workflow", "show", "--workflow-id", runs.completed,
         "--address", runs.env["TEMPORAL_ADDRESS"], "--output", "json"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    (tmp_path / "shown.json").write_text(shown.stdout)
    from_file = research(runs.env, "replay", str(tmp_path / "shown.json"))
    assert from_file.returncode == 0, from_file.stdout + from_file.stderr
    assert from_file.stdout.startswith(f"replays cleanly: {runs.completed} (")

    missing = research(runs.env, "replay", "research-nosuchrun")
    assert missing.returncode == 2
    assert missing.stderr == (
        "error: no run with id research-nosuchrun: `research runs` lists the recent runs\n"
    )


def test_steering_an_ended_run_names_its_own_status(runs: Runs) -> None:
    signalled = research(runs.env, "signal", runs.stopped, "finish")

    assert (signalled.returncode, signalled.stderr) == (
        1,
        f"error: run {runs.stopped} has already ended (incomplete, step_limit): it can no "
        "longer change\n",
    )


@pytest.mark.parametrize("command", ["report", "status", "runs"])
def test_output_into_a_pipe_that_closed_ends_quietly(runs: Runs, command: str) -> None:
    """`research report ID | head`: the reader leaves first; no BrokenPipeError, no traceback."""
    args = [command] if command == "runs" else [command, runs.completed]
    argv = " ".join([sys.executable, "-m", "starter.cli", *args])
    piped = subprocess.run(
        ["sh", "-c", f"{argv} | head -n 0"],
        cwd=PROJECT_ROOT, env=runs.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (piped.stdout, piped.stderr) == ("", "")


def ledger_page_queries() -> list[str]:
    """The SQL statements of the ledger's manual page (docs/ledger.md), as written."""
    section = (PROJECT_ROOT / "docs" / "ledger.md").read_text().split("# The ledger (SQL)", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    return [statement.strip() for statement in block.split(";\n") if statement.strip()]


def test_the_ledger_page_queries_run_as_written(runs: Runs, embedded_pg_url: str) -> None:
    queries = ledger_page_queries()
    assert any("research.evidence_trace" in query for query in queries)
    assert any("research.run_summary" in query for query in queries)
    results: dict[str, list[tuple[object, ...]]] = {}
    with psycopg.connect(embedded_pg_url) as connection:
        for query in queries:
            written = query.replace("'research-harbor-queue-deal-26011c'", "%s").rstrip(";")
            params = (runs.completed,) * written.count("%s")
            results[query] = connection.execute(written, params).fetchall()
        summary = connection.execute(
            "SELECT status, steps, sources_read, evidence, cited_evidence, report_composed "
            "FROM research.run_summary WHERE run_id = %s",
            (runs.completed,),
        ).fetchone()

    traced = next(rows for query, rows in results.items() if "evidence_trace" in query)
    assert [row[0] for row in traced] == ["E001", "E002", "E003", "E004"]
    assert all(row[3] is True and row[4] for row in traced)  # quote in snapshot, and cited
    assert all(str(row[5]).startswith("https://docs.harborq.example/") for row in traced)
    assert summary == ("completed", 13, 4, 4, 4, False)
