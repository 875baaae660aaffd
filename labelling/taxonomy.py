"""Taxonomy services and reads: the default, a gold set's, a file imported, classes added, renamed, retired.

Every change goes through `_taxonomy_changed`, which bumps the taxonomy's version and writes its
snapshot (`TaxonomyVersion`). `TaxonomyIndex` answers what a name means in a taxonomy: a class,
an old name of one, a checker's class it maps (`maps_to`), or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max, Q

from labelling.error_classes import (
    UNCLASSIFIED,
    class_name_problem,
    error_class_holds_q,
    error_classes_join,
    error_classes_split,
)
from labelling.models import Adjudication, ErrorClass, GoldSet, Label
from labelling.taxonomy_files import TaxonomyEntry
from labelling.taxonomy_models import DEFAULT_TAXONOMY, Taxonomy, TaxonomyAlias, TaxonomyClass, TaxonomyVersion


@dataclass
class TaxonomyIndex:
    """What names mean in one taxonomy: its classes in order, their categories, and the other names."""

    name: str
    version: int
    classes: list[dict]  # [{"id", "class", "category", "description", "retired"}] in position order
    aliases: dict[str, str] = field(default_factory=dict)  # other name -> class

    @property
    def active(self) -> list[str]:
        return [entry["class"] for entry in self.classes if not entry["retired"]]

    @property
    def names(self) -> set[str]:
        return {entry["class"] for entry in self.classes}

    def category_of(self, name: str) -> str:
        return next((entry["category"] for entry in self.classes if entry["class"] == name), "")

    def resolve(self, name: str) -> str | None:
        """Return the class a name stands for (itself, or through an alias), or None outside the taxonomy."""
        if name in self.names:
            return name
        return self.aliases.get(name)

    def as_report(self) -> dict:
        """The report's `taxonomy` key: name, version and the classes with their categories."""
        return {
            "name": self.name,
            "version": self.version,
            "classes": [{"class": entry["class"], "category": entry["category"] or None} for entry in self.classes],
        }


def taxonomy_default() -> Taxonomy:
    """Return Docket's default taxonomy (seeded by migration 0010; recreated if someone removed it)."""
    taxonomy = Taxonomy.objects.filter(name=DEFAULT_TAXONOMY).first()
    if taxonomy is not None:
        return taxonomy
    try:
        with transaction.atomic():
            taxonomy = Taxonomy.objects.create(
                name=DEFAULT_TAXONOMY, description="Docket's default error classes for SQL."
            )
            for position, name in enumerate(ErrorClass.values):
                TaxonomyClass.objects.create(taxonomy=taxonomy, name=name, position=position)
            _snapshot(taxonomy, "Docket's default")
    except IntegrityError:
        # Another request recreated it between our read and our insert: theirs is the default.
        return Taxonomy.objects.get(name=DEFAULT_TAXONOMY)
    return taxonomy


def goldset_taxonomy(gold_set: GoldSet | None) -> Taxonomy:
    """Return the taxonomy a gold set's labels use (the default when it names none; live items too)."""
    if gold_set is not None and gold_set.taxonomy_id:
        return gold_set.taxonomy
    return taxonomy_default()


def taxonomy_index(taxonomy: Taxonomy) -> TaxonomyIndex:
    """Return the index of a taxonomy as it is now."""
    classes = [_class_entry(row) for row in TaxonomyClass.objects.filter(taxonomy=taxonomy).order_by("position", "id")]
    aliases = dict(TaxonomyAlias.objects.filter(taxonomy=taxonomy).values_list("name", "target__name"))
    return TaxonomyIndex(taxonomy.name, taxonomy.version, classes, aliases)


def taxonomy_version_index(snapshot: TaxonomyVersion) -> TaxonomyIndex:
    """Return the index of a taxonomy as a snapshot froze it."""
    return TaxonomyIndex(snapshot.taxonomy.name, snapshot.number, list(snapshot.classes), dict(snapshot.aliases))


