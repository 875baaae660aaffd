"""Template helpers for triage pages: SQL highlighting and probes in plain words."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

KEYWORDS = (
    "select|from|where|join|left|right|inner|outer|full|on|group|by|order|having|limit|as|and|or|not|in|is|null|"
    "distinct|count|sum|avg|min|max|case|when|then|else|end|with|union|all|exists|between|like|desc|asc|cross|using"
)
TOKEN = re.compile(rf"('(?:[^']|'')*')|(--[^\n]*)|\b({KEYWORDS})\b|\b(\d+(?:\.\d+)?)\b", re.IGNORECASE)


@register.filter
def highlight_sql(sql: str) -> str:
    """Escape SQL and wrap keywords, strings, comments and numbers in classed spans."""
    out, last = [], 0
    for match in TOKEN.finditer(sql or ""):
        out.append(escape(sql[last : match.start()]))
        kind = ("str", "comment", "kw", "num")[[g is not None for g in match.groups()].index(True)]
        out.append(f'<span class="sql-{kind}">{escape(match.group(0))}</span>')
        last = match.end()
    out.append(escape((sql or "")[last:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece above is escaped


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
