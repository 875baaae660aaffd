"""Template helpers for triage pages: SQL highlighting (labelling's) and probes in plain words."""

from django import template

from judges.charts import estimate_chart as chart_geometry
from labelling.highlight import highlight_sql

register = template.Library()

# The one SQL highlighter (Pygments), under the name triage's templates use.
register.filter("highlight_sql", highlight_sql)


OUTCOME_WORDS = {
    "confirmed": "confirmed",
    "refuted": "refuted: no duplication found",
    "refused": "not run: the read-only guard refused the probe",
    "error": "failed to run (fails open: not counted against the query)",
}


@register.filter
def probe_sentence(probe_run) -> str:
    """Say what a probe found, e.g. 'order_items fans out order_id: 1,214 rows for 412 distinct keys'."""
    if probe_run.message:
        return probe_run.message
    figures = probe_run.figures or {}
    table = (probe_run.hypothesis or {}).get("join_table") or "the join"
    key = (probe_run.hypothesis or {}).get("grain_key") or "its key"
    if "total" in figures and "distinct" in figures:
        verb = "fans out" if figures["total"] > figures["distinct"] else "does not fan out"
        return f"{table} {verb} {key}: {figures['total']:,} rows for {figures['distinct']:,} distinct keys"
    return OUTCOME_WORDS.get(probe_run.outcome, probe_run.outcome)


@register.inclusion_tag("triage/_estimate_chart.html")
def estimate_chart(points) -> dict:
    """Draw both live error-rate estimates over time, each with its interval (`judges.charts`)."""
    return {"chart": chart_geometry(points)}