def taxonomy_current_version(taxonomy: Taxonomy) -> TaxonomyVersion:
    """Return the snapshot of the taxonomy's current version (written if it is missing)."""
    found = TaxonomyVersion.objects.filter(taxonomy=taxonomy, number=taxonomy.version).first()
    return found or _snapshot(taxonomy, "")


def class_choices(gold_set: GoldSet | None) -> list[tuple[str, str]]:
    """Return (value, label) of the active classes a label of this gold set may use, in order."""
    index = taxonomy_index(goldset_taxonomy(gold_set))
    return [(entry["class"], _label(entry)) for entry in index.classes if not entry["retired"]]


# --- Changes ----------------------------------------------------------------------------------


@transaction.atomic
def taxonomy_import(*, name: str, entries: list[TaxonomyEntry]) -> tuple[Taxonomy, list[str]]:
    """Create the taxonomy `name` from a file's entries, or extend it; return it and what changed.

    New classes are added in the file's order; a class already there takes the file's category
    and description; a `maps_to` entry adds that name as another name of its class.
    """
    taxonomy, created = Taxonomy.objects.get_or_create(name=name, defaults={"version": 1})
    taxonomy = Taxonomy.objects.select_for_update().get(pk=taxonomy.pk)
    existing = {row.name: row for row in TaxonomyClass.objects.filter(taxonomy=taxonomy)}
    position = (TaxonomyClass.objects.filter(taxonomy=taxonomy).aggregate(n=Max("position"))["n"] or 0) + 1
    changes = []
    for entry in entries:
        if entry.maps_to:
            continue
        row = existing.get(entry.name)
        if row is None:
            existing[entry.name] = TaxonomyClass.objects.create(
                taxonomy=taxonomy, name=entry.name, category=entry.category, description=entry.description,
                position=position,
            )  # fmt: skip
            position += 1
            changes.append(f"added {entry.name}")
        elif (row.category, row.description) != (entry.category, entry.description or row.description):
            row.category, row.description = entry.category, entry.description or row.description
            row.save(update_fields=["category", "description"])
            changes.append(f"changed {entry.name}")
    for entry in entries:
        if entry.maps_to:
            if entry.maps_to not in existing:
                raise ValidationError(f"'{entry.name}' maps to '{entry.maps_to}', which is not a class of '{name}'")
            if _alias_set(taxonomy, entry.name, existing[entry.maps_to], TaxonomyAlias.Kind.MAPS_TO):
                changes.append(f"mapped {entry.name} to {entry.maps_to}")
    if created:
        _snapshot(taxonomy, "created from a file")
    elif changes:
        _taxonomy_changed(taxonomy, "; ".join(changes)[:200])
    return taxonomy, changes


@transaction.atomic
def taxonomy_classes_add(*, taxonomy: Taxonomy, names: list[str], category: str = "", description: str = "") -> None:
    """Add classes (of one category) at the end of a taxonomy; raise ValidationError for a bad name."""
    taxonomy = Taxonomy.objects.select_for_update().get(pk=taxonomy.pk)
    known = set(TaxonomyClass.objects.filter(taxonomy=taxonomy).values_list("name", flat=True))
    aliases = set(TaxonomyAlias.objects.filter(taxonomy=taxonomy).values_list("name", flat=True))
    position = (TaxonomyClass.objects.filter(taxonomy=taxonomy).aggregate(n=Max("position"))["n"] or 0) + 1
    added = []
    for name in names:
        problem = class_name_problem(name) or (f"'{UNCLASSIFIED}' is not a class" if name == UNCLASSIFIED else None)
        if problem:
            raise ValidationError({"name": problem})
        if name in known:
            raise ValidationError({"name": f"'{name}' is already a class of {taxonomy.name}"})
        if name in aliases:
            raise ValidationError({"name": f"'{name}' is already another name of a class of {taxonomy.name}"})
        TaxonomyClass.objects.create(
            taxonomy=taxonomy, name=name, category=category.strip(), description=description, position=position
        )
        known.add(name)
        position += 1
        added.append(name)
    if added:
        _taxonomy_changed(taxonomy, f"added {', '.join(added)}"[:200])


