"""Check that a PostgreSQL warehouse's login role can do nothing but read.

The role is the wall that holds whatever the guard lets through, so Docket refuses one
that could do more: superuser, CREATEROLE, CREATEDB, BYPASSRLS, REPLICATION (its own or
those of any role it belongs to), membership (direct or through other roles) of the
predefined roles that read or write server files, run programs, signal other backends or
read server settings, read every table or statistic, owning objects in the warehouse,
CREATE on any schema or on the database, any privilege beyond reading (writing a
relation, sequence values, a SECURITY DEFINER function, a foreign server — held directly,
through a role or granted to PUBLIC), and a role that does not carry the cost settings of
`probes.postgres_limits` (statement_timeout, temp_file_limit, work_mem,
hash_mem_multiplier, jit = off) or carries a larger one. The result is stored on the
catalogue (`Catalogue.role_check`) and read before anything from a model runs.
"""

from dataclasses import asdict, dataclass, field

import psycopg
from django.conf import settings
from django.utils import timezone

from probes.postgres_limits import role_config, role_setting_findings

# Predefined roles that reach outside the tables: files, programs, other sessions, settings.
DANGEROUS_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_read_all_settings",
    "pg_monitor",
    # Not named in the issue but of the same kind where the server has them.
    "pg_write_all_data",
    "pg_checkpoint",
    "pg_create_subscription",
    # Read every table, or every statistic and scan (issue 27): beyond the tables granted.
    "pg_read_all_data",
    "pg_read_all_stats",
    "pg_stat_scan_tables",
)
ATTRIBUTES = (
    ("rolsuper", "superuser"),
    ("rolcreaterole", "CREATEROLE"),
    ("rolcreatedb", "CREATEDB"),
    ("rolbypassrls", "BYPASSRLS"),
    ("rolreplication", "REPLICATION"),
)

# Every role the login role is (transitively) a member of, itself included.
ROLES_HELD = """
WITH RECURSIVE held(oid) AS (
    SELECT oid FROM pg_roles WHERE rolname = session_user
    UNION
    SELECT m.roleid FROM pg_auth_members m JOIN held h ON m.member = h.oid
)
SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls, r.rolreplication,
       r.rolname = session_user
FROM pg_roles r JOIN held h ON h.oid = r.oid
ORDER BY r.rolname
"""
DANGEROUS_HELD = """
SELECT rolname FROM pg_roles
WHERE rolname = ANY(%s) AND pg_has_role(session_user, oid, 'MEMBER')
ORDER BY rolname
"""
# Objects in the warehouse owned by the login role or by a role it belongs to.
OWNED = """
SELECT kind, name FROM (
    SELECT 'relation' AS kind, n.nspname || '.' || c.relname AS name, c.relowner AS owner
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
      AND n.nspname NOT LIKE 'pg_temp%'
    UNION ALL
    SELECT 'schema', nspname, nspowner FROM pg_namespace
    WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg_toast%'
      AND nspname NOT LIKE 'pg_temp%'
    UNION ALL
    SELECT 'function', n.nspname || '.' || p.proname, p.proowner
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL
    SELECT 'database', datname, datdba FROM pg_database WHERE datname = current_database()
) owned
WHERE pg_has_role(session_user, owner, 'MEMBER')
ORDER BY kind, name
LIMIT 21
"""
CREATE_ON_SCHEMAS = """
SELECT nspname FROM pg_namespace
WHERE has_schema_privilege(session_user, oid, 'CREATE')
  AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%'
ORDER BY nspname
"""
CREATE_ON_DATABASE = "SELECT has_database_privilege(session_user, current_database(), 'CREATE')"
# Privileges beyond reading, held directly, through a role or through PUBLIC: writing a
# relation, taking sequence values, running a SECURITY DEFINER function (it runs as its
# owner), using a foreign server.
WRITABLE = """
SELECT n.nspname || '.' || c.relname,
       array_to_string(ARRAY(SELECT p FROM unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER']) p
                             WHERE has_table_privilege(session_user, c.oid, p)), ', ')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
ORDER BY 1
"""
SEQUENCES_USABLE = """
SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'S' AND (has_sequence_privilege(session_user, c.oid, 'USAGE')
                           OR has_sequence_privilege(session_user, c.oid, 'UPDATE'))
ORDER BY 1 LIMIT 21
"""
DEFINER_FUNCTIONS = """
SELECT n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND has_function_privilege(session_user, p.oid, 'EXECUTE')
ORDER BY 1 LIMIT 21
"""
FOREIGN_SERVERS = """
SELECT srvname FROM pg_foreign_server WHERE has_server_privilege(session_user, oid, 'USAGE') ORDER BY 1 LIMIT 21
"""


