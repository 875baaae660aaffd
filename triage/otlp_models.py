"""Rows of OTLP trace ingestion: each client's attribute mapping, its counters, and spans held back.

Loaded with `triage.models` (which imports them), so they are models of the triage app.
"""

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import models

from probes.models import Warehouse

MAX_ATTRIBUTE_NAMES = 10
MAX_ATTRIBUTE_NAME_LENGTH = 255


def otlp_mapping_cache_key(client: str) -> str:
    """Where each process keeps a client's mapping a few seconds (`triage/otlp_ingest.py` `otlp_mapping_get`)."""
    return f"triage:otlp-mapping:{client}"


def otlp_mapping_forget(*, client: str) -> None:
    """Drop this process's cached mapping of the client (the admin calls it on a save; here, so the
    admin does not import the ingestion code and, through it, the REST API at every start-up)."""
    cache.delete(otlp_mapping_cache_key(client))


def default_sql_attributes():
    return ["db.query.text", "db.statement"]


def default_dialect_attributes():
    return ["db.system.name", "db.system"]


def default_warehouse_attributes():
    return ["db.namespace", "db.name"]  # db.name: the conventions' name before db.namespace


def default_question_attributes():
    return ["docket.question"]


def _attribute_names_problem(value) -> str | None:
    """Say what is wrong with a list of attribute names, or None when it is a valid one."""
    if not isinstance(value, list) or len(value) > MAX_ATTRIBUTE_NAMES:
        return f"Give a JSON list of at most {MAX_ATTRIBUTE_NAMES} attribute names."
    for name in value:
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_ATTRIBUTE_NAME_LENGTH:
            return f"Each attribute name is a non-empty string of at most {MAX_ATTRIBUTE_NAME_LENGTH} characters."
        if name != name.strip():
            return f"Attribute name {name!r} has spaces around it."
    return None


def _aliases_problem(value) -> str | None:
    if not isinstance(value, dict):
        return 'Give a JSON object mapping a db.namespace value to a warehouse name, e.g. {"shop_prod": "shop"}.'
    for key, target in value.items():
        if not key or not isinstance(target, str):
            return "Each alias maps a non-empty namespace to a warehouse name."
        try:
            validate_slug(target)
        except ValidationError:
            return f"{target!r} is not a warehouse name (letters, digits, '-' and '_')."
    return None


class OtlpMapping(models.Model):
    """Which span attributes of one API client hold a live query's SQL, dialect, warehouse and question.

    A client without a row is read with the defaults (the OpenTelemetry database conventions
    and `docket.question`). Each list is tried in order; the first attribute present wins.
    """

    client = models.SlugField(max_length=64, unique=True, help_text="The API client (as on its tokens).")
    sql_attributes = models.JSONField(default=default_sql_attributes, help_text="Attributes holding the SQL text.")
    dialect_attributes = models.JSONField(
        default=default_dialect_attributes,
        blank=True,
        help_text="Attributes naming the database system (postgresql, sqlite); others leave the warehouse's dialect.",
    )
    warehouse_attributes = models.JSONField(
        default=default_warehouse_attributes, blank=True, help_text="Attributes naming the warehouse."
    )
    warehouse_aliases = models.JSONField(
        default=dict, blank=True, help_text='Namespace values that name a warehouse differently: {"shop_prod": "shop"}.'
    )
    default_warehouse = models.SlugField(
        max_length=64, blank=True, help_text="The warehouse of a span that names none (blank: such a span is rejected)."
    )
    question_attributes = models.JSONField(
        default=default_question_attributes, blank=True, help_text="Attributes holding the user's question."
    )
    question_from_genai = models.BooleanField(
        default=True, help_text="Without a question attribute, take the last user message of the nearest GenAI parent."
    )
    attempt_prefix = models.CharField(
        max_length=100,
        default="docket.attempt.",
        blank=True,
        help_text="Child spans with attributes under this prefix are the SQL span's generation attempts (blank: none).",
    )
    parent_wait_seconds = models.PositiveIntegerField(
        default=300,
        help_text="How long a span without a question waits for its parent span to arrive in a later export.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["client"]
        verbose_name = "OTLP mapping"

    def __str__(self):
        return f"OTLP mapping of {self.client}"

    def clean(self):
        errors = {}
        for field in ("sql_attributes", "dialect_attributes", "warehouse_attributes", "question_attributes"):
            problem = _attribute_names_problem(getattr(self, field))
            if problem:
                errors[field] = problem
        if not errors.get("sql_attributes") and not self.sql_attributes:
            errors["sql_attributes"] = "Name at least one attribute: a span without SQL is never a query."
        problem = _aliases_problem(self.warehouse_aliases)
        if problem:
            errors["warehouse_aliases"] = problem
        if self.default_warehouse and not Warehouse.objects.filter(name=self.default_warehouse).exists():
            errors["default_warehouse"] = f"No warehouse is registered as {self.default_warehouse!r}."
        if not problem:
            targets = set(self.warehouse_aliases.values())
            known = set(Warehouse.objects.filter(name__in=targets).values_list("name", flat=True))
            if targets - known:
                errors["warehouse_aliases"] = f"No warehouse is registered as {', '.join(sorted(targets - known))}."
        if errors:
            raise ValidationError(errors)


class OtlpExportCounts(models.Model):
    """What one client's OTLP exports brought: spans received, ignored, rejected, and queries stored."""

    client = models.SlugField(max_length=64, unique=True)
    exports = models.PositiveBigIntegerField(default=0)
    spans_received = models.PositiveBigIntegerField(default=0)
    # Spans that carry no SQL (GenAI, HTTP, attempt spans...): read for questions and attempts, never stored.
    spans_ignored = models.PositiveBigIntegerField(default=0)
    spans_rejected = models.PositiveBigIntegerField(default=0)
    queries_ingested = models.PositiveBigIntegerField(default=0, help_text="SQL spans stored (or already stored).")
    last_export_at = models.DateTimeField(null=True, blank=True)
    last_rejection = models.TextField(blank=True)

    class Meta:
        ordering = ["client"]
        verbose_name = "OTLP export counts"
        verbose_name_plural = "OTLP export counts"

    def __str__(self):
        return f"OTLP exports of {self.client}"


class OtlpHeldSpan(models.Model):
    """A span kept until the span it needs arrives: a SQL span awaiting the parent that holds its
    question, an attempt awaiting its SQL span, or a link in such a chain.

    A batch exporter sends spans as they end, children first, so a child and its parent may
    arrive in different exports. Held spans are decided when the missing span arrives, or after
    the client's `parent_wait_seconds`, at its next export.
    """

    client = models.SlugField(max_length=64)
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    facts = models.JSONField(help_text="What the span said that ingestion needs (see triage.otlp_spans.SpanFacts).")
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["received_at"]
        constraints = [
            # A re-exported span is held once.
            models.UniqueConstraint(fields=["client", "trace_id", "span_id"], name="triage_otlpheldspan_one_per_span"),
        ]
        indexes = [
            # Each export reads the held spans of its traces, and those past their wait.
            models.Index(fields=["client", "received_at"], name="triage_otlpheld_client_age"),
        ]

    def __str__(self):
        return f"held span {self.trace_id}/{self.span_id} of {self.client}"
