"""The dev/test split section of a version's page."""

from django import template

from labelling.split_models import GoldSetSplit

register = template.Library()


@register.inclusion_tag("labelling/_split_section.html")
def split_section(version):
    """Render the version's split: its seed and share, and each part's items per class; or how to make one."""
    split = GoldSetSplit.objects.filter(version=version).first()
    classes = sorted({name for part in (split.counts.values() if split else []) for name in part["by_class"]})
    rows = [
        {
            "name": name,
            "dev": split.counts["dev"]["by_class"].get(name, 0),
            "test": split.counts["test"]["by_class"].get(name, 0),
        }
        for name in classes
    ]
    return {"version": version, "split": split, "rows": rows}
