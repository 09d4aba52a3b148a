"""Least privilege on a real PostgreSQL: the worker's role may read, insert and finish a run, and
nothing else; the run history refuses UPDATE, DELETE and TRUNCATE from the owner too; `research
init-db` creates the roles where it may and prints an administrator's SQL where it may not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, LiteralString
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from runtime.database import apply_migrations
from runtime.privileges import MUTABLE_COLUMNS, LedgerRoles, append_only, url_as
from starter.cli import main
from tests.fakes.postgres import drop_roles, granted_roles, rewrite_history, unique

Connection = psycopg.Connection[Any]
RUN_INSERT: LiteralString = (
    "INSERT INTO research.runs (run_id, question, brief, started_at) "
    "VALUES (%s, 'Does the worker keep to its rights?', '{}', now())"
)


@pytest.fixture
def roles(pg_url: str) -> Iterator[LedgerRoles]:
    with granted_roles(pg_url) as made:
        yield made


@pytest.fixture
def worker(pg_url: str, roles: LedgerRoles) -> Iterator[Connection]:
    with psycopg.connect(url_as(pg_url, roles.worker), autocommit=True) as conn:
        yield conn


@pytest.fixture
def run_id(worker: Connection) -> str:
    """A run the worker started: a row for the refused statements to hit."""
    run = unique("lp-run")
    worker.execute(RUN_INSERT, (run,))
    return run


def history_tables(conn: Connection) -> list[str]:
    rows = conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'research'::regnamespace "
        "AND relkind = 'r' ORDER BY relname"
    ).fetchall()
    return [str(name) for (name,) in rows if append_only(str(name))]


def refused(conn: Connection, statement: sql.Composable, *params: object) -> str:
    """The server's reason for refusing `statement`, run in a transaction that is rolled back
    whatever happens (a statement that got through must not change the shared database)."""
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as raised:  # noqa: SIM117
        with conn.transaction(force_rollback=True):
            conn.execute(statement, params)
    return str(raised.value).splitlines()[0]


def table(name: str) -> sql.Identifier:
    return sql.Identifier("research", name)


def test_the_history_tables_are_the_run_scoped_ones(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        tables = history_tables(conn)
    assert {
        "model_calls",
        "steps",
        "searches",
        "search_results",
        "sources",
        "passages",
        "evidence",
        "reports",
    } <= set(tables)
    assert "runs" not in tables and not [name for name in tables if name.startswith("corpus_")]


def test_the_trigger_function_resolves_names_in_pg_catalog_only(pg_url: str) -> None:
    """Whatever the session's search_path, no look-alike `to_jsonb` or `-` is called."""
    with psycopg.connect(pg_url) as conn:
        function = "'research.refuse_history_change()'::regprocedure"
        row = conn.execute(f"SELECT proconfig FROM pg_proc WHERE oid = {function}").fetchone()
    assert row is not None and row[0] == ["search_path=pg_catalog, pg_temp"]


def test_the_worker_may_not_update_delete_or_truncate_history(
    worker: Connection, run_id: str
) -> None:
    for name in history_tables(worker):
        where = sql.SQL("WHERE run_id = %s")
        update = sql.SQL("UPDATE {} SET run_id = run_id ").format(table(name)) + where
        delete = sql.SQL("DELETE FROM {} ").format(table(name)) + where
        for statement in (update, delete):
            assert refused(worker, statement, run_id) == f"permission denied for table {name}"
        truncate = sql.SQL("TRUNCATE {} CASCADE").format(table(name))
        assert refused(worker, truncate).startswith("permission denied for table ")


def test_the_worker_may_update_only_a_runs_mutable_columns(worker: Connection, run_id: str) -> None:
    finished = worker.execute(
        "UPDATE research.runs SET status = 'completed', stop_reason = 'coverage_gate_passed', "
        "counters = '{\"steps\": 3}', finished_at = now(), version = version + 1 "
        "WHERE run_id = %s AND version = 1",
        (run_id,),
    )
    assert finished.rowcount == 1
    for column, value in (
        ("question", "another question"),
        ("brief", "{}"),
        ("started_at", "2020-01-01T00:00:00Z"),
        ("run_id", "stolen"),
    ):
        statement = sql.SQL("UPDATE research.runs SET {} = %s WHERE run_id = %s").format(
            sql.Identifier(column)
        )
        assert refused(worker, statement, value, run_id) == "permission denied for table runs"
    delete = sql.SQL("DELETE FROM research.runs WHERE run_id = %s")
    assert refused(worker, delete, run_id) == "permission denied for table runs"
    row = worker.execute(
        "SELECT question, status FROM research.runs WHERE run_id = %s", (run_id,)
    ).fetchone()
    assert row == ("Does the worker keep to its rights?", "completed")


