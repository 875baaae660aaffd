"""Show a cost or latency that may not have been measured (imported verdicts store null)."""

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import format_html

register = template.Library()

NOT_MEASURED = "not measured: the source of these verdicts gave no value, so it is left out of means"


@register.filter
def measured(value, digits=0):
    """Render `value` with `digits` decimals, or "—" with a tooltip saying it was not measured."""
    if value is None or value == "":
        return format_html('<span class="muted" title="{}">—</span>', NOT_MEASURED)
    return floatformat(value, digits)
