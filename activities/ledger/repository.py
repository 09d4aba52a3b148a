"""The PostgreSQL ledger (schema `research`): every run's calls, steps, sources, evidence, report.

Every write is one transaction keyed by natural keys (`INSERT ... ON CONFLICT DO NOTHING`), so a
retried activity that writes the same rows again adds nothing. Each Temporal execution of a run
keeps its own rows (a reset forks the run, see `executions`): run-scoped methods take the
`execution` to read and write under, by default the run's current one. The SQL lives in the
modules next to this one; `Ledger` owns connections and transactions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from activities import spans
from activities.ledger import corpus as ledger_corpus
from activities.ledger import evidence as ledger_evidence
from activities.ledger import executions as ledger_executions
from activities.ledger import review as ledger_review
from activities.ledger import runs as ledger_runs
from activities.ledger import sources as ledger_sources
from activities.ledger import verdicts as ledger_verdicts
from activities.ledger.base import (
    Connection,
    LedgerConflict,
    LedgerError,
    RunIdTaken,
    StoredAt,
    UnknownRun,
    execution_of,
)
from activities.ledger.base import run_must_exist as _run_must_exist
from activities.ledger.evidence import EvidenceRows
from activities.ledger.executions import ExecutionRow
from activities.ledger.review import RunListing, RunRows, StepRow
from activities.ledger.runs import RunRecord
from activities.ledger.scoped import RunLedger, scope_execution
from activities.ledger.sources import Snapshot, StoredSource
from workflows.contracts import SaveReportInput, StepRecord
from workflows.models import Brief, Decision, Evidence, SearchHit, SourceRef
from workflows.scope import ForkPoint, RunScope
from workflows.transcript import TranscriptEntry
from workflows.verification import Verdict, Verification

__all__ = [
    "ExecutionRow",
    "ForkPoint",
    "Ledger",
    "LedgerConflict",
    "LedgerError",
    "RunIdTaken",
    "RunListing",
    "RunRecord",
    "RunRows",
    "StoredSource",
    "UnknownRun",
    "ledger_errors",
]


# Executions a Ledger remembers as known (each saves a query per activity of its run).
KNOWN_EXECUTIONS = 10_000
# Transcripts held for incremental reads (`transcript`): about one per run in flight.
HELD_TRANSCRIPTS = 512
# The last step this process recorded of a run's execution, with its chain (`record_step`).
HELD_STEP_CHAINS = 512


LEDGER_REFUSED = "LedgerRefused"  # the type of a write the ledger refuses for good


@asynccontextmanager
async def ledger_errors() -> AsyncIterator[None]:
    """How every activity maps ledger failures: those a retry cannot fix (an unknown or reused
    run id, a refused write) are non-retryable at once; connection trouble is retried."""
    from temporalio.exceptions import ApplicationError  # activities only: the CLI's reads need none

    try:
        yield
    except (UnknownRun, RunIdTaken) as error:
        raise ApplicationError(str(error), type=type(error).__name__, non_retryable=True) from error
    except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as error:
        message = f"the ledger refused a write: {error.diag.message_primary or error}"
        raise ApplicationError(message, type=LEDGER_REFUSED, non_retryable=True) from error
    except (psycopg.ProgrammingError, psycopg.NotSupportedError) as error:
        # A schema behind the code (UndefinedTable, UndefinedColumn, ...): no retry can fix it.
        message = f"the ledger cannot serve this code: {error.diag.message_primary or error}"
        raise ApplicationError(message, type="LedgerSchema", non_retryable=True) from error
    except UnicodeError as error:  # text PostgreSQL cannot encode: the same write fails again
        message = f"the ledger refused a write: {type(error).__name__}"
        raise ApplicationError(message, type=LEDGER_REFUSED, non_retryable=True) from error


class Ledger:
    """The ledger's reads and writes over an async connection pool (created by the caller)."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool
        self._known: dict[tuple[str, str], None] = {}  # (run, execution) seen, oldest first
        # (run, execution): the transcript last read of it, least recently read first
        self._transcripts: dict[tuple[str, str], ledger_runs.HeldTranscript] = {}
        # (run, execution): the step last recorded of it here and its chain, oldest first
        self._step_chains: dict[tuple[str, str], tuple[int, str]] = {}
        # Where the spans say the ledger is (host and database name only, never a password).
        where = conninfo_to_dict(pool.conninfo) if isinstance(pool.conninfo, str) else {}
        self._server = str(where.get("host") or "localhost")
        self._database = str(where.get("dbname") or "")

    def _span(self, operation: str, table: str) -> AbstractContextManager[Any]:
        return spans.database(operation, f"research.{table}", self._database, self._server)

    @asynccontextmanager
    async def _write(self, run_id: str, table: str = "runs") -> AsyncIterator[Connection]:
        """One connection inside one transaction; writing for a run never started is UnknownRun."""
        with self._span("INSERT", table):
            async with (
                self._pool.connection() as conn,
                _run_must_exist(run_id),
                conn.transaction(),
            ):
                yield conn

    @asynccontextmanager
    async def _write_one(self, run_id: str, table: str) -> AsyncIterator[Connection]:
        """One connection for a write of one statement (after any reads): the pool's connections
        are autocommit, so that statement is a transaction of its own, as `_write`'s would be
        (reads in a READ COMMITTED transaction see no more than reads outside one), without the
        BEGIN and COMMIT round trips. A connection that is not autocommit commits as the block
        ends. Writing for a run never started is UnknownRun."""
        with self._span("INSERT", table):
            async with self._pool.connection() as conn, _run_must_exist(run_id):
                yield conn

    @asynccontextmanager
    async def _read(self, table: str = "runs") -> AsyncIterator[Connection]:
        with self._span("SELECT", table):
            async with self._pool.connection() as conn:
                yield conn

    # ------------------------------------------------------------ runs, model calls, steps

    async def start_run(
        self,
        run_id: str,
        brief: Brief,
        started_at: str,
        execution_id: str = "",
        first_execution_id: str = "",
    ) -> bool:
        """Record a new run (`started_at` ISO 8601); False when this execution already did, or is
        a reset of the run to its start. Raises RunIdTaken when another workflow execution owns
        `run_id` (its `first_execution_id` is not the run's first execution)."""
        with self._span("INSERT", "runs"):
            async with self._pool.connection() as conn, conn.transaction():
                created = await ledger_runs.insert_run(
                    conn, run_id, brief, started_at, execution_id, first_execution_id
                )
        if execution_id:  # recorded now, before, or forked at the start: the ledger knows it
            self._remember(run_id, execution_id)
        return created

    async def bind(self, scope: RunScope) -> RunLedger:
        """The ledger for one activity's scope: the rows of the execution that scheduled it, so
        each execution of a reset run keeps its own. One the ledger has not seen (the first
        activity after a reset) forks the run at the scope's fork point first."""
        execution = scope_execution(scope)
        if execution:
            await self.enter(scope.run_id, execution, scope.fork)
        return RunLedger(self, scope.run_id, execution)

    async def enter(self, run_id: str, execution_id: str, point: ForkPoint) -> bool:
        """Make sure the ledger knows this execution of the run: one it has not seen (a reset)
        forks from the current execution at `point`. True when this call forked the run."""
        key = (run_id, execution_id)
        if key in self._known:  # executions are never removed: known once, known for good
            return False
        with self._span("SELECT", "executions"):
            async with (
                self._pool.connection() as conn,
                _run_must_exist(run_id),
                conn.transaction(),
            ):
                forked = await ledger_executions.enter(conn, run_id, execution_id, point)
        self._remember(run_id, execution_id)
        return forked

    def _remember(self, run_id: str, execution_id: str) -> None:
        self._known[(run_id, execution_id)] = None
        while len(self._known) > KNOWN_EXECUTIONS:
            del self._known[next(iter(self._known))]

    async def executions(self, run_id: str) -> list[ExecutionRow]:
        """The run's executions, the first one first (a reset adds one; one of them is current)."""
        async with self._read("executions") as conn:
            return await ledger_executions.load_executions(conn, run_id)

    async def run(self, run_id: str) -> RunRecord | None:
        async with self._read() as conn:
            return await ledger_runs.load_run(conn, run_id)

    async def record_model_call(
        self,
        run_id: str,
        turn: int,
        decision: Decision,
        provider: str,
        context_chars: int,
        *,
        execution: str | None = None,
    ) -> bool:
        async with self._write_one(run_id, "model_calls") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.insert_model_call(
                conn, run_id, scope, turn, decision, provider, context_chars
            )

    async def decision(
        self, run_id: str, turn: int, *, execution: str | None = None
    ) -> Decision | None:
        """The recorded model turn, if this turn was answered already (a retried `decide`)."""
        async with self._read("model_calls") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.load_decision(conn, run_id, scope, turn)

    async def decisions(self, run_id: str, *, execution: str | None = None) -> list[Decision]:
        """The recorded model turns of a run, in order (what a replay provider hands back)."""
        async with self._read() as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.load_decisions(conn, run_id, scope)

    async def record_step(self, record: StepRecord, *, execution: str | None = None) -> bool:
        """Record the step once (False: recorded already). For a named execution, a step right
        after the one this process recorded last of it links to that one's chain without reading
        it: step rows are append-only (migration 012), so it is still the row before."""
        run_id, step = record.scope.run_id, record.scope.step
        last = self._step_chains.pop((run_id, execution), None) if execution else None
        previous = last[1] if last is not None and last[0] == step - 1 else None
        async with self._write_one(run_id, "steps") as conn:
            scope = await execution_of(conn, run_id, execution)
            link = await ledger_runs.insert_step(conn, record, scope, previous)
        if execution and link is not None:
            self._step_chains[(run_id, execution)] = (step, link)  # the newest last
            while len(self._step_chains) > HELD_STEP_CHAINS:
                del self._step_chains[next(iter(self._step_chains))]
        return link is not None

    async def transcript(
        self, run_id: str, upto: int, *, execution: str | None = None
    ) -> list[TranscriptEntry]:
        """The steps recorded up to `upto` (a watermark: a retried turn reads the same ones).

        For a named execution, only the entries above the steps this process read of it before
        are read (`load_entries_after` checks those are still the rows it holds); the run's
        current execution (None) is read whole."""
        if execution is None:
            async with self._read("steps") as conn:
                scope = await execution_of(conn, run_id, execution)
                return await ledger_runs.load_entries(conn, run_id, scope, upto)
        key = (run_id, execution)
        async with self._read("steps") as conn:
            held = await ledger_runs.load_entries_after(
                conn, run_id, execution, upto, self._transcripts.pop(key, None)
            )
        return self._hold(key, held)

    async def turn(
        self, run_id: str, turn: int, upto: int, *, execution: str
    ) -> tuple[Decision | None, list[TranscriptEntry]]:
        """`decision(turn)` and `transcript(upto)` of a named execution in one round trip:
        what a decide reads before it asks the model."""
        key = (run_id, execution)
        async with self._read("model_calls") as conn:
            recorded, held = await ledger_runs.load_turn(
                conn, run_id, execution, turn, upto, self._transcripts.pop(key, None)
            )
        return recorded, self._hold(key, held)

    def _hold(
        self, key: tuple[str, str], held: ledger_runs.HeldTranscript
    ) -> list[TranscriptEntry]:
        self._transcripts[key] = held  # the newest last
        while len(self._transcripts) > HELD_TRANSCRIPTS:
            del self._transcripts[next(iter(self._transcripts))]
        return list(held.entries)

    # ------------------------------------------------------------ searches

    async def record_search(
        self,
        run_id: str,
        step: int,
        query: str,
        provider: str,
        hits: list[SearchHit],
        *,
        execution: str | None = None,
    ) -> list[SearchHit]:
        """Record a search and its results once; return the results as stored."""
        async with self._write(run_id, "searches") as conn:
            scope = await execution_of(conn, run_id, execution)
            if await ledger_runs.insert_search(conn, run_id, scope, step, query, provider, hits):
                return hits
        recorded = await self.recorded_search(run_id, step, execution=scope)
        return hits if recorded is None else recorded[1]

    async def recorded_search(
        self, run_id: str, step: int, *, execution: str | None = None
    ) -> tuple[str, list[SearchHit]] | None:
        """The provider and results recorded for this step, or None when it has not run."""
        async with self._read() as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.load_search(conn, run_id, scope, step)

    # ------------------------------------------------------------ sources and windows

    async def store_source(
        self,
        run_id: str,
        source_id: str,
        page: Snapshot,
        *,
        execution: str | None = None,
        step: int | None = None,
    ) -> SourceRef:
        """Store the snapshot and its passages in one transaction; return what is stored.
        `step`: the step that read it (a reset copies the sources stored before its point)."""
        async with self._write(run_id, "sources") as conn:
            at = StoredAt(run_id, await execution_of(conn, run_id, execution), step)
            await ledger_sources.insert_source(conn, at, source_id, page)
        return await self._stored_ref(at, source_id, page.url)

    async def store_failed_source(
        self,
        run_id: str,
        source_id: str,
        url: str,
        status: str,
        error: str,
        *,
        execution: str | None = None,
        step: int | None = None,
    ) -> SourceRef:
        """Record a refused (`status="refused"`) or failed fetch, so a retry does not fetch."""
        async with self._write(run_id, "sources") as conn:
            at = StoredAt(run_id, await execution_of(conn, run_id, execution), step)
            await ledger_sources.insert_failed_source(conn, at, source_id, url, status, error)
        return await self._stored_ref(at, source_id, url)

    async def _stored_ref(self, at: StoredAt, source_id: str, url: str) -> SourceRef:
        stored = await self.source(at.run_id, source_id, url, execution=at.execution_id)
        if stored is None:  # committed a moment ago: only a concurrent delete gets here
            raise LedgerConflict(
                f"source {source_id} of run {at.run_id} vanished after it was stored"
            )
        return stored.ref

    async def source(
        self, run_id: str, source_id: str, url: str | None = None, *, execution: str | None = None
    ) -> StoredSource | None:
        """The source stored under `source_id`, else the one stored for `url`, else None."""
        async with self._read("sources") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_sources.load_source(conn, run_id, scope, source_id, url)

    async def sources(self, run_id: str, *, execution: str | None = None) -> list[SourceRef]:
        async with self._read() as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_sources.load_sources(conn, run_id, scope)

    async def window(
        self,
        run_id: str,
        source_id: str,
        offset: int = 0,
        find: str | None = None,
        size: int = 6,
        chars: int = 3_000,
        *,
        execution: str | None = None,
    ) -> ledger_sources.Window:
        """Up to `size` passages and about `chars` of text from the one containing `offset` (with
        `find`, only those that contain it, case-insensitively, or when no passage holds it whole,
        each of its words), and the offset the next window starts at (None: end)."""
        async with self._read("passages") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_sources.load_window(
                conn, run_id, scope, source_id, offset, find, size, chars
            )

    # ------------------------------------------------------------ evidence

    @asynccontextmanager
    async def writing_evidence(
        self, run_id: str, *, execution: str | None = None
    ) -> AsyncIterator[EvidenceRows]:
        """The run's evidence rows on one connection (`activities.evidence` proves a quote from
        them, then inserts it: one statement, so no transaction is held open while the quote is
        checked)."""
        async with self._write_one(run_id, "evidence") as conn:
            yield EvidenceRows(conn, run_id, await execution_of(conn, run_id, execution))

    async def evidence_rows(self, run_id: str, *, execution: str | None = None) -> list[Evidence]:
        async with self._read() as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_evidence.load_evidence(conn, run_id, scope)

    async def cited_evidence(self, run_id: str) -> list[ledger_evidence.CitedEvidence]:
        """The evidence the run's report cites, each once, with its page's URL and content hash."""
        async with self._read() as conn:
            return await ledger_evidence.load_cited(conn, run_id)

    # ------------------------------------------------------------ verdicts

    async def record_verdict(
        self,
        run_id: str,
        step: int,
        verdict: Verdict,
        provider: str,
        *,
        execution: str | None = None,
    ) -> bool:
        """Keep the verifier's verdict on one claim of the submission at `step` (once)."""
        async with self._write_one(run_id, "verdicts") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_verdicts.insert_verdict(
                conn, run_id, scope, step, verdict, provider
            )

    async def verdicts(
        self, run_id: str, step: int, *, execution: str | None = None
    ) -> dict[int, Verdict]:
        """The verdicts already recorded for the submission at `step`, by claim number."""
        async with self._read("verdicts") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_verdicts.load_step(conn, run_id, scope, step)

    async def report_verification(self, run_id: str) -> Verification:
        """How the saved report of the run's current execution had its meaning checked (a
        rerun checks as its source did); no verification when it has no report (yet)."""
        async with self._read("reports") as conn:
            scope = await execution_of(conn, run_id, None)
            return await ledger_verdicts.load_verification(conn, run_id, scope)

    # ------------------------------------------------------------ reports

    async def save_report(
        self, request: SaveReportInput, markdown: str, *, execution: str | None = None
    ) -> bool:
        """Store the report and finish the run row in one transaction; False when already saved."""
        run_id = request.scope.run_id
        async with self._write(run_id, "reports") as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.insert_report(conn, request, markdown, scope)

    async def report(self, run_id: str, *, execution: str | None = None) -> str | None:
        """The stored report's Markdown, or None when no report is saved for the run."""
        async with self._read() as conn:
            scope = await execution_of(conn, run_id, execution)
            return await ledger_runs.load_markdown(conn, run_id, scope)

    # ------------------------------------------------------------ readers (runs, export, audit)

    async def recent_runs(self, status: str | None = None, limit: int = 20) -> list[RunListing]:
        """The latest runs first, optionally only those with `status`."""
        async with self._read() as conn:
            return await ledger_review.load_recent_runs(conn, status, limit)

    async def run_rows(self, run_id: str) -> RunRows | None:
        """Every row of one run, read in one snapshot (a running run cannot change mid-read)."""
        async with self._read() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return await ledger_review.load_run_rows(conn, run_id)

    async def steps(self, run_id: str) -> list[StepRow]:
        """The step rows of the run's current execution, without the rest of its rows."""
        async with self._read("steps") as conn:
            return await ledger_review.load_steps(conn, run_id)

    # ------------------------------------------------------------ the local corpus

    async def index_corpus_document(
        self,
        url: str,
        host: str,
        title: str,
        body: str,
        prose: float = 1.0,
        cluster: str | None = None,
        headings: str = "",
    ) -> None:
        """Insert or refresh one corpus document (keyed by URL); `prose` as `prose_share`,
        `cluster` the URL its near-duplicates share (None: it has none), `headings` its section
        headings, one a line (weighed above body words)."""
        async with self._pool.connection() as conn, conn.transaction():
            await ledger_corpus.upsert_document(
                conn, url, host, title, body, prose, cluster, headings
            )

    async def remember_corpus_folder(self, host: str, folder: str, urls: list[str]) -> None:
        """Record the folder `host` was indexed from and drop its documents not in `urls`."""
        async with self._pool.connection() as conn, conn.transaction():
            await ledger_corpus.remember_folder(conn, host, folder, urls)

    async def corpus_folders(self) -> dict[str, str]:
        """Each indexed corpus host and the folder it is served from."""
        async with self._read() as conn:
            return await ledger_corpus.folders(conn)

    async def refresh_corpus_terms(self, hosts: list[str]) -> None:
        """Recount the document frequencies of `hosts` after indexing them: search weighs rare
        words by those of the hosts it searches."""
        async with self._pool.connection() as conn, conn.transaction():
            await ledger_corpus.refresh_terms(conn, hosts)

    async def search_corpus(
        self, query: str, allowed_hosts: list[str], limit: int
    ) -> list[SearchHit]:
        """Corpus documents on allowed hosts matching any word of `query`, best first."""
        async with self._read("corpus_documents") as conn:
            return await ledger_corpus.search_documents(conn, query, allowed_hosts, limit)