def test_the_worker_may_read_the_corpus_but_not_write_it(worker: Connection) -> None:
    for name in ("corpus_documents", "corpus_terms", "corpus_hosts"):
        worker.execute(sql.SQL("SELECT count(*) FROM {}").format(table(name)))
        delete = sql.SQL("DELETE FROM {} WHERE false").format(table(name))
        assert refused(worker, delete) == f"permission denied for table {name}"
    insert = sql.SQL("INSERT INTO research.schema_migrations (version) VALUES ('999_evil')")
    assert refused(worker, insert) == "permission denied for table schema_migrations"


def test_the_owner_is_refused_too_unless_it_rewrites_history_on_purpose(
    pg_url: str, run_id: str
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as owner:
        for name in history_tables(owner):
            update = sql.SQL("UPDATE {} SET run_id = run_id WHERE run_id = %s").format(table(name))
            assert refused(owner, update, run_id) == (
                f"research.{name} is append-only: its rows are never updated"
            )
            delete = sql.SQL("DELETE FROM {} WHERE run_id = %s").format(table(name))
            assert (
                refused(owner, delete, run_id)
                == f"research.{name} keeps every row: DELETE is refused"
            )
            truncate = sql.SQL("TRUNCATE {} CASCADE").format(table(name))
            assert refused(owner, truncate).endswith("keeps every row: TRUNCATE is refused")
        mutable = ", ".join(MUTABLE_COLUMNS["runs"])
        question = sql.SQL("UPDATE research.runs SET question = 'edited' WHERE run_id = %s")
        assert refused(owner, question, run_id) == (
            f"research.runs rows keep what was recorded: only {mutable} may be updated"
        )
        delete_run = sql.SQL("DELETE FROM research.runs WHERE run_id = %s")
        assert (
            refused(owner, delete_run, run_id) == "research.runs keeps every row: DELETE is refused"
        )

        rewrite_history(
            owner, "UPDATE research.runs SET question = 'edited' WHERE run_id = %s", (run_id,)
        )
        row = owner.execute("SELECT question FROM research.runs WHERE run_id = %s", (run_id,))
        assert row.fetchone() == ("edited",)


@pytest.fixture
def reviewer(pg_url: str, roles: LedgerRoles) -> Iterator[str]:
    """A reviewer's login, granted the reader role as docs/security.md says."""
    login = unique("lp_reviewer")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN IN ROLE {}").format(
                sql.Identifier(login), sql.Identifier(roles.reader)
            )
        )
    try:
        yield login
    finally:
        drop_roles(pg_url, login)


def test_the_reader_may_only_read(pg_url: str, reviewer: str, run_id: str) -> None:
    with psycopg.connect(url_as(pg_url, reviewer), autocommit=True) as reader:
        for view in ("run_summary", "evidence_trace", "cited_evidence"):
            reader.execute(sql.SQL("SELECT count(*) FROM {}").format(table(view)))
        assert reader.execute(
            "SELECT status FROM research.run_summary WHERE run_id = %s", (run_id,)
        ).fetchone() == ("running",)
        insert = sql.SQL(RUN_INSERT)
        assert refused(reader, insert, unique("lp-run")) == "permission denied for table runs"
        status = sql.SQL("UPDATE research.runs SET status = 'failed' WHERE run_id = %s")
        assert refused(reader, status, run_id) == "permission denied for table runs"


def test_a_table_a_later_migration_adds_is_covered(
    pg_url: str, roles: LedgerRoles, worker: Connection, run_id: str
) -> None:
    later, corpus = unique("lp_later"), unique("corpus_lp")
    with psycopg.connect(pg_url, autocommit=True) as owner:
        owner.execute(sql.SQL("CREATE TABLE {} (run_id text, note text)").format(table(later)))
        owner.execute(sql.SQL("CREATE TABLE {} (url text)").format(table(corpus)))
        try:
            apply_migrations(pg_url, roles)  # what every `research init-db` ends with
            worker.execute(
                sql.SQL("INSERT INTO {} VALUES (%s, 'kept')").format(table(later)), (run_id,)
            )
            assert worker.execute(
                sql.SQL("SELECT note FROM {}").format(table(later))
            ).fetchall() == [("kept",)]
            update = sql.SQL("UPDATE {} SET note = 'changed'").format(table(later))
            assert refused(worker, update) == f"permission denied for table {later}"
            assert (
                refused(owner, update)
                == f"research.{later} is append-only: its rows are never updated"
            )
            insert = sql.SQL("INSERT INTO {} VALUES ('https://x.example/')").format(table(corpus))
            assert refused(worker, insert) == f"permission denied for table {corpus}"
            owner.execute(insert)  # the corpus is the owner's to write
        finally:
            owner.execute(sql.SQL("DROP TABLE {}, {}").format(table(later), table(corpus)))


