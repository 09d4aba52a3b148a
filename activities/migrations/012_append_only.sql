-- 012_append_only: a run's history is never rewritten, whoever asks.
--
-- Grants keep the worker's role to INSERT and SELECT, and to UPDATE of a run row's mutable
-- columns; they cannot bind the tables' owner or a superuser. This trigger function can: attached
-- to a history table (steps, model calls, searches, sources, passages, evidence, reports, ...) it
-- refuses every UPDATE, DELETE and TRUNCATE; attached to a table with mutable columns (runs),
-- named as the trigger's arguments, it refuses a change to any other column and every delete.
-- `runtime.privileges` attaches it after every migration to every ledger table but the corpus
-- (so a table a later migration adds is covered too): its lists say which columns may change.
--
-- A migration may still rewrite history (a backfill): apply_migrations sets
-- research.rewrite_history for the migrations' transactions, and only the tables' owner is let
-- through with it (the owner could as well disable the trigger: this guards against mistakes and
-- code, while the hash chains make a deliberate edit visible).
CREATE OR REPLACE FUNCTION research.refuse_history_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('research.rewrite_history', true) = 'on'
       AND pg_has_role(current_user,
                       (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;  -- NULL for a statement-level trigger, which PostgreSQL ignores
    END IF;
    IF TG_OP = 'UPDATE' AND TG_NARGS > 0 THEN
        IF (to_jsonb(NEW) - TG_ARGV) = (to_jsonb(OLD) - TG_ARGV) THEN
            RETURN NEW;  -- only columns named as mutable changed
        END IF;
        RAISE EXCEPTION 'research.% rows keep what was recorded: only % may be updated',
            TG_TABLE_NAME, array_to_string(TG_ARGV, ', ')
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'research.% is append-only: its rows are never updated', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'research.% keeps every row: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