@transaction.atomic
def taxonomy_class_rename(*, taxonomy_class: TaxonomyClass, new_name: str) -> TaxonomyClass:
    """Rename a class; its old name is kept as an alias and the labels that use it follow.

    Published versions keep the name they were published with (they are frozen); imports,
    judges' guesses and old files that say the old name still mean this class.
    """
    row = TaxonomyClass.objects.select_for_update().select_related("taxonomy").get(pk=taxonomy_class.pk)
    new_name = new_name.strip()
    problem = class_name_problem(new_name)
    if problem:
        raise ValidationError({"name": problem})
    taxonomy = row.taxonomy
    if new_name == row.name:
        return row
    if TaxonomyClass.objects.filter(taxonomy=taxonomy, name=new_name).exists():
        raise ValidationError({"name": f"'{new_name}' is already a class of {taxonomy.name}"})
    old_name = row.name
    TaxonomyAlias.objects.filter(taxonomy=taxonomy, name=new_name).delete()  # the new name is the class itself
    row.name = new_name
    row.save(update_fields=["name"])
    _alias_set(taxonomy, old_name, row, TaxonomyAlias.Kind.RENAMED)
    _labels_rename(taxonomy, old_name, new_name)
    _taxonomy_changed(taxonomy, f"renamed {old_name} to {new_name}"[:200])
    return row


@transaction.atomic
def taxonomy_class_retire(*, taxonomy_class: TaxonomyClass, retired: bool = True) -> TaxonomyClass:
    """Retire a class (labels keep it, nobody is offered it) or bring it back. Classes are never deleted."""
    row = TaxonomyClass.objects.select_for_update().select_related("taxonomy").get(pk=taxonomy_class.pk)
    if row.retired != retired:
        row.retired = retired
        row.save(update_fields=["retired"])
        _taxonomy_changed(row.taxonomy, f"{'retired' if retired else 'restored'} {row.name}"[:200])
    return row


@transaction.atomic
def taxonomy_alias_add(*, taxonomy: Taxonomy, name: str, target: TaxonomyClass) -> None:
    """Map a name a checker emits (or any other name) onto a class of the taxonomy (`maps_to`)."""
    name = name.strip()
    problem = class_name_problem(name)
    if problem:
        raise ValidationError({"name": problem})
    if TaxonomyClass.objects.filter(taxonomy=taxonomy, name=name).exists():
        raise ValidationError({"name": f"'{name}' is a class of {taxonomy.name} itself"})
    if _alias_set(taxonomy, name, target, TaxonomyAlias.Kind.MAPS_TO):
        _taxonomy_changed(taxonomy, f"mapped {name} to {target.name}"[:200])


def goldset_taxonomy_use(*, gold_set: GoldSet, taxonomy: Taxonomy) -> None:
    """Make a gold set use a taxonomy; refuse when its labels use classes the taxonomy lacks."""
    if goldset_taxonomy(gold_set).pk == taxonomy.pk:
        return
    index = taxonomy_index(taxonomy)
    used = goldset_classes_used(gold_set)
    missing = sorted(name for name in used if index.resolve(name) is None)
    if missing:
        raise ValidationError(
            f"gold set '{gold_set.name}' has labels with classes taxonomy '{taxonomy.name}' lacks: {', '.join(missing)}"
        )
    gold_set.taxonomy = taxonomy
    gold_set.save(update_fields=["taxonomy"])


