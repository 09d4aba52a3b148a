-- 013_trigger_search_path: the append-only trigger function resolves every name it uses
-- (to_jsonb, the jsonb `-` operator, pg_has_role, pg_class) in pg_catalog only, whatever the
-- session's search_path: a role that could create a look-alike function or operator in a schema
-- searched first cannot make the trigger let a change through.
ALTER FUNCTION research.refuse_history_change() SET search_path = pg_catalog, pg_temp;
