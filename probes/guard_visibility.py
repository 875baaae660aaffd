"""What a text may see: the tables it was granted, never the server's catalogue or identity.

The warehouse's privileges decide which rows and columns a role reads; the server's own
catalogue shows any login far more (issue 27: `information_schema` and `reg*` casts listed
other tenants' tables, functions, types and login roles). The guard refuses, on the tree:

- a system catalogue: `pg_catalog`, `pg_*`, `sqlite_*`, `dbstat`, and `information_schema`
  (its views list routines, types, roles and schemas beyond the grant; the schema Docket
  shows a judge is the catalogue, introspected by Docket itself through the grant);
- a cast to an object-identifier type (`::regclass`, `regrole`, `regnamespace`, `regproc`,
  `regprocedure`, `regtype`, `regoper`, `regoperator`, `regconfig`, `regdictionary`,
  `regcollation`, `oid`): each turns a name into a catalogue lookup or back;
- a whole-row reference to a table (`SELECT t FROM t`, `row_to_json(t)`, `t.*` inside a
  call): with column grants it would read every column;
- PostgreSQL's functional notation (`t.row_to_json`, `t.pg_column_size`), which sqlglot reads
  as a column but PostgreSQL as a call of the function on the whole row;
- the session-identity keywords PostgreSQL reads as functions though sqlglot reads a column
  (`user`, `current_role`, ...). The server-identity functions themselves (`version()`,
  `current_setting`, `inet_server_addr`, `pg_backend_pid`, `current_user`, `session_user`,
  `current_database`, `sqlite_version`) are simply not on the allow-list.
"""

from sqlglot import exp

# Functions PostgreSQL would call on a whole row written as `rel.name` (one argument of type
# record, anyelement, "any" or anycompatible, from pg_proc of PostgreSQL 15, and the common
# extension ones). Window and ordered-set ones (`t.rank`, `t.count`, ...) are left out: they
# cannot run that way, and real tables have columns so named (defog's checkin.count).
_FUNCTIONAL_NAMES = """any_out anycompatible_out anycompatiblenonarray_out anyelement_out anynonarray_out
    array_agg concat hash_record json_agg json_build_array json_build_object jsonb_agg jsonb_build_array
    jsonb_build_object num_nonnulls num_nulls pg_collation_for pg_column_compression pg_column_size pg_typeof
    quote_literal quote_nullable record_out record_send row_to_json to_json to_jsonb hstore populate_record
    row_to_jsonb xmlforest"""
FUNCTIONAL_NOTATION = frozenset(_FUNCTIONAL_NAMES.split())
# Unquoted words PostgreSQL reads as the session's identity, not as a column.
IDENTITY_KEYWORDS = frozenset(
    {"user", "current_role", "current_user", "session_user", "current_catalog", "system_user"}
)


def catalogue_refusal(node: exp.Table) -> str | None:
    """Refuse a system catalogue or information_schema as a relation."""
    name, schema = node.name.lower(), (node.db or "").lower()
    label = f"{node.db}.{node.name}" if node.db else node.name
    if schema == "information_schema" or name == "information_schema":
        return (
            f"reading the catalogue ({label}) is not allowed: information_schema lists objects beyond what the "
            "role may read; the schema Docket shows is the warehouse's catalogue"
        )
    if (
        schema.startswith("pg_")
        or name.startswith(("pg_", "sqlite_", "pragma_"))
        or name in ("dbstat", "sqlite_dbpage")
    ):
        return f"reading the system catalogue ({label}) is not allowed"
    return None


def cast_refusal(node: exp.Cast) -> str | None:
    """Refuse a cast to an object-identifier type (a catalogue lookup by name or number)."""
    target = node.args.get("to")
    if isinstance(target, exp.ObjectIdentifier) or (
        isinstance(target, exp.DataType) and target.sql().lower().lstrip('"').startswith("reg")
    ):
        return f"a cast to an object-identifier type ({target.sql().lower()}) reads the system catalogue; not allowed"
    return None


def _sources(select: exp.Select) -> list[exp.Expression]:
    from_ = select.args.get("from_")
    return ([from_.this] if from_ else []) + [join.this for join in select.args.get("joins") or []]


def names_a_table_row(column: exp.Column, ctes: frozenset[str]) -> bool:
    """Whether a bare name is, where it stands, a whole row of a base table in scope.

    The scopes are searched innermost first; a derived table or CTE with a column so named
    (as PostgreSQL resolves it) ends the search.
    """
    name = column.name.lower()
    select = column.find_ancestor(exp.Select)
    while select is not None:
        for source in _sources(select):
            alias = source.alias_or_name.lower()
            if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
                if alias == name and not (source.name.lower() in ctes and not source.db):
                    return True
            elif isinstance(source, exp.Subquery) and name in _output_names(source.this):
                return False
        select = select.find_ancestor(exp.Select)
    return False


def _output_names(query: exp.Expression) -> set[str]:
    return {p.alias_or_name.lower() for p in query.expressions} if isinstance(query, exp.Select) else set()


def cte_names(tree: exp.Expression) -> frozenset[str]:
    return frozenset(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))


def column_refusal(node: exp.Column, dialect: str, ctes: frozenset[str]) -> str | None:
    """Refuse a whole-row reference, PostgreSQL functional notation or an identity keyword."""
    qualifier = node.table.lower() if node.table else ""
    if isinstance(node.this, exp.Star):
        parent = node.parent
        if qualifier and not isinstance(parent, exp.Select):
            return f"a whole-row reference to ({node.table}) as {node.table}.* inside an expression; name the columns"
        return None
    name = node.name.lower()
    quoted = isinstance(node.this, exp.Identifier) and node.this.quoted
    if not qualifier and names_a_table_row(node, ctes):
        return f"a whole-row reference to a table ({node.name}) reads every column; name the columns"
    if dialect == "postgres" and qualifier and not quoted and name in FUNCTIONAL_NOTATION:
        return f"PostgreSQL reads ({node.table}.{node.name}) as {name}({node.table}), a call on the whole row"
    if dialect == "postgres" and not qualifier and not quoted and name in IDENTITY_KEYWORDS:
        return f"the session's identity ({name}) is not allowed"
    return None
