"""Which items carry which error class, and which category: the item sets of every per-class figure.

A wrong item's classes are stored as one canonical text, "a;b" (`labelling.error_classes`).
An item counts in every class it carries, and once in each category it has (the categories
of its classes, from the taxonomy): classes, and categories, then overlap, so their counts
can add up to more than the wrong items. `unclassified` is no class. Pure: no ORM.
"""

from __future__ import annotations

import weakref

import numpy as np

SEPARATOR = ";"  # labelling.error_classes.SEPARATOR
UNCLASSIFIED = "unclassified"  # labelling.error_classes.UNCLASSIFIED


def classes_of(text: str) -> list[str]:
    """Return the classes of one stored text (none for "", `unclassified` or a correct item)."""
    return [name for name in (text or "").split(SEPARATOR) if name and name != UNCLASSIFIED]


def text_codes(error_class: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Return the distinct stored texts, sorted, and each item's index among them.

    Comparing small integers instead of Python strings item by item keeps these sets cheap on
    hundreds of thousands of items. A report asks this of the same array for every judge and
    figure, so the answer is kept while that array lives (the arrays are never written to).
    """
    if isinstance(error_class, np.ndarray):
        kept = _codes_of_array.get(id(error_class))
        if kept is not None and kept[0]() is error_class:
            return kept[1]
    texts = np.asarray(error_class, dtype=object).tolist()
    distinct = sorted(set(texts))
    index = {text: i for i, text in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
    if isinstance(error_class, np.ndarray):
        remember_text_codes(error_class, distinct, codes)
    return distinct, codes


def remember_text_codes(error_class: np.ndarray, distinct: list[str], codes: np.ndarray) -> None:
    """Keep `text_codes` of an array whose codes are already known (the items' loader groups by text).

    `distinct` must be the sorted distinct texts and `codes` each item's index among them.
    """
    _codes_of_array[id(error_class)] = (weakref.ref(error_class), (distinct, codes))
    weakref.finalize(error_class, _codes_of_array.pop, id(error_class), None)


# id(array) -> (a weak reference to it, its text_codes): an entry goes when its array does.
_codes_of_array: dict[int, tuple[weakref.ref, tuple]] = {}


def class_members(error_class: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """Return {class: items carrying it} over the items of `mask`, classes sorted by name."""
    distinct, codes = text_codes(error_class)
    mask = np.asarray(mask, dtype=bool)
    members: dict[str, np.ndarray] = {}
    for code in np.unique(codes[mask]).tolist():
        holding = mask & (codes == code)
        for name in classes_of(distinct[code]):
            if name not in members:
                members[name] = np.zeros(len(codes), dtype=bool)
            members[name] |= holding
    return dict(sorted(members.items()))


def category_members(error_class: np.ndarray, mask: np.ndarray, category_of: dict[str, str]) -> dict[str, np.ndarray]:
    """Return {category: items with at least one class in it}; a class without a category adds none."""
    categories: dict[str, np.ndarray] = {}
    for name, holding in class_members(error_class, mask).items():
        category = category_of.get(name) or ""
        if not category:
            continue
        if category not in categories:
            categories[category] = np.zeros(len(holding), dtype=bool)
        categories[category] |= holding
    return dict(sorted(categories.items()))


def is_classified(error_class: np.ndarray) -> np.ndarray:
    """Return True for items that carry at least one class (each distinct text read once)."""
    distinct, codes = text_codes(error_class)
    return np.array([bool(classes_of(text)) for text in distinct], dtype=bool)[codes] if distinct else codes > 0
