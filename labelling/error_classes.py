"""The error classes of a label: how several are kept in one column, and the one rule they follow.

A wrong label carries one or more classes of its gold set's taxonomy. They are kept in the
label's `error_class` column as one canonical text — the classes sorted and joined by `;`
("join_fanout;missing_filter") — so that the hot paths (bulk import, publish, agreement,
version diffs) compare and copy one value, and the database can hold the rule itself:

    a wrong label needs an error class; any other label carries none.

`ErrorClassRuleMixin.clean()` is that rule for Python (the forms and the services call the
model's `clean()`); `error_class_rule_constraint` is the same rule as a named
CheckConstraint on every table that stores a decision with its classes (labels,
adjudications, version items). A class name may not contain `;` (the separator, also the
CSV import's), nor start or end with spaces.
"""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

SEPARATOR = ";"
WRONG = "wrong"
# A wrong label whose source says only "wrong" (most public datasets): allowed on labels,
# adjudications and version items, left out of every per-class figure (which says how many).
UNCLASSIFIED = "unclassified"
CLASS_NAME_MAX_LENGTH = 100
# Room for ten long class names: the column is a CharField so that it stays indexable.
ERROR_CLASSES_MAX_LENGTH = 1010
MAX_CLASSES_PER_LABEL = 10


def error_classes_split(text: str | None) -> list[str]:
    """Return the classes a stored `error_class` text holds (empty for none)."""
    if not text:
        return []
    return [part for part in text.split(SEPARATOR) if part]


def error_classes_join(classes) -> str:
    """Return the canonical stored text of some classes: unique, sorted, joined by `;`.

    `unclassified` goes away beside a real class: a label that names a class is classified.
    """
    unique = sorted({str(name).strip() for name in classes if name and str(name).strip()})
    if len(unique) > 1 and UNCLASSIFIED in unique:
        unique.remove(UNCLASSIFIED)
    return SEPARATOR.join(unique)


def error_classes_parse(value) -> list[str]:
    """Read the classes of an import field or a form: a list, or a text "a;b" (or one class).

    Raise ValueError for anything else (a number, an object, a list of non-text).
    """
    if value is None:
        return []
    if isinstance(value, list | tuple):
        if not all(isinstance(name, str) for name in value):
            raise ValueError("a list of error classes must hold text only")
        parts = list(value)
    elif isinstance(value, str):
        parts = value.split(SEPARATOR)
    else:
        raise ValueError("error classes must be text or a list of text")
    return [part.strip() for part in parts if part.strip()]


def class_name_problem(name: str) -> str | None:
    """Say why `name` cannot be a class name, or None when it can."""
    if not name or name != name.strip():
        return "a class name must not be empty or start or end with spaces"
    if SEPARATOR in name:
        return f"a class name must not contain '{SEPARATOR}' (it separates several classes)"
    if len(name) > CLASS_NAME_MAX_LENGTH:
        return f"a class name has at most {CLASS_NAME_MAX_LENGTH} characters"
    return None


def error_class_rule_constraint(name: str) -> models.CheckConstraint:
    """Return the rule as a CheckConstraint named `name`: wrong with a well-formed class list, else none.

    Well-formed: not empty, and no empty class (no leading, trailing or doubled separator).
    """
    well_formed = (
        ~Q(error_class="")
        & ~Q(error_class__startswith=SEPARATOR)
        & ~Q(error_class__endswith=SEPARATOR)
        & ~Q(error_class__contains=SEPARATOR * 2)
    )
    return models.CheckConstraint(
        condition=(Q(decision=WRONG) & well_formed) | (~Q(decision=WRONG) & Q(error_class="")),
        name=name,
    )


def error_class_holds_q(name: str, field: str = "error_class") -> Q:
    """Return a filter for rows whose classes include `name` (one of several or alone)."""
    return (
        Q(**{field: name})
        | Q(**{f"{field}__startswith": name + SEPARATOR})
        | Q(**{f"{field}__endswith": SEPARATOR + name})
        | Q(**{f"{field}__contains": SEPARATOR + name + SEPARATOR})
    )


class ErrorClassRuleMixin:
    """The rule, in the `clean()` of each model with `decision` and `error_class` fields.

    Forms and services check a decision by building the model and calling `clean()`
    (`Label(decision=..., error_class=...).clean()`), so the rule is written once here, and
    once more for the database as `error_class_rule_constraint`.
    """

    def clean(self):
        super().clean()
        classes = self.error_classes
        if self.decision == WRONG and not classes:
            raise ValidationError({"error_class": "A wrong label needs an error class."})
        if self.decision == WRONG and len(classes) > MAX_CLASSES_PER_LABEL:
            raise ValidationError(
                {"error_class": f"A label carries at most {MAX_CLASSES_PER_LABEL} error classes, not {len(classes)}."}
            )
        if self.decision != WRONG and classes:
            raise ValidationError(
                {"error_class": f"Only a wrong label carries an error class, not a {self.decision or 'blank'} one."}
            )

    @property
    def error_classes(self) -> list[str]:
        return error_classes_split(self.error_class)
