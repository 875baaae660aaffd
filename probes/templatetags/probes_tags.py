from django import template
from django.conf import settings
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def result_cell(value):
    """Show a warehouse value as a person reads it: NULL marked, float noise trimmed.

    SQLite sums of decimals come back as binary floats (83121.04999999994); ten
    significant digits show the value the data holds without hiding real precision.
    """
    if value is None:
        return mark_safe('<span class="muted">NULL</span>')  # a constant: nothing to escape
    if isinstance(value, float):
        return f"{value:.10g}"
    return value


@register.inclusion_tag("probes/_unsafe_role_banner.html")
def unsafe_role_banner():
    """The red banner of a deployment that lets a warehouse run as a role that can do more than read."""
    return {"allow_unsafe_role": settings.WAREHOUSE_ALLOW_UNSAFE_ROLE}
