"""Corpus search over real documentation: latency and recall of labelled pages.

    .venv/bin/python -m bench.corpus_search [HTML_ROOT] [ROUNDS]

Indexes HTML_ROOT (default: the Python 3.11 documentation of Debian's `python3.11-doc`,
/usr/share/doc/python3.11/html) as host docs.python.org into a fresh embedded PostgreSQL, and
the PostgreSQL 15 documentation of `postgresql-doc-15` as www.postgresql.org when it is
installed (over 1,600 documents together), then asks every sub-question of
`examples/golden/python311-docs.json` ROUNDS times (default 5) through the corpus search the
agent uses, and prints p50/p95 latency and how often a labelled page is the first hit and among
the first 8; then the latency of PG_QUESTIONS (unlabelled) on the PostgreSQL host. Beside the
latencies, the CPU time a query costs PostgreSQL (its postmaster and backends, `bench.cpu`) and
this client: on a machine shared with other work, wall-clock latency follows the load, CPU time
much less. Figures only: nothing here asserts a speed. They are also written, dated, with the
machine's cores and load, to bench/results/corpus_search.json (starter.figures).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from activities.ledger import Ledger
from activities.search import index_corpus
from bench import cpu
from runtime.database import apply_migrations, open_pool, start_embedded_postgres
from runtime.settings import PROJECT_ROOT
from starter.figures import Measurement

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")
PG_ROOT = Path("/usr/share/doc/postgresql-doc-15/html")
PG_HOST = "www.postgresql.org"
PG_QUESTIONS = [
    "What does VACUUM FULL do differently from plain VACUUM?",
    "How does autovacuum decide when to vacuum a table?",
    "What isolation levels does PostgreSQL support?",
    "How do I create a partial index?",
    "What does EXPLAIN ANALYZE show?",
    "How does a hash join work?",
    "What is the default value of work_mem?",
    "How do I grant SELECT on all tables in a schema?",
    "What does the RETURNING clause of INSERT do?",
    "How does streaming replication work?",
    "What is a savepoint?",
    "How do I restore a pg_dump custom-format archive?",
    "What does shared_buffers control?",
    "How do generated columns work?",
    "What are advisory locks?",
    "How does LISTEN and NOTIFY work?",
    "What does the ON CONFLICT DO UPDATE clause do?",
    "How are TOAST values stored?",
    "What does pg_stat_statements record?",
    "How does the GIN index work for full text search?",
]
GOLDEN = PROJECT_ROOT / "examples" / "golden" / "python311-docs.json"
LIMIT = 8


async def bench(root: Path, rounds: int, with_postgres: bool) -> None:
    measurement = Measurement.begin(
        "corpus_search", f"python -m bench.corpus_search {root} {rounds}"
    )
    figures: dict[str, object] = {}
    golden = json.loads(GOLDEN.read_text())
    host = golden["host"]
    questions = [question for brief in golden["briefs"] for question in brief["questions"]]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        (corpus / host).symlink_to(root)
        if with_postgres:
            (corpus / PG_HOST).symlink_to(PG_ROOT)
        server, url = start_embedded_postgres(Path(scratch) / "pg")
        try:
            apply_migrations(url)
            pool = await open_pool(url)
            ledger = Ledger(pool)
            started = time.perf_counter()
            count = await index_corpus(ledger, corpus, max_chars=200_000)
            seconds = time.perf_counter() - started
            print(f"indexed {count} documents in {seconds:.1f} s")
            figures |= {"documents": count, "index_seconds": round(seconds, 1)}
            state = Path(scratch)
            figures[host] = await _measure(ledger, host, questions, rounds, state)
            if with_postgres:
                figures[PG_HOST] = await _latency(ledger, PG_HOST, PG_QUESTIONS, rounds, state)
            await pool.close()
        finally:
            server.cleanup()
    print(f"wrote {measurement.write(figures)}")


def _cpu_a_query(before: cpu.Snapshot, state: Path, queries: int) -> dict[str, float | None]:
    """Mean CPU ms a query of PostgreSQL and of this client since `before`."""
    used = cpu.used(before, cpu.snapshot(state))
    return {
        f"{key}_cpu_ms_per_query": round(used[group] * 1000 / queries, 1) if group in used else None
        for key, group in (("postgres", cpu.DATABASE), ("client", cpu.THIS))
    }


async def _measure(
    ledger: Ledger, host: str, questions: list[dict[str, object]], rounds: int, state: Path
) -> dict[str, object]:
    latencies: list[float] = []
    first = within = 0
    before = cpu.snapshot(state)
    for question in questions:
        wanted = {f"https://{host}/{page}" for page in list(question["pages"])}
        for round_ in range(rounds):
            started = time.perf_counter()
            hits = await ledger.search_corpus(str(question["text"]), [host], LIMIT)
            latencies.append((time.perf_counter() - started) * 1000)
            if round_ == 0:
                urls = [hit.url for hit in hits]
                first += bool(urls) and urls[0] in wanted
                within += bool(wanted & set(urls))
    used = _cpu_a_query(before, state, len(latencies))
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"queries: {len(questions)} x {rounds}")
    print(f"latency: p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms")
    print(f"CPU a query: PostgreSQL {used['postgres_cpu_ms_per_query']} ms, "
          f"client {used['client_cpu_ms_per_query']} ms")  # fmt: skip
    print(f"labelled page first: {first} of {len(questions)}; in the top {LIMIT}: {within}")
    return {
        "queries": len(questions),
        "rounds": rounds,
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(p95, 1),
        **used,
        "labelled_page_first": first,
        f"labelled_page_in_top_{LIMIT}": within,
    }


async def _latency(
    ledger: Ledger, host: str, questions: list[str], rounds: int, state: Path
) -> dict[str, object]:
    latencies: list[float] = []
    before = cpu.snapshot(state)
    for question in questions:
        for _ in range(rounds):
            started = time.perf_counter()
            await ledger.search_corpus(question, [host], LIMIT)
            latencies.append((time.perf_counter() - started) * 1000)
    used = _cpu_a_query(before, state, len(latencies))
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"{host}: {len(questions)} questions x {rounds}")
    print(f"latency: p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms")
    return {
        "queries": len(questions),
        "rounds": rounds,
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(p95, 1),
        **used,
    }


if __name__ == "__main__":
    arguments = sys.argv[1:]
    asyncio.run(
        bench(
            Path(arguments[0]) if arguments else DEFAULT_ROOT,
            int(arguments[1]) if len(arguments) > 1 else 5,
            PG_ROOT.is_dir(),
        )
    )
