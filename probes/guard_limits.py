"""The guard's size, shape and growth limits, read from the WAREHOUSE_MAX_* settings."""

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class GuardLimits:
    max_bytes: int = 65_536
    max_nodes: int = 5_000
    max_depth: int = 100
    max_ctes: int = 32
    max_joins: int = 32
    max_recursive_rows: int = 1_000_000
    # What may grow inside one call (issue 27).
    max_literal_bytes: int = 4096
    max_width: int = 10_000
    max_pattern_bytes: int = 512
    max_grouping_sets: int = 64


# Each limit and the setting it is read from.
SETTINGS = {
    "max_bytes": "WAREHOUSE_MAX_SQL_BYTES",
    "max_nodes": "WAREHOUSE_MAX_SQL_NODES",
    "max_depth": "WAREHOUSE_MAX_SQL_DEPTH",
    "max_ctes": "WAREHOUSE_MAX_SQL_CTES",
    "max_joins": "WAREHOUSE_MAX_SQL_JOINS",
    "max_recursive_rows": "WAREHOUSE_MAX_RECURSIVE_ROWS",
    "max_literal_bytes": "WAREHOUSE_MAX_SQL_LITERAL_BYTES",
    "max_width": "WAREHOUSE_MAX_SQL_WIDTH",
    "max_pattern_bytes": "WAREHOUSE_MAX_SQL_PATTERN_BYTES",
    "max_grouping_sets": "WAREHOUSE_MAX_SQL_GROUPING_SETS",
}


def current_limits() -> GuardLimits:
    """Read the limits from settings (each is a WAREHOUSE_MAX_* setting)."""
    defaults = GuardLimits()
    return GuardLimits(**{field: getattr(settings, name, getattr(defaults, field)) for field, name in SETTINGS.items()})
