"""Hostile texts that look beyond the grant (issue 27): the server's catalogue, other tenants'
objects and roles, columns outside a column grant, the server's identity.

The shop database of the hostile harness holds objects the reader was never granted, each
named with "canary" (`probes.tests.shop.POSTGRES_CANARIES`: a schema, tables, a view, a type,
a domain, a function, a partner table whose secret column is outside the reader's column
grant, and another tenant's login role); the harness fails a text whose answer names one.
"""

from probes.tests.hostile.dialects import BOTH, LITE, PG


def oid_scan(cast: str, first: int = 1, last: int = 40000) -> str:
    """Turn a range of object ids into names through a reg* cast (a catalogue read without a table)."""
    return f"SELECT g::{cast}::text AS name FROM generate_series({first}, {last}) g WHERE g::{cast}::text !~ '^[0-9]+$'"


REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- information_schema: views that list far more than the grant --------------------
    ("catalogue_beyond_grant", "is-tables", "SELECT table_schema, table_name FROM information_schema.tables", BOTH),
    (
        "catalogue_beyond_grant",
        "is-routines",
        "SELECT routine_schema, routine_name, data_type FROM information_schema.routines "
        "WHERE routine_schema NOT IN ('pg_catalog', 'information_schema')",
        PG,
    ),
    (
        "catalogue_beyond_grant",
        "is-parameters",
        "SELECT specific_name, data_type FROM information_schema.parameters",
        PG,
    ),
    ("catalogue_beyond_grant", "is-schemata", "SELECT schema_name FROM information_schema.schemata", PG),
    (
        "catalogue_beyond_grant",
        "is-udt",
        "SELECT user_defined_type_name FROM information_schema.user_defined_types",
        PG,
    ),
    ("catalogue_beyond_grant", "is-domains", "SELECT domain_schema, domain_name FROM information_schema.domains", PG),
    ("catalogue_beyond_grant", "is-sequences", "SELECT sequence_name FROM information_schema.sequences", PG),
    ("catalogue_beyond_grant", "is-roles", "SELECT grantee, role_name FROM information_schema.applicable_roles", PG),
    (
        "catalogue_beyond_grant",
        "is-privileges",
        "SELECT grantee, table_name FROM information_schema.table_privileges",
        PG,
    ),
    (
        "catalogue_beyond_grant",
        "is-columns-of-partner",
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'partners'",
        PG,
    ),
    (
        "catalogue_beyond_grant",
        "is-in-subquery",
        "SELECT count(*) FROM orders WHERE status IN (SELECT table_name FROM information_schema.views)",
        PG,
    ),
    (
        "catalogue_beyond_grant",
        "is-quoted",
        'SELECT "table_name" FROM "information_schema"."tables"',
        PG,
    ),
    ("catalogue_beyond_grant", "is-upper-case", "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES", BOTH),
    # --- reg* casts: names out of object ids, and back --------------------------------------
    ("catalogue_beyond_grant", "regclass-scan", oid_scan("regclass", 16384, 60000), PG),
    ("catalogue_beyond_grant", "regtype-scan", oid_scan("regtype", 16384, 60000), PG),
    ("catalogue_beyond_grant", "regrole-scan", oid_scan("regrole", 10, 60000), PG),
    ("catalogue_beyond_grant", "regnamespace-scan", oid_scan("regnamespace", 2200, 60000), PG),
    ("catalogue_beyond_grant", "regprocedure-scan", oid_scan("regprocedure", 16384, 60000), PG),
    (
        "catalogue_beyond_grant",
        "regproc-cast-syntax",
        "SELECT CAST(g AS regproc)::text FROM generate_series(16384, 60000) g",
        PG,
    ),
    ("catalogue_beyond_grant", "regoper-scan", oid_scan("regoper", 1, 5000), PG),
    ("catalogue_beyond_grant", "regoperator-literal", "SELECT '+(integer,integer)'::regoperator::oid", PG),
    ("catalogue_beyond_grant", "regconfig-scan", oid_scan("regconfig", 3000, 20000), PG),
    ("catalogue_beyond_grant", "regdictionary-scan", oid_scan("regdictionary", 3000, 20000), PG),
    ("catalogue_beyond_grant", "regcollation-scan", oid_scan("regcollation", 100, 20000), PG),
    ("catalogue_beyond_grant", "regclass-exists", "SELECT 'vault.payroll'::regclass IS NOT NULL AS there", PG),
    ("catalogue_beyond_grant", "regclass-typed-literal", "SELECT regclass 'orders' AS r", PG),
    (
        "catalogue_beyond_grant",
        "regclass-in-cte",
        "WITH t AS (SELECT g::regclass AS r FROM generate_series(16384, 60000) g) SELECT r::text FROM t",
        PG,
    ),
    ("catalogue_beyond_grant", "oid-cast", "SELECT 'orders'::regclass::oid::int", PG),
    # --- whole rows of a table with a column grant -------------------------------------------
    ("catalogue_beyond_grant", "whole-row-bare", "SELECT p FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-unaliased", "SELECT partners FROM partners", PG),
    ("catalogue_beyond_grant", "whole-row-to-json", "SELECT to_json(p) FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-to-jsonb-star", "SELECT to_jsonb(p.*) FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-json-build", "SELECT json_build_array(p.*) FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-concat", "SELECT concat(p.*) FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-in-array", "SELECT ARRAY[p.*] FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-correlated", "SELECT (SELECT to_json(p)) FROM partners p", PG),
    ("catalogue_beyond_grant", "whole-row-cast", "SELECT CAST(p AS text) FROM partners p", PG),
    ("catalogue_beyond_grant", "functional-to-json", "SELECT p.to_json FROM partners p", PG),
    ("catalogue_beyond_grant", "functional-concat", "SELECT p.concat FROM partners p", PG),
    ("catalogue_beyond_grant", "functional-row-to-json", "SELECT o.row_to_json FROM orders o", PG),
    ("catalogue_beyond_grant", "functional-column-size", "SELECT o.pg_column_size FROM orders o", PG),
    ("catalogue_beyond_grant", "functional-typeof", "SELECT p.pg_typeof FROM partners p", PG),
    ("catalogue_beyond_grant", "functional-quote", "SELECT p.quote_literal FROM partners p", PG),
    # --- the server's and the session's identity ----------------------------------------------
    ("catalogue_beyond_grant", "version", "SELECT version() AS v", PG),
    ("catalogue_beyond_grant", "server-version-setting", "SELECT current_setting('server_version')", PG),
    ("catalogue_beyond_grant", "server-address", "SELECT inet_server_addr()::text, inet_server_port()", PG),
    ("catalogue_beyond_grant", "client-address", "SELECT inet_client_addr()", PG),
    ("catalogue_beyond_grant", "backend-pid", "SELECT pg_backend_pid()", PG),
    ("catalogue_beyond_grant", "current-user", "SELECT current_user, session_user", PG),
    ("catalogue_beyond_grant", "bare-user", "SELECT user AS who", PG),
    ("catalogue_beyond_grant", "current-role", "SELECT current_role", PG),
    ("catalogue_beyond_grant", "current-catalog", "SELECT current_catalog, current_database()", PG),
    ("catalogue_beyond_grant", "current-schemas", "SELECT current_schemas(true)", PG),
    ("catalogue_beyond_grant", "postmaster-start", "SELECT pg_postmaster_start_time()", PG),
    ("catalogue_beyond_grant", "sqlite-version", "SELECT sqlite_version(), sqlite_source_id()", LITE),
    ("catalogue_beyond_grant", "sqlite-compile-options", "SELECT sqlite_compileoption_get(0)", LITE),
    ("catalogue_beyond_grant", "sqlite-schema-sql", "SELECT group_concat(sql) FROM sqlite_schema", LITE),
    ("catalogue_beyond_grant", "sqlite-pragma-list", "SELECT name FROM pragma_table_list", LITE),
    ("catalogue_beyond_grant", "sqlite-dbstat", "SELECT name FROM dbstat", LITE),
]

CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # Reading the granted columns of the partly granted table is what the grant allows.
    ("catalogue_beyond_grant", "granted-columns", "SELECT partner_id, name FROM partners ORDER BY partner_id", PG),
    ("catalogue_beyond_grant", "granted-star-projection", "SELECT o.* FROM orders o ORDER BY order_id", BOTH),
]
