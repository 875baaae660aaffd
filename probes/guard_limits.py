"""The guard's size and shape limits, read from the WAREHOUSE_MAX_* settings."""

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


def current_limits() -> GuardLimits:
    """Read the limits from settings (each is a WAREHOUSE_MAX_* setting)."""
    defaults = GuardLimits()
    return GuardLimits(
        max_bytes=getattr(settings, "WAREHOUSE_MAX_SQL_BYTES", defaults.max_bytes),
        max_nodes=getattr(settings, "WAREHOUSE_MAX_SQL_NODES", defaults.max_nodes),
        max_depth=getattr(settings, "WAREHOUSE_MAX_SQL_DEPTH", defaults.max_depth),
        max_ctes=getattr(settings, "WAREHOUSE_MAX_SQL_CTES", defaults.max_ctes),
        max_joins=getattr(settings, "WAREHOUSE_MAX_SQL_JOINS", defaults.max_joins),
        max_recursive_rows=getattr(settings, "WAREHOUSE_MAX_RECURSIVE_ROWS", defaults.max_recursive_rows),
    )
