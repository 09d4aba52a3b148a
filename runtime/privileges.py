"""Least privilege for the ledger: the worker's and the reader's roles, their grants, and the
append-only triggers that bind even the tables' owner.

Who may do what (docs/security.md, "Least privilege", says it for people):
- the owner (whoever runs the migrations, `research init-db`): owns the schema, writes the corpus;
- the worker role: SELECT and INSERT on the ledger, UPDATE of MUTABLE_COLUMNS only, SELECT on the
  corpus and the migrations' bookkeeping;
- the reader role: SELECT.
Every table that is neither the corpus (`corpus_*`), the bookkeeping nor in MUTABLE_COLUMNS is
run history: append-only for everyone, by grants for the roles and by a trigger for the owner.
Grants and triggers are applied after every migration, so tables a later migration adds are
covered without naming them here.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any, LiteralString
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from runtime.settings import Settings

SCHEMA = "research"
# The columns a writer may change once a row is written; a table not named here is append-only.
MUTABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": (
        "status",
        "stop_reason",
        "counters",
        "finished_at",
        "version",
        "execution_id",
        "lanes",
        "escalation",
    ),
}
BOOKKEEPING = "schema_migrations"
# Set (transaction-local) by apply_migrations: the owner's migrations may rewrite history.
REWRITE_HISTORY = "research.rewrite_history"
_APPEND_ONLY_TRIGGER = "append_only"
_FIXED_COLUMNS_TRIGGER = "fixed_columns"
_NO_TRUNCATE_TRIGGER = "no_truncate"


@dataclass(frozen=True)
class LedgerRoles:
    worker: str = "research_worker"
    reader: str = "research_reader"

    @classmethod
    def of(cls, settings: Settings) -> LedgerRoles:
        return cls(worker=settings.worker_role, reader=settings.reader_role)

    def names(self) -> tuple[str, str]:
        return self.worker, self.reader


@dataclass(frozen=True)
class RoleSetup:
    """What `create_missing_roles` found: roles it created, and roles it may not create."""

    login: str
    roles: LedgerRoles
    created: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """What `research init-db` prints about the roles."""
        if self.missing:
            return [self._why_missing(), *admin_sql(self.roles, self.missing)]
        created = [f"created roles: {', '.join(self.created)}"] if self.created else []
        return [
            *created,
            f"roles: {self.roles.worker} may read and insert, and update only a run's "
            f"{', '.join(MUTABLE_COLUMNS['runs'])}; {self.roles.reader} may read",
        ]

    def _why_missing(self) -> str:
        return (
            f"{self.login} may not create roles (it has neither CREATEROLE nor superuser), so "
            f"{' and '.join(self.missing)} do not exist yet: an administrator can create them "
            "with this SQL, then `research init-db` again grants them their privileges."
        )


def admin_sql(roles: LedgerRoles, missing: tuple[str, ...]) -> list[str]:
    """The SQL an administrator runs to create the missing roles; no password in it."""
    statements = []
    if roles.worker in missing:
        statements.append(
            f"CREATE ROLE {roles.worker} LOGIN;  -- then give it a password "
            f"(psql: \\password {roles.worker}) or GRANT {roles.worker} TO the worker's login"
        )
    if roles.reader in missing:
        statements.append(
            f"CREATE ROLE {roles.reader} NOLOGIN;  -- GRANT {roles.reader} TO a reviewer's login"
        )
    return statements


def url_as(url: str, user: str) -> str:
    """The database URL `url` signing in as `user` (no password: the embedded server trusts its
    socket's users)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(user, safe='')}@{host}"))


def create_missing_roles(conn: psycopg.Connection[Any], roles: LedgerRoles) -> RoleSetup:
    """Create the roles that do not exist, when this login may (CREATEROLE or superuser)."""
    login = _scalar(conn, "SELECT current_user")
    absent = tuple(name for name in roles.names() if not role_exists(conn, name))
    if not absent:
        return RoleSetup(login=login, roles=roles)
    if not _scalar(
        conn, "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = %s", login
    ):
        return RoleSetup(login=login, roles=roles, missing=absent)
    for name in absent:
        login_option = sql.SQL("LOGIN" if name == roles.worker else "NOLOGIN")
        with suppress(psycopg.errors.DuplicateObject):  # another init-db made it just now
            conn.execute(sql.SQL("CREATE ROLE {} {}").format(sql.Identifier(name), login_option))
    return RoleSetup(login=login, roles=roles, created=absent)


def role_exists(conn: psycopg.Connection[Any], name: str) -> bool:
    return bool(_scalar(conn, "SELECT count(*) FROM pg_roles WHERE rolname = %s", name))


def secure_ledger(conn: psycopg.Connection[Any], roles: LedgerRoles) -> None:
    """Attach the append-only triggers to every ledger table and grant each existing role its
    privileges, revoking any other (call inside a transaction, as the tables' owner)."""
    tables = _tables(conn)
    for table in tables:
        _protect(conn, table)
    for role in roles.names():
        if role_exists(conn, role):
            _grant(conn, role, tables, may_write=role == roles.worker)


def append_only(table: str) -> bool:
    return not (table in MUTABLE_COLUMNS or table == BOOKKEEPING or corpus_table(table))


def corpus_table(table: str) -> bool:
    """The local corpus: written by the owner (`research corpus index`), read by the worker."""
    return table.startswith("corpus_")


def _tables(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') ORDER BY c.relname",
        (SCHEMA,),
    ).fetchall()
    return [str(name) for (name,) in rows]


def _protect(conn: psycopg.Connection[Any], table: str) -> None:
    target = sql.Identifier(SCHEMA, table)
    function = sql.Identifier(SCHEMA, "refuse_history_change")
    triggers = _triggers(conn, table)
    if append_only(table) and _APPEND_ONLY_TRIGGER not in triggers:
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER {} BEFORE UPDATE OR DELETE OR TRUNCATE ON {} "
                "FOR EACH STATEMENT EXECUTE FUNCTION {}()"
            ).format(sql.Identifier(_APPEND_ONLY_TRIGGER), target, function)
        )
    columns = MUTABLE_COLUMNS.get(table)
    if columns is None:
        return
    if triggers.get(_FIXED_COLUMNS_TRIGGER) != list(columns):
        if _FIXED_COLUMNS_TRIGGER in triggers:  # the mutable columns changed: replace it
            conn.execute(
                sql.SQL("DROP TRIGGER {} ON {}").format(
                    sql.Identifier(_FIXED_COLUMNS_TRIGGER), target
                )
            )
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER {} BEFORE UPDATE OR DELETE ON {} "
                "FOR EACH ROW EXECUTE FUNCTION {}({})"
            ).format(
                sql.Identifier(_FIXED_COLUMNS_TRIGGER),
                target,
                function,
                sql.SQL(", ").join(sql.Literal(column) for column in columns),
            )
        )
    if _NO_TRUNCATE_TRIGGER not in triggers:
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER {} BEFORE TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION {}()"
            ).format(sql.Identifier(_NO_TRUNCATE_TRIGGER), target, function)
        )