# --- research init-db: roles where it may, an administrator's SQL where it may not


def database_url(server_url: str, database: str, user: str) -> str:
    parts = urlsplit(server_url)
    return url_as(urlunsplit(parts._replace(path=f"/{database}")), user)


@pytest.fixture
def own_database(pg_url: str) -> Iterator[tuple[str, str, LedgerRoles]]:
    """An empty database owned by a login of its own (without CREATEROLE), and the role names
    its init-db will want; all of them dropped afterwards."""
    owner, database = unique("lp_owner"), unique("lp_db")
    wanted = LedgerRoles(worker=unique("lp_worker"), reader=unique("lp_reader"))
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(owner)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {} ENCODING 'UTF8' TEMPLATE template0").format(
                sql.Identifier(database), sql.Identifier(owner)
            )
        )
    try:
        yield owner, database, wanted
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))
            for name in (*wanted.names(), owner):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def init_db(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
    roles: LedgerRoles,
) -> list[str]:
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("RESEARCH_WORKER_ROLE", roles.worker)
    monkeypatch.setenv("RESEARCH_READER_ROLE", roles.reader)
    assert main(["init-db"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def test_init_db_without_createrole_prints_the_sql_for_an_administrator(
    pg_url: str,
    own_database: tuple[str, str, LedgerRoles],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner, database, wanted = own_database
    url = database_url(pg_url, database, owner)
    w, r = wanted.names()

    lines = init_db(monkeypatch, capsys, url, wanted)

    assert lines[0].startswith("applied: 001_init, ")
    assert lines[1:] == [
        f"{owner} may not create roles (it has neither CREATEROLE nor superuser), so {w} and {r} "
        "do not exist yet: an administrator can create them with this SQL, then `research "
        "init-db` again grants them their privileges.",
        f"CREATE ROLE {w} LOGIN;  -- then give it a password (psql: \\password {w}) or GRANT "
        f"{w} TO the worker's login",
        f"CREATE ROLE {r} NOLOGIN;  -- GRANT {r} TO a reviewer's login",
    ]
    with psycopg.connect(pg_url, autocommit=True) as admin:  # the administrator runs it
        assert admin.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname IN (%s, %s)", (w, r)
        ).fetchone() == (0,)
        admin.execute("\n".join(lines[2:]).encode())

    assert init_db(monkeypatch, capsys, url, wanted) == [
        "database is up to date",
        f"roles: {w} may read and insert, and update only a run's status, stop_reason, counters, "
        f"finished_at, version, execution_id, lanes, escalation; {r} may read",
    ]
    with psycopg.connect(database_url(pg_url, database, w), autocommit=True) as worker:
        worker.execute(RUN_INSERT, ("lp-run",))
        delete = sql.SQL("DELETE FROM research.runs")
        assert refused(worker, delete) == "permission denied for table runs"


def test_init_db_with_createrole_creates_the_roles(
    pg_url: str,
    own_database: tuple[str, str, LedgerRoles],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner, database, wanted = own_database
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER ROLE {} CREATEROLE").format(sql.Identifier(owner)))

    lines = init_db(monkeypatch, capsys, database_url(pg_url, database, owner), wanted)

    assert lines[1] == f"created roles: {wanted.worker}, {wanted.reader}"
    assert lines[2].startswith(f"roles: {wanted.worker} may read and insert")
    url = database_url(pg_url, database, wanted.worker)
    with psycopg.connect(url, autocommit=True) as worker:
        worker.execute(RUN_INSERT, ("lp-run",))
        assert worker.execute("SELECT current_user").fetchone() == (wanted.worker,)
        steps = sql.SQL("DELETE FROM research.steps")
        assert refused(worker, steps) == "permission denied for table steps"


def test_init_db_as_the_workers_role_is_refused_in_one_sentence(
    pg_url: str,
    roles: LedgerRoles,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", url_as(pg_url, roles.worker))
    monkeypatch.setenv("RESEARCH_WORKER_ROLE", roles.worker)
    monkeypatch.setenv("RESEARCH_READER_ROLE", roles.reader)

    assert main(["init-db"]) == 1

    database = urlsplit(pg_url).path.lstrip("/")
    assert capsys.readouterr().err == (
        "error: DATABASE_URL's login may not change the ledger's schema (permission denied for "
        f"database {database}): run `research init-db` as the ledger's owner, not as the "
        "worker's role\n"
    )