def goldset_classes_create(*, gold_set: GoldSet, names: list[str]) -> Taxonomy:
    """Add classes to the gold set's taxonomy, on a taxonomy of its own if it shares one; return it.

    A gold set on a shared taxonomy (the default, or one other gold sets use) gets one named after
    itself, holding the shared classes its labels already use and the new ones, so that classes
    it adds never appear in other gold sets.
    """
    current = goldset_taxonomy(gold_set)
    sharing = GoldSet.objects.filter(taxonomy=current).exclude(pk=gold_set.pk).exists()
    if current.name != DEFAULT_TAXONOMY and not sharing:
        taxonomy_classes_add(taxonomy=current, names=names)
        return current
    used = goldset_classes_used(gold_set)
    kept = [TaxonomyEntry(e["class"], e["category"], e["description"]) for e in taxonomy_index(current).classes
            if e["class"] in used]  # fmt: skip
    own, _ = taxonomy_import(name=gold_set.name, entries=kept + [TaxonomyEntry(name) for name in names])
    goldset_taxonomy_use(gold_set=gold_set, taxonomy=own)
    return own


def goldset_classes_used(gold_set: GoldSet) -> set[str]:
    """Return every class a current label or adjudication of the gold set uses (`unclassified` aside)."""
    texts = set(
        Label.objects.filter(query__gold_set=gold_set).exclude(error_class="").values_list("error_class", flat=True)
    )
    texts |= set(
        Adjudication.objects.filter(query__gold_set=gold_set)
        .exclude(error_class="")
        .values_list("error_class", flat=True)
    )
    return {name for text in texts for name in error_classes_split(text)} - {UNCLASSIFIED}


# --- Internals --------------------------------------------------------------------------------


def _class_entry(row: TaxonomyClass) -> dict:
    return {
        "id": row.pk,
        "class": row.name,
        "category": row.category,
        "description": row.description,
        "retired": row.retired,
    }


def _label(entry: dict) -> str:
    return f"{entry['category']}: {entry['class']}" if entry["category"] else entry["class"]


def _alias_set(taxonomy: Taxonomy, name: str, target: TaxonomyClass, kind: str) -> bool:
    """Point `name` at `target`; return whether anything changed."""
    alias = TaxonomyAlias.objects.filter(taxonomy=taxonomy, name=name).first()
    if alias is not None and alias.target_id == target.pk:
        return False
    if alias is None:
        TaxonomyAlias.objects.create(taxonomy=taxonomy, name=name, target=target, kind=kind)
    else:
        alias.target, alias.kind = target, kind
        alias.save(update_fields=["target", "kind"])
    return True


def _snapshot(taxonomy: Taxonomy, note: str) -> TaxonomyVersion:
    index = taxonomy_index(taxonomy)
    return TaxonomyVersion.objects.create(
        taxonomy=taxonomy, number=taxonomy.version, classes=index.classes, aliases=index.aliases, note=note
    )


def _taxonomy_changed(taxonomy: Taxonomy, note: str) -> None:
    """Bump the taxonomy's version and freeze the new one as a snapshot."""
    latest = TaxonomyVersion.objects.filter(taxonomy=taxonomy).aggregate(n=Max("number"))["n"] or 0
    taxonomy.version = latest + 1
    taxonomy.save(update_fields=["version"])
    _snapshot(taxonomy, note)


def _labels_rename(taxonomy: Taxonomy, old_name: str, new_name: str) -> None:
    """Rewrite the class in every label and adjudication of the gold sets using the taxonomy."""
    gold_sets = Q(query__gold_set__taxonomy=taxonomy)
    if taxonomy.name == DEFAULT_TAXONOMY:
        gold_sets |= Q(query__gold_set__taxonomy__isnull=True)  # gold sets on the default, and live items
    holds = error_class_holds_q(old_name)
    for model in (Label, Adjudication):
        rows = model.objects.filter(gold_sets & holds)
        for text in set(rows.values_list("error_class", flat=True)):
            renamed = [new_name if name == old_name else name for name in error_classes_split(text)]
            rows.filter(error_class=text).update(error_class=error_classes_join(renamed))