def _triggers(conn: psycopg.Connection[Any], table: str) -> dict[str, list[str]]:
    """The table's own triggers and their arguments."""
    rows = conn.execute(
        "SELECT t.tgname, t.tgargs FROM pg_trigger t "
        "WHERE t.tgrelid = %s::regclass AND NOT t.tgisinternal",
        (f"{SCHEMA}.{table}",),
    ).fetchall()
    return {
        str(name): [arg.decode() for arg in bytes(args).split(b"\0")[:-1]] for name, args in rows
    }


def _grant(conn: psycopg.Connection[Any], role: str, tables: list[str], *, may_write: bool) -> None:
    who = sql.Identifier(role)
    schema = sql.Identifier(SCHEMA)
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, who))
    # Views are tables to GRANT: SELECT on all of them, nothing else.
    for statement in (
        "REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}",
        "REVOKE ALL ON ALL SEQUENCES IN SCHEMA {} FROM {}",
        "GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}",
    ):
        conn.execute(sql.SQL(statement).format(schema, who))
    if not may_write:
        return
    writable = [table for table in tables if append_only(table) or table in MUTABLE_COLUMNS]
    if writable:
        conn.execute(
            sql.SQL("GRANT INSERT ON {} TO {}").format(
                sql.SQL(", ").join(sql.Identifier(SCHEMA, table) for table in writable), who
            )
        )
    for table, columns in MUTABLE_COLUMNS.items():
        if table in tables:
            conn.execute(
                sql.SQL("GRANT UPDATE ({}) ON {} TO {}").format(
                    sql.SQL(", ").join(map(sql.Identifier, columns)),
                    sql.Identifier(SCHEMA, table),
                    who,
                )
            )
    conn.execute(
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(schema, who)
    )


def _scalar(conn: psycopg.Connection[Any], query: LiteralString, *params: object) -> Any:
    row = conn.execute(query, params).fetchone()
    return row[0] if row else None
