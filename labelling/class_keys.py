"""The labelling queue's keys for error classes, following the item's taxonomy.

After `w`, a labeller types a class's key. Up to ten classes: one digit each (1–9, then 0), as
always. More than that: two digits — the category's, then the class's within it — when the
taxonomy's categories allow it (at most ten categories of at most ten classes each), else the
class's number in two (or three) digits. Every key of one taxonomy has the same length, so
the page knows when a key is complete.
"""

from dataclasses import dataclass

from labelling.taxonomy import TaxonomyIndex, goldset_taxonomy, taxonomy_index

DIGITS = "1234567890"


@dataclass(frozen=True)
class ClassKey:
    key: str
    name: str
    category: str
    description: str


def class_keys(index: TaxonomyIndex) -> list[ClassKey]:
    """Return a key for every active class of the taxonomy, in its order."""
    classes = [entry for entry in index.classes if not entry["retired"]]
    if len(classes) <= len(DIGITS):
        return [_key(DIGITS[i], entry) for i, entry in enumerate(classes)]
    groups: dict[str, list[dict]] = {}
    for entry in classes:
        groups.setdefault(entry["category"], []).append(entry)
    if len(groups) <= len(DIGITS) and all(len(group) <= len(DIGITS) for group in groups.values()):
        return [
            _key(DIGITS[g] + DIGITS[c], entry)
            for g, group in enumerate(groups.values())
            for c, entry in enumerate(group)
        ]
    width = len(str(len(classes)))
    return [_key(str(i + 1).zfill(width), entry) for i, entry in enumerate(classes)]


def class_keys_for(gold_set) -> list[ClassKey]:
    """Return the keys of the classes a label of this gold set (None: a live item) may use."""
    return class_keys(taxonomy_index(goldset_taxonomy(gold_set)))


def _key(key: str, entry: dict) -> ClassKey:
    return ClassKey(key, entry["class"], entry["category"], entry["description"])
