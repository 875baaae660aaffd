"""The hostile corpus: SQL texts an attacker (or a confused model) sends down the read-only path.

Every text is written against the shop schema of `probes.tests.shop` (customers, orders,
order_items, shipments, the sequence `shop_seq`, the writing function `shop_wipe()` and the
procedure `shop_wipe_proc()`) or against the server itself. Each belongs to one family
(`FAMILIES`) and names the dialects it is aimed at. `guard_must_refuse` is True for every
text the guard must refuse before anything reaches a database; False marks a text that is
legitimate SQL in shape (a huge result, a slow or memory-hungry but allowed query) which the
execution caps must stop instead (row/byte caps, timeouts, SQLite limits). `must_run` marks
benign analytics SQL of the same families (`benign`), which must be allowed and must run.

The harness in the tests runs each text through every entry point and checks, through a
second connection, that nothing changed. The texts live by category in the
other modules of this package; this module assembles them.
"""

from dataclasses import dataclass

from probes.tests.hostile import (
    benign,
    bombs,
    costs,
    escapes,
    lexer,
    seen,
    side_effects,
    space,
    tricks,
    visibility,
    writes,
)

# Issue 27: what a text may cost inside one call, and what it may see.
ISSUE_27_FAMILIES = ("time_in_function", "grouping_sets", "memory_growth", "temp_files", "catalogue_beyond_grant")
FAMILIES = (
    "write",
    "multi_statement",
    "lexer_differential",
    "side_effect_function",
    "file_network",
    "sql_in_string",
    "role_setting_escape",
    "lock",
    "catalogue_read",
    "planning_bomb",
    "memory_bomb",
    "time_bomb",
    "huge_result",
    *ISSUE_27_FAMILIES,
    "benign_analytics",
)


@dataclass(frozen=True)
class HostileSQL:
    family: str  # one of FAMILIES
    name: str  # unique slug
    sql: str
    dialects: tuple[str, ...]  # subset of ("sqlite", "postgres")
    guard_must_refuse: bool = True
    must_run: bool = False  # benign: the guard must allow it and it must run


CORPUS: tuple[HostileSQL, ...] = tuple(
    [
        HostileSQL(family, name, sql, dialects)
        for module in (writes, lexer, side_effects, escapes, bombs, costs, space, visibility, seen)
        for family, name, sql, dialects in module.REFUSED
    ]
    + [
        HostileSQL(family, name, sql, dialects, guard_must_refuse=False)
        for module in (tricks, bombs, costs, space, visibility)
        for family, name, sql, dialects in module.CAPPED
    ]
    + [
        HostileSQL(family, name, sql, dialects, guard_must_refuse=False, must_run=True)
        for family, name, sql, dialects in benign.BENIGN
    ]
)
