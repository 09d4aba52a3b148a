"""Shared plumbing of the ledger modules: the connection type, row helpers and ledger errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, LiteralString

import psycopg
from psycopg.rows import dict_row

Connection = psycopg.AsyncConnection[Any]
Row = dict[str, Any]
Params = Sequence[Any] | Mapping[str, Any]


@dataclass(frozen=True)
class StoredAt:
    """Where a row is written: the run, its execution, and the step whose work it is."""

    run_id: str
    execution_id: str
    step: int | None = None


class LedgerError(Exception):
    """Base of the errors the ledger raises on purpose."""


class UnknownRun(LedgerError):
    """A run-scoped write named a run that was never started: retrying cannot help."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} has not been started: start_run must come first")
        self.run_id = run_id


class RunIdTaken(LedgerError):
    """The run id belongs to another Temporal execution: a new run needs a new workflow id."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run id {run_id} already holds an earlier investigation: start this one under a "
            "new workflow id"
        )
        self.run_id = run_id


class LedgerConflict(LedgerError):
    """An optimistic update lost a race (the row's version moved): a retry re-reads and succeeds."""


async def fetch_one(conn: Connection, query: LiteralString, params: Params) -> Row | None:
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(query, params)
        return await cursor.fetchone()


async def fetch_all(conn: Connection, query: LiteralString, params: Params) -> list[Row]:
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(query, params)
        return await cursor.fetchall()


async def execute(conn: Connection, query: LiteralString, params: Params) -> int:
    """Run one statement; the number of rows it touched (0 when ON CONFLICT DO NOTHING skipped)."""
    async with conn.cursor() as cursor:
        await cursor.execute(query, params)
        return cursor.rowcount


_SELECT_CURRENT = "SELECT execution_id FROM research.runs WHERE run_id = %s"


async def execution_of(conn: Connection, run_id: str, execution: str | None) -> str:
    """The execution to read or write under: `execution` when given, else the run's current one
    (`runs.execution_id`, what status, report and audit follow; "" for a run never started)."""
    if execution is not None:
        return execution
    row = await fetch_one(conn, _SELECT_CURRENT, (run_id,))
    return "" if row is None else str(row["execution_id"])


@asynccontextmanager
async def run_must_exist(run_id: str) -> AsyncIterator[None]:
    """Turn a violation of a `<table>_run_fk` (or `<table>_execution_fk`) constraint into
    UnknownRun."""
    try:
        yield
    except psycopg.errors.ForeignKeyViolation as error:
        if (error.diag.constraint_name or "").endswith(("_run_fk", "_execution_fk")):
            raise UnknownRun(run_id) from error
        raise
