from collections import Counter

from django import template

from labelling import queue_selectors
from labelling.error_classes import error_classes_split
from labelling.forms import AdjudicationForm
from labelling.highlight import highlight_sql
from labelling.models import LabelDecision
from labelling.selectors import IMPORT_RATER

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
def classes(error_class):
    """Show a label's classes ("a;b") as "a, b"."""
    return ", ".join(error_classes_split(error_class))


@register.filter
def capped(count):
    """Show a queue count that stopped past its cap (`queue_selectors.COUNT_CAP`) as "1000+"."""
    cap = queue_selectors.COUNT_CAP
    return f"{cap}+" if count > cap else count


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "")


@register.filter
def get_index(sequence, index):
    return sequence[index]


@register.filter
def labellers(raters):
    """The people among the raters: an import without a labeller is a source, not a labeller."""
    return [rater for rater in raters if rater != IMPORT_RATER]


@register.filter
def imported(raters):
    return IMPORT_RATER in raters


@register.simple_tag
def adjudication_form(ratings, gold_set=None):
    """An adjudication form that starts from what most labels say, not from "correct".

    `ratings` is a disagreement row's [(rater, category)], a category being `correct`,
    `unsure` or `wrong:<classes>`. The most common decision is preselected, and the most
    common classes when that decision is wrong; the classes offered are the gold set's.
    """
    categories = [category for _rater, category in ratings]
    decisions = Counter(category.split(":", 1)[0] for category in categories)
    wrong, correct = decisions[LabelDecision.WRONG], decisions[LabelDecision.CORRECT]
    initial = {"decision": LabelDecision.WRONG if wrong >= correct else LabelDecision.CORRECT}
    classes = Counter(category.split(":", 1)[1] for category in categories if category.startswith("wrong:"))
    if initial["decision"] == LabelDecision.WRONG and classes:
        initial["error_class"] = error_classes_split(classes.most_common(1)[0][0])
    return AdjudicationForm(initial=initial, auto_id=False, gold_set=gold_set)  # one form per row: no duplicate ids
