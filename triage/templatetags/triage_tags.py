"""Template helpers for triage pages: SQL highlighting (labelling's) and probes in plain words."""

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

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


CHART_W, CHART_H, PAD = 640, 170, 28
SERIES = (("corrected", "#2450a6", "Corrected (Rogan–Gladen)"), ("audit", "#1f7a4d", "Audit sample"))


@register.simple_tag
def estimate_chart(points) -> str:
    """Draw both live error-rate estimates over time as an inline SVG, each with its interval."""
    values = [
        v
        for p in points
        for v in (p.corrected_high, p.audit_high, p.corrected_error_rate, p.audit_error_rate)
        if v is not None
    ]
    if not values:
        return mark_safe('<p class="muted">No estimates yet.</p>')
    top = max(0.05, max(values)) * 1.1
    n = len(points)

    def x(i):
        return PAD + (CHART_W - 2 * PAD) * (i / max(1, n - 1))

    def y(v):
        return CHART_H - PAD - (CHART_H - 2 * PAD) * (v / top)

    parts = [
        f'<svg viewBox="0 0 {CHART_W} {CHART_H}" width="100%" role="img" aria-label="Live error rate over time">',
        f'<line x1="{PAD}" y1="{y(0):.1f}" x2="{CHART_W - PAD}" y2="{y(0):.1f}" stroke="#dde1e6"/>',
        f'<text x="2" y="{y(top / 1.1):.1f}" font-size="10" fill="#667085">{top / 1.1:.0%}</text>',
        f'<text x="2" y="{y(0):.1f}" font-size="10" fill="#667085">0%</text>',
    ]
    for offset, (name, colour, title) in enumerate(SERIES):
        coords = []
        for i, p in enumerate(points):
            value = getattr(p, f"{name}_error_rate")
            low, high = getattr(p, f"{name}_low"), getattr(p, f"{name}_high")
            if value is None:
                continue
            xi = x(i) + (offset * 4 - 2)
            if low is not None and high is not None:
                parts.append(
                    f'<line x1="{xi:.1f}" y1="{y(low):.1f}" x2="{xi:.1f}" y2="{y(high):.1f}" '
                    f'stroke="{colour}" stroke-opacity=".35" stroke-width="3"/>'
                )
            coords.append(f"{xi:.1f},{y(value):.1f}")
            parts.append(f'<circle cx="{xi:.1f}" cy="{y(value):.1f}" r="2.5" fill="{colour}"/>')
        if len(coords) > 1:
            parts.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        parts.append(f'<text x="{PAD + offset * 200}" y="12" font-size="11" fill="{colour}">■ {escape(title)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped titles only
