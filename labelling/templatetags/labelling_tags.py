from django import template

from labelling.highlight import highlight_sql

register = template.Library()


@register.filter
def sql_highlight(sql, dialect="sqlite"):
    """Render SQL with syntax highlighting (escaped, safe)."""
    return highlight_sql(sql or "", dialect or "sqlite")


@register.filter
def kappa(value):
    """Show an agreement coefficient with three decimals, or n/a when undefined."""
    if value is None or value != value:  # NaN
        return "n/a"
    return f"{value:.3f}"


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "")


@register.filter
def get_index(sequence, index):
    return sequence[index]