@dataclass
class RoleCheck:
    """What the login role may do beyond reading; `safe` when nothing."""

    login_role: str
    findings: list[str] = field(default_factory=list)
    checked_at: str = ""
    applicable: bool = True

    @property
    def safe(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return asdict(self) | {"safe": self.safe}

    def message(self) -> str:
        return f"the warehouse's login role {self.login_role!r} can do more than read: " + "; ".join(self.findings)


class UnsafeWarehouseRole(Exception):
    """The login role of a PostgreSQL warehouse can do more than read."""

    def __init__(self, check: RoleCheck):
        super().__init__(check.message())
        self.check = check


def not_applicable() -> dict:
    """The stored check of a SQLite warehouse: a file opened read-only has no role."""
    return RoleCheck(login_role="", applicable=False, checked_at=timezone.now().isoformat()).as_dict()


def role_findings(conn) -> RoleCheck:
    """Return every way the connection's login role can do more than read."""
    findings: list[str] = []
    with conn.cursor() as cursor:
        login_role = cursor.execute("SELECT session_user").fetchone()[0]
        for name, *flags, is_login in cursor.execute(ROLES_HELD).fetchall():
            held = [label for (column, label), flag in zip(ATTRIBUTES, flags, strict=True) if flag]
            if held:
                whose = "is" if is_login else f"is a member of {name!r}, which is"
                findings.append(f"{whose} {', '.join(held)}")
        for (name,) in cursor.execute(DANGEROUS_HELD, [list(DANGEROUS_ROLES)]).fetchall():
            findings.append(f"is a member of {name}")
        owned = cursor.execute(OWNED).fetchall()
        if owned:
            listed = ", ".join(f"{kind} {name}" for kind, name in owned[:20])
            findings.append(f"owns objects in the warehouse ({listed}{', ...' if len(owned) > 20 else ''})")
        schemas = [name for (name,) in cursor.execute(CREATE_ON_SCHEMAS).fetchall()]
        if schemas:
            findings.append(f"has CREATE on schema {', '.join(schemas)}")
        if cursor.execute(CREATE_ON_DATABASE).fetchone()[0]:
            findings.append("has CREATE on the database")
        findings += privilege_findings(cursor)
        findings += role_setting_findings(role_config(cursor))
    return RoleCheck(login_role=login_role, findings=findings, checked_at=timezone.now().isoformat())


def _listed(names: list[str]) -> str:
    return ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")


def privilege_findings(cursor) -> list[str]:
    """Privileges beyond reading (direct, through a role, or granted to PUBLIC)."""
    findings = []
    written = [f"{privileges} on {name}" for name, privileges in cursor.execute(WRITABLE).fetchall() if privileges]
    if written:
        findings.append(f"can write: {_listed(written)}")
    for query, what in (
        (SEQUENCES_USABLE, "can take values of sequence"),
        (DEFINER_FUNCTIONS, "can EXECUTE SECURITY DEFINER function"),
        (FOREIGN_SERVERS, "can USE foreign server"),
    ):
        names = [name for (name,) in cursor.execute(query).fetchall()]
        if names:
            findings.append(f"{what} {_listed(names)}")
    return findings


def postgres_role_check(dsn: str) -> RoleCheck:
    """Connect with the warehouse's DSN and check its login role."""
    timeout_ms = int(settings.WAREHOUSE_STATEMENT_TIMEOUT_S * 4000)
    options = f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms}"
    with psycopg.connect(dsn, connect_timeout=10, options=options) as conn:
        try:
            return role_findings(conn)
        finally:
            conn.rollback()


def role_check_blocks(check: dict | None) -> str | None:
    """Return why a stored check stops model SQL from running, or None if it may run."""
    if check is None:
        return None
    if check.get("applicable") is False or check.get("safe"):
        return None
    if settings.WAREHOUSE_ALLOW_UNSAFE_ROLE:
        return None
    findings = "; ".join(check.get("findings") or ["unknown"])
    return (
        f"refused: the warehouse's login role {check.get('login_role')!r} can do more than read ({findings}); "
        "connect as a read-only role and run refresh_catalogue"
    )
