"""Migration 023 names the kind of every tool result a ledger stored before results had one, and
leaves what the hash chains encode as it was."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from activities.ledger.chain import entry_fields
from runtime.database import apply_migrations, migrations
from workflows.transcript import TranscriptEntry

# The demo export's steps as recorded before results had a kind (tests/exports/demo since holds
# a newer recording).
OLD_STEPS = Path(__file__).parent / "steps_before_kinds.json"
GATE_FAILED = {"gaps": ["Q2 has no evidence"], "finish_attempts_left": 2}


def _old_steps() -> list[dict[str, Any]]:
    """The demo export's steps (stored before results had a kind), and a refused finish."""
    steps: list[dict[str, Any]] = json.loads(OLD_STEPS.read_text(encoding="utf-8"))
    refused = json.loads(json.dumps(steps[-1]))
    refused["step"] = len(steps) + 1
    refused["entry"]["step"] = refused["step"]
    refused["entry"]["result"] = {"ok": False, "error": "the coverage gate failed"}
    refused["entry"]["result"]["data"] = GATE_FAILED
    return [*steps, refused]


def test_results_stored_before_kinds_get_their_tool_s_kind(pg_url: str) -> None:
    steps = _old_steps()
    assert all("kind" not in (s["entry"]["result"].get("data") or {}) for s in steps)
    database = f"kinds_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    url = psycopg.conninfo.make_conninfo(pg_url, dbname=database)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA research")
            conn.execute("CREATE TABLE research.schema_migrations (version text PRIMARY KEY)")
            for migration in [m for m in migrations() if m.version < "023"]:
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute(
                    "INSERT INTO research.schema_migrations VALUES (%s)", (migration.version,)
                )
            conn.execute(
                "INSERT INTO research.runs (run_id, question, brief, started_at) "
                "VALUES ('old', 'q?', '{}', now())"
            )
            conn.execute("INSERT INTO research.executions VALUES ('old', '')")
            for step in steps:
                conn.execute(
                    "INSERT INTO research.steps "
                    "(run_id, execution_id, step, turn, tool, ok, entry, recorded_at) "
                    "VALUES ('old', '', %s, %s, %s, %s, %s, now())",
                    (step["step"], step["turn"], step["tool"], step["ok"], Jsonb(step["entry"])),
                )
        assert "023_step_result_kinds" in apply_migrations(url)
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT entry FROM research.steps WHERE run_id = 'old' ORDER BY step"
            ).fetchall()
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))

    kinds = [(row[0]["call"]["name"], row[0]["result"]["data"]["kind"]) for row in rows]
    assert kinds == [
        ("search_web", "search_results"),
        ("read_page", "page_window"),
        ("record_evidence", "evidence"),
        ("search_web", "search_results"),
        ("read_page", "page_window"),
        ("record_evidence", "evidence"),
        ("search_web", "search_results"),
        ("record_evidence", "evidence"),
        ("finish_research", "gate_passed"),
        ("finish_research", "gate_failed"),
    ]
    for (stored,), old in zip(rows, steps, strict=True):
        data = stored["result"]["data"]
        assert {key: value for key, value in data.items() if key != "kind"} == (
            old["entry"]["result"]["data"]
        ), "only the kind is added"
        entry = TranscriptEntry.model_validate(stored)
        assert entry.result.data is not None and entry.result.data.kind == data["kind"]
        chained = entry_fields(entry)
        assert chained is not None and "kind" not in chained["result"]["data"], (
            "the chain encodes the entry as before: a kind is its model's default"
        )
