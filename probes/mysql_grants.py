"""Check that a MySQL / MariaDB warehouse's login can do nothing but read (issue 34).

`SHOW GRANTS` for the login and, recursively, for every role granted to it: anything beyond
`SELECT` (and `SHOW VIEW`) on the schemas Docket reads is a finding naming the privilege —
`FILE`, `SUPER`, `PROCESS`, `EXECUTE`, any `CREATE…`, `INSERT`/`UPDATE`/`DELETE`, `GRANT
OPTION`, `PROXY`, any privilege held globally (`ON *.*`, even SELECT: it reads every schema)
and any privilege on the `mysql` schema. The result is a `probes.role_check.RoleCheck`, stored
on the catalogue and read before anything from a model runs, as on PostgreSQL.
"""

import re

import pymysql
from django.conf import settings
from django.utils import timezone

from probes.mysql_runner import mysql_parameters
from probes.role_check import RoleCheck

READ_PRIVILEGES = frozenset({"SELECT", "SHOW VIEW", "USAGE"})
SYSTEM_SCHEMAS = frozenset({"mysql", "performance_schema", "sys", "information_schema"})
_GRANT = re.compile(r"^GRANT (?P<privileges>.+?) ON (?P<target>.+?) TO (?P<grantee>.+?)(?P<option> WITH .*)?$", re.I)
_ROLE_GRANT = re.compile(r"^GRANT (?P<roles>(?:`[^`]+`(?:@`[^`]*`)?|'[^']+'(?:@'[^']*')?)(?:\s*,\s*.+)?) TO ", re.I)
_COLUMN_LIST = re.compile(r"\s*\([^)]*\)")


def _privileges(text: str) -> list[str]:
    """Split `SELECT (a, b), SHOW VIEW, ...` into privilege names, column lists dropped."""
    return [name.strip().upper() for name in _COLUMN_LIST.sub("", text).split(",") if name.strip()]


def _schema_of(target: str) -> str:
    schema = target.split(".", 1)[0].strip()
    return schema.strip("`'\"").replace("\\_", "_").lower()


def grant_findings(line: str) -> tuple[list[str], list[str]]:
    """Read one `SHOW GRANTS` line: (findings, roles granted by it)."""
    match = _GRANT.match(line.strip())
    if match is None:
        role = _ROLE_GRANT.match(line.strip())
        if role:
            roles = re.findall(r"`([^`]+)`(?:@`[^`]*`)?|'([^']+)'(?:@'[^']*')?", role.group("roles"))
            return [], [a or b for a, b in roles]
        return [], []
    privileges = _privileges(match.group("privileges"))
    target = match.group("target").strip()
    findings = []
    if target.upper().startswith("PROXY") or "PROXY" in privileges:
        findings.append(f"holds PROXY ({line.strip()[:120]})")
    beyond = [p for p in privileges if p not in READ_PRIVILEGES and p != "PROXY"]
    if beyond:
        findings.append(f"holds {', '.join(beyond)} on {target}")
    if target.startswith("*.*") and [p for p in privileges if p != "USAGE"]:
        findings.append(f"holds global privileges ({', '.join(p for p in privileges if p != 'USAGE')} on *.*)")
    schema = _schema_of(target)
    if schema in SYSTEM_SCHEMAS - {"information_schema"} and privileges != ["USAGE"]:
        findings.append(f"holds {', '.join(privileges)} on the {schema} schema")
    if match.group("option") and "GRANT OPTION" in match.group("option").upper():
        findings.append(f"holds GRANT OPTION on {target}")
    return findings, []


def login_findings(cursor) -> RoleCheck:
    cursor.execute("SELECT CURRENT_USER()")
    login = cursor.fetchone()[0]
    findings: list[str] = []
    seen: set[str] = set()
    queue: list[str | None] = [None]
    while queue:
        role = queue.pop(0)
        statement = "SHOW GRANTS FOR CURRENT_USER()" if role is None else f"SHOW GRANTS FOR `{role.replace('`', '``')}`"
        try:
            cursor.execute(statement)
        except pymysql.Error as exc:
            findings.append(f"its grants could not be read ({statement}: {exc.args[-1]})")
            continue
        for (line,) in cursor.fetchall():
            found, roles = grant_findings(line)
            whose = "" if role is None else f"through role {role!r}, "
            findings += [whose + finding for finding in found]
            for granted in roles:
                if granted not in seen:
                    seen.add(granted)
                    queue.append(granted)
    return RoleCheck(login_role=login, findings=findings, checked_at=timezone.now().isoformat())


def mysql_role_check(dsn: str) -> RoleCheck:
    """Connect with the warehouse's DSN and check its login (and the roles granted to it)."""
    conn = pymysql.connect(
        **mysql_parameters(dsn),
        connect_timeout=10,
        read_timeout=int(settings.WAREHOUSE_STATEMENT_TIMEOUT_S * 4) + 5,
        autocommit=True,
    )
    try:
        with conn.cursor() as cursor:
            return login_findings(cursor)
    finally:
        conn.close()
