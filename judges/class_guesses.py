"""The classes judges named when they rejected wrong items, read through the gold set's taxonomy.

`guess_table_load` reads, per wrong item and judge, how many rejects named each class (the
database groups them); `guess_resolver` says which class of the version's taxonomy a guess
means — the class itself, an old name kept by a rename, or a checker's class the taxonomy
maps (`maps_to`) — or None: an unmapped guess, which never matches and is listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count

from judges.calibration_data import CalibrationData
from judges.class_metrics import catch_rates_by_category, class_accuracy, precision_and_npv
from judges.class_sets import UNCLASSIFIED, classes_of
from judges.models import Decision, Verdict
from labelling.models import TaxonomyVersion
from labelling.taxonomy import TaxonomyIndex, goldset_taxonomy, taxonomy_index, taxonomy_version_index

UNMAPPED = "(unmapped)"
NO_CLASS = "(no class named)"


@dataclass
class GuessTable:
    """Rejects with a guess on wrong items: one row per (item, judge column, guess), with its count."""

    item: np.ndarray
    column: np.ndarray
    guess: list[str]
    count: np.ndarray
    resolved: list[str | None] = field(default_factory=list)  # the class each guess means, or None

    def subset(self, keep_items: np.ndarray, new_index: np.ndarray) -> GuessTable:
        """Keep the rows of kept items, renumbered (`new_index[old item]`)."""
        rows = np.flatnonzero(keep_items[self.item]) if len(self.item) else np.zeros(0, dtype=np.int64)
        return GuessTable(
            item=new_index[self.item[rows]],
            column=self.column[rows],
            guess=[self.guess[i] for i in rows],
            count=self.count[rows],
            resolved=[self.resolved[i] for i in rows],
        )


def version_taxonomy(version) -> TaxonomyIndex:
    """Return the taxonomy a version was published under (its gold set's current one when it predates that)."""
    if version.taxonomy_version_id:
        return taxonomy_version_index(
            TaxonomyVersion.objects.select_related("taxonomy").get(pk=version.taxonomy_version_id)
        )
    return taxonomy_index(goldset_taxonomy(version.gold_set))


def guess_resolver(version) -> Callable[[str], str | None]:
    """Return guess → the class of the version's taxonomy it means (None: unmapped).

    Names are matched by class identity, so a class renamed after the version was published
    still matches under its new name, and a checker's class under its `maps_to`.
    """
    frozen = version_taxonomy(version)
    current = taxonomy_index(goldset_taxonomy(version.gold_set))
    frozen_name = {entry["id"]: entry["class"] for entry in frozen.classes}
    identity: dict[str, int] = {}
    for index in (current, frozen):
        ids = {entry["class"]: entry["id"] for entry in index.classes}
        identity.update(ids)
        identity.update({alias: ids[target] for alias, target in index.aliases.items() if target in ids})

    def resolve(guess: str) -> str | None:
        if guess in frozen_name.values():
            return guess
        found = identity.get(guess)
        return None if found is None else frozen_name.get(found, current.resolve(guess))

    return resolve


def guess_table_load(data: CalibrationData) -> GuessTable:
    """Read the judges' class guesses on the wrong items' rejects (grouped by the database) and resolve them.

    The database reads only the runs' rejects that name a class (the partial index
    judges_verdict_class_guesses); which of them are on the report's wrong items, and of its
    judges, is kept here, on the loaded arrays.
    """
    columns = {judge.id: column for column, judge in enumerate(data.judges)}
    rows = (
        Verdict.objects.filter(run_id__in=data.run_ids, decision=Decision.REJECT)
        # The index's condition as written there: SQLite uses a partial index only then.
        .exclude(error_class_guess="")
        .values_list("query_id", "judge_version_id", "error_class_guess")
        .annotate(n=Count("id"))
        .order_by()
    )
    wrong_ids = set(data.query_ids[data.is_wrong].tolist())
    rows = [
        row for row in rows if row[2] != UNCLASSIFIED and row[1] in columns and row[0] in wrong_ids
    ]  # fmt: skip
    resolve = guess_resolver(data.gold_set_version) if rows else None
    resolved = {guess: resolve(guess) for guess in {row[2] for row in rows}}
    return GuessTable(
        item=np.searchsorted(data.query_ids, np.array([row[0] for row in rows], dtype=np.int64)),
        column=np.array([columns[row[1]] for row in rows], dtype=np.int64),
        guess=[row[2] for row in rows],
        count=np.array([row[3] for row in rows], dtype=np.int64),
        resolved=[resolved[row[2]] for row in rows],
    )


def guess_figures(data: CalibrationData, table: GuessTable, column: int) -> dict:
    """Return one judge's class accuracy (with interval) and its unmapped guesses {guess: rejects}."""
    answered = data.counts.decided_in(column)
    matched = np.zeros(len(data.is_wrong), dtype=float)
    unmapped: dict[str, int] = {}
    rows = np.flatnonzero(table.column == column)
    for row in rows:
        item, resolved = table.item[row], table.resolved[row]
        if resolved is None:
            unmapped[table.guess[row]] = unmapped.get(table.guess[row], 0) + int(table.count[row])
        elif resolved in classes_of(data.error_class[item]) and answered[item] > 0:
            matched[item] += table.count[row] / answered[item]
    figures = class_accuracy(data.probs[:, column], matched, data.is_wrong, data.error_class, guessed=len(rows) > 0)
    figures["unmapped_guesses"] = dict(sorted(unmapped.items()))
    return figures


def guess_confusion(data: CalibrationData, table: GuessTable, column: int) -> dict:
    """Return one judge's class × guess table on wrong items, in expected rejects of one draw per item.

    Rows are the items' classes (an item with two classes counts in both rows); columns the
    classes its rejects named, `(unmapped)` for guesses outside the taxonomy and
    `(no class named)` for rejects without a guess.
    """
    answered = data.counts.decided_in(column)
    probs = data.probs[:, column]
    cells: dict[tuple[str, str], float] = {}
    named = np.zeros(len(data.is_wrong), dtype=float)
    for row in np.flatnonzero(table.column == column):
        item = table.item[row]
        if answered[item] == 0:
            continue
        share = table.count[row] / answered[item]
        named[item] += share
        for name in classes_of(data.error_class[item]):
            key = (name, table.resolved[row] or UNMAPPED)
            cells[key] = cells.get(key, 0.0) + float(share)
    for item in np.flatnonzero(data.is_wrong & ~np.isnan(probs)):
        rest = float(probs[item] - named[item])
        for name in classes_of(data.error_class[item]):
            if rest > 1e-12:
                cells[(name, NO_CLASS)] = cells.get((name, NO_CLASS), 0.0) + rest
    classes = sorted({name for name, _ in cells})
    guesses = sorted({guess for _, guess in cells} - {UNMAPPED, NO_CLASS})
    guesses += [label for label in (UNMAPPED, NO_CLASS) if any(guess == label for _, guess in cells)]
    rows = [{"class": name, "values": [cells.get((name, guess), 0.0) for guess in guesses]} for name in classes]
    return {"guesses": guesses, "rows": rows}


def class_data_ensure(data: CalibrationData) -> None:
    """Read the version's taxonomy and the judges' class guesses into the data, once."""
    if data.taxonomy is None:
        data.taxonomy = version_taxonomy(data.gold_set_version)
    if data.guesses is None:
        data.guesses = guess_table_load(data)


def judge_class_figures(data: CalibrationData, column: int) -> dict:
    """Return a judge's per-category catch rates, precision, NPV, class accuracy and unmapped guesses."""
    class_data_ensure(data)
    probs = data.probs[:, column]
    category_of = {entry["class"]: entry["category"] for entry in data.taxonomy.classes}
    by_category = catch_rates_by_category(probs, data.is_wrong, data.error_class, category_of)
    return {
        "catch_rate_by_category": {name: entry["rate"] for name, entry in by_category.items()},
        "catch_rate_by_category_ci95": {name: entry["ci95"] for name, entry in by_category.items()},
        **precision_and_npv(probs, data.is_wrong),
        **guess_figures(data, data.guesses, column),
    }
