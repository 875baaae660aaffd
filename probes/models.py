"""Warehouses, their catalogues and probe runs.

`probes` is the ground floor: it knows SQL texts, warehouses and catalogues, and nothing
about queries, labels, judges or triage.
"""

from django.db import models

from config.progress import RequestedTask, TaskStatus
from probes.outcome import Outcome, OutcomeKind


class Dialect(models.TextChoices):
    SQLITE = "sqlite", "SQLite"
    POSTGRES = "postgres", "PostgreSQL"
    MYSQL = "mysql", "MySQL / MariaDB"
    DUCKDB = "duckdb", "DuckDB"
    # Warehouses Docket cannot reach: a catalogue from a file (`import_catalogue`), no connection.
    SNOWFLAKE = "snowflake", "Snowflake"
    BIGQUERY = "bigquery", "BigQuery"
    REDSHIFT = "redshift", "Redshift"
    DATABRICKS = "databricks", "Databricks"
    TRINO = "trino", "Trino"
    TSQL = "tsql", "SQL Server"
    ORACLE = "oracle", "Oracle"
    CLICKHOUSE = "clickhouse", "ClickHouse"


# The dialects Docket opens a connection to; any other is a catalogue from a file only.
CONNECTED_DIALECTS = frozenset({Dialect.SQLITE, Dialect.POSTGRES, Dialect.MYSQL, Dialect.DUCKDB})


class Warehouse(models.Model):
    """A named read-only connection. Its DSN lives in the environment, never in this table."""

    name = models.SlugField(max_length=64, unique=True)
    dialect = models.CharField(max_length=16, choices=Dialect.choices)
    description = models.TextField(blank=True)
    # Per-warehouse verifier switches, e.g. {"require_limit": false, "max_scan_rows": 1e6}.
    verifier_rules = models.JSONField(default=dict, blank=True)
    # An admin's consent that result rows of this warehouse may leave for a judge's vendor
    # (a judge version's result preview); without it a judge sees the SQL, never the rows.
    allow_result_egress = models.BooleanField(
        "may send result rows to vendors",
        default=False,
        help_text="Judges with a result preview send this warehouse's first result rows to their vendor. "
        "Only an admin may turn this on.",
    )
    # False for a warehouse known only from a catalogue file (`import_catalogue`): nothing runs
    # on it, and every check that needs the database is a fault with cause `no_connection`.
    has_connection = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Catalogue(models.Model):
    """An introspected, versioned snapshot of a warehouse's tables, columns and keys."""

    warehouse = models.ForeignKey(Warehouse, on_delete=models.CASCADE, related_name="catalogues")
    version = models.PositiveIntegerField()
    # {"tables": {name: {"columns": [{name, type, nullable}], "primary_key": [...],
    #   "unique": [[...]], "foreign_keys": [{columns, ref_table, ref_columns}], "row_estimate": n}}}
    snapshot = models.JSONField()
    # The login role check made with this refresh (probes.role_check): {"login_role",
    # "findings", "safe", "applicable", "checked_at"}. A failing check stops model SQL.
    role_check = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["warehouse", "-version"]
        constraints = [
            # A version number names exactly one snapshot of one warehouse.
            models.UniqueConstraint(fields=["warehouse", "version"], name="probes_catalogue_unique_version"),
            # Versions count from 1 so "no catalogue" (None) is never confused with a version.
            models.CheckConstraint(condition=models.Q(version__gte=1), name="probes_catalogue_version_positive"),
        ]

    def __str__(self):
        return f"{self.warehouse} catalogue v{self.version}"


class ProbeOutcome(models.TextChoices):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    REFUSED = "refused"
    ERROR = "error"


class ProbeRun(models.Model):
    """One execution (or refusal) of a probe SQL text against a warehouse."""

    warehouse = models.ForeignKey(Warehouse, on_delete=models.PROTECT, related_name="probe_runs")
    kind = models.CharField(max_length=32, default="fanout")
    # Whoever asked stores the link; probes only knows the fingerprint of the SQL checked.
    subject_fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    hypothesis = models.JSONField(default=dict, blank=True)
    probe_sql = models.TextField(blank=True)
    guard_allowed = models.BooleanField(default=False)
    guard_reason = models.TextField(blank=True)
    outcome = models.CharField(max_length=16, choices=ProbeOutcome.choices)
    figures = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True)
    duration_ms = models.FloatField(default=0)
    catalogue_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Fail open is only meaningful if nothing but these four outcomes can be stored.
            models.CheckConstraint(
                condition=models.Q(outcome__in=ProbeOutcome.values), name="probes_proberun_outcome_valid"
            ),
            # A probe the guard refused can only have the outcome "refused".
            models.CheckConstraint(
                condition=models.Q(guard_allowed=True) | models.Q(outcome="refused"),
                name="probes_proberun_refused_when_guard_refuses",
            ),
        ]

    def __str__(self):
        return f"{self.kind} probe on {self.warehouse}: {self.outcome}"

    @property
    def check_outcome(self) -> Outcome:
        """The run as a checker's outcome: confirmed fails the SQL (`join_fanout`), refuted passes
        it, refused and error are faults — a broken probe fails open, it never flags."""
        match self.outcome:
            case ProbeOutcome.CONFIRMED:
                return Outcome.failed("join_fanout", self.message)
            case ProbeOutcome.REFUTED:
                return Outcome.passed(self.message)
        return Outcome.fault(self.outcome or "error", self.message)

    @property
    def rejects(self) -> bool:
        """Only a confirmed probe argues against the SQL; refused and error fail open."""
        return self.check_outcome.kind is OutcomeKind.FAILED


# The steps of a catalogue refresh (`probes/catalogue.py`), in order, as the browser shows them.
REFRESH_STEPS = ("reading tables and columns", "sampling column values", "checking the login role", "storing")


class CatalogueRefresh(RequestedTask):
    """One "Refresh catalogue" asked for in the browser: its task's progress, step by step."""

    warehouse = models.ForeignKey(Warehouse, on_delete=models.CASCADE, related_name="catalogue_refreshes")
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.QUEUED)
    step = models.CharField(max_length=100, blank=True)  # what the task is doing now, in words
    steps_done = models.PositiveSmallIntegerField(default=0)
    catalogue = models.ForeignKey(Catalogue, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    def __str__(self):
        return f"{self.warehouse} catalogue refresh: {self.status}"

    def progress_counts(self) -> tuple[int, int]:
        return self.steps_done, len(REFRESH_STEPS)

    @property
    def steps_total(self) -> int:
        return len(REFRESH_STEPS)
