"""What a PostgreSQL session running model SQL may cost: per session, and carried by the role.

PostgreSQL has no per-statement memory limit, so the bounds are the server's own knobs:
`work_mem` × `hash_mem_multiplier` per sort or hash before it spills to disk,
`temp_file_limit` on what spills, `jit = off` (compiling a many-grouping-set plan took
24–37 s), no parallel workers (each would have its own `work_mem` and temp files), and
`statement_timeout`. Docket sets them for each session it opens (`session_options`;
`temp_file_limit` only a superuser may set per session), and the reader role carries them
itself (`ALTER ROLE ... SET`, `role_statements`), so they hold for any session of that
login. `role_setting_findings` is the role check's part: it names a setting the role lacks
or carries larger than Docket allows.

The SQLite counterpart is `probes.sqlite_runner.current_sqlite_limits` (a process of its own
per query); a new dialect gets a module like this one for its own knobs.
"""

import re
from dataclasses import dataclass

from django.conf import settings
from psycopg import sql


@dataclass(frozen=True)
class RoleSetting:
    """One setting the reader role must carry: its name, the most allowed, how to read it."""

    name: str
    maximum: float  # in the setting's base unit (kB for memory, ms for time); jit: 0 (off)
    kind: str  # "memory" | "time" | "number" | "off"
    setting: str  # the Docket setting that bounds it, named in findings


def role_settings() -> tuple[RoleSetting, ...]:
    """The settings a reader role must carry, with the largest value each may have."""
    return (
        RoleSetting(
            "statement_timeout",
            settings.WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S * 1000,
            "time",
            "WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S",
        ),
        RoleSetting(
            "temp_file_limit", settings.WAREHOUSE_PG_TEMP_FILE_LIMIT_KB, "memory", "WAREHOUSE_PG_TEMP_FILE_LIMIT_KB"
        ),
        RoleSetting("work_mem", settings.WAREHOUSE_PG_WORK_MEM_KB, "memory", "WAREHOUSE_PG_WORK_MEM_KB"),
        RoleSetting(
            "hash_mem_multiplier",
            settings.WAREHOUSE_PG_HASH_MEM_MULTIPLIER,
            "number",
            "WAREHOUSE_PG_HASH_MEM_MULTIPLIER",
        ),
        RoleSetting("jit", 0, "off", "jit = off"),
    )


def role_values() -> dict[str, str]:
    """The values `load_demo_warehouse` gives a reader role (each the most Docket allows)."""
    return {
        "statement_timeout": f"{int(settings.WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S * 1000)}ms",
        "temp_file_limit": f"{int(settings.WAREHOUSE_PG_TEMP_FILE_LIMIT_KB)}kB",
        "work_mem": f"{int(settings.WAREHOUSE_PG_WORK_MEM_KB)}kB",
        "hash_mem_multiplier": f"{float(settings.WAREHOUSE_PG_HASH_MEM_MULTIPLIER):g}",
        "jit": "off",
    }


def role_statements(role: str) -> list[sql.Composed]:
    """`ALTER ROLE role SET name = value` for each cost setting (run by a superuser)."""
    return [
        sql.SQL("ALTER ROLE {} SET {} = {}").format(sql.Identifier(role), sql.Identifier(name), sql.Literal(value))
        for name, value in role_values().items()
    ]


def session_options() -> list[str]:
    """`-c` options of every connection Docket opens to a PostgreSQL warehouse."""
    return [
        f"-c work_mem={int(settings.WAREHOUSE_PG_WORK_MEM_KB)}kB",
        f"-c hash_mem_multiplier={float(settings.WAREHOUSE_PG_HASH_MEM_MULTIPLIER):g}",
        "-c jit=off",
        "-c max_parallel_workers_per_gather=0",
    ]


def superuser_statements() -> list[str]:
    """What only a superuser session may set for itself (the unsafe-role case)."""
    return [f"SET temp_file_limit = '{int(settings.WAREHOUSE_PG_TEMP_FILE_LIMIT_KB)}kB'"]


# --- reading the role's own settings -----------------------------------------------------

# The role's settings: this database's entries first (they take precedence), then the
# role's everywhere, then the database's for every role.
ROLE_CONFIG = """
SELECT CASE WHEN s.setrole <> 0 AND s.setdatabase <> 0 THEN 0 WHEN s.setrole <> 0 THEN 1 ELSE 2 END AS rank,
       unnest(s.setconfig)
FROM pg_db_role_setting s
WHERE (s.setrole = (SELECT oid FROM pg_roles WHERE rolname = session_user) OR s.setrole = 0)
  AND (s.setdatabase = 0 OR s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()))
  AND NOT (s.setrole = 0 AND s.setdatabase = 0)
ORDER BY rank DESC
"""
_UNITS = {
    "memory": {"b": 1 / 1024, "kb": 1, "mb": 1024, "gb": 1024**2, "tb": 1024**3},
    "time": {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000},
}
_VALUE = re.compile(r"^\s*(-?[\d.]+)\s*([a-zA-Z]*)\s*$")


def parse_setting(value: str, kind: str) -> float | None:
    """Read a setting's text in its base unit (kB, ms); None if it cannot be read."""
    if kind == "off":
        return 0 if value.strip().lower() in ("off", "false", "no", "0") else 1
    match = _VALUE.match(value)
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2).lower()
    if kind == "number":
        return number if not unit else None
    factor = _UNITS[kind].get(unit or ("kb" if kind == "memory" else "ms"))
    return None if factor is None else number * factor


def role_config(cursor) -> dict[str, str]:
    """The settings in force for this login role on this database, as PostgreSQL would apply them."""
    config: dict[str, str] = {}
    for _rank, entry in cursor.execute(ROLE_CONFIG).fetchall():
        name, _, value = entry.partition("=")
        config[name.lower()] = value  # later (higher precedence) entries replace earlier ones
    return config


def role_setting_findings(config: dict[str, str]) -> list[str]:
    """Name each cost setting the role lacks or carries larger than Docket allows."""
    findings = []
    for wanted in role_settings():
        raw = config.get(wanted.name)
        if raw is None:
            value_hint = role_values()[wanted.name]
            findings.append(f"has no {wanted.name} of its own (ALTER ROLE ... SET {wanted.name} = '{value_hint}')")
            continue
        value = parse_setting(raw, wanted.kind)
        unlimited = wanted.name in ("statement_timeout", "temp_file_limit") and value is not None and value <= 0
        if wanted.kind == "off" and value:
            findings.append(f"has jit = {raw}; set jit = off")
        elif value is None or unlimited or value > wanted.maximum:
            findings.append(f"has {wanted.name} = {raw}, more than {wanted.setting} allows")
    return findings
