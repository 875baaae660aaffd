"""A dataset shaped like a public text-to-SQL benchmark, imported in one command each, every figure recomputed.

The data is generated here (numpy, seeded): 11 databases of uneven size, a two-level taxonomy
of 9 categories and 31 classes (plus a checker's class mapped onto one), wrong items with one to
five classes (some as "a;b", some one line per class, some unclassified), metadata columns, a
judge whose verdicts are a numeric is_bug column with class guesses, and a second judge with two
repeats, errors and guesses. The figures of `judge_report --format json` — per class, per
category, precision, NPV, class accuracy, unmapped guesses, and all of them per slice — are
compared with an independent computation written from the definitions (README, "Definitions").
"""

import csv
import io
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from labelling.models import GoldSetVersion

pytestmark = pytest.mark.django_db

RNG_SEED = 29
N_ITEMS = 320
CATEGORY_SIZES = [4, 4, 4, 3, 3, 3, 3, 4, 3]  # 31 classes
CHECKER_CLASS = "unknown_object"  # the verifier's own class, mapped onto the first class
UNMAPPED = "Nonsense Class"
Z = 1.959964


def wilson(p, n):
    """The Wilson score interval, written out again from the formula."""
    if p is None or n <= 0:
        return None
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return [max(0.0, centre - half), min(1.0, centre + half)]


class Dataset:
    """Everything generated, kept as plain Python for the independent computation."""

    def __init__(self, rng):
        self.classes = [
            (f"C{c} sub {j}", f"Category {c}") for c, size in enumerate(CATEGORY_SIZES) for j in range(size)
        ]
        self.category = dict(self.classes)
        names = [name for name, _ in self.classes]
        db_weights = np.array([30, 25, 20, 15, 12, 10, 8, 6, 4, 3, 2], dtype=float)
        self.items = []
        for i in range(N_ITEMS):
            wrong = bool(rng.random() < 0.5)
            classes = []
            if wrong and rng.random() > 0.08:  # about 8% of wrong items say only "wrong"
                classes = sorted(rng.choice(names, size=int(rng.integers(1, 6)), replace=False).tolist())
            self.items.append(
                {
                    "id": f"b{i:04d}",
                    "wrong": wrong,
                    "classes": classes,
                    "db_id": f"db_{int(rng.choice(11, p=db_weights / db_weights.sum())):02d}",
                    "difficulty": str(rng.choice(["simple", "moderate", "challenging"], p=[0.55, 0.3, 0.15])),
                }
            )
        self.names = names
        # verdicts[judge] = list of (item index, decision, guess)
        self.verdicts = {"alpha": [], "beta": []}
        for index, item in enumerate(self.items):
            reject = rng.random() < (0.8 if item["wrong"] else 0.15)
            self.verdicts["alpha"].append((index, "reject" if reject else "accept", self.guess(rng, item, reject)))
            for _repeat in range(2):
                roll = rng.random()
                decision = "error" if roll < 0.06 else "reject" if roll < (0.7 if item["wrong"] else 0.25) else "accept"
                self.verdicts["beta"].append((index, decision, self.guess(rng, item, decision == "reject")))

    def guess(self, rng, item, reject):
        if not reject:
            return ""
        roll = rng.random()
        if roll < 0.45 and item["classes"]:
            return str(rng.choice(item["classes"]))
        if roll < 0.6:
            return CHECKER_CLASS
        if roll < 0.7:
            return UNMAPPED
        if roll < 0.8:
            return ""
        return str(rng.choice(self.names))

    def resolve(self, guess):
        if guess == CHECKER_CLASS:
            return self.names[0]
        return guess if guess in self.names else None


def write_files(data, tmp_path):
    taxonomy = tmp_path / "taxonomy.csv"
    with taxonomy.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["class", "category", "description", "maps_to"])
        writer.writerows([name, category, f"about {name}", ""] for name, category in data.classes)
        writer.writerow([CHECKER_CLASS, "", "", data.names[0]])
    gold = tmp_path / "gold.csv"
    with gold.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "question", "sql", "label", "error_class", "db_id", "difficulty", "evidence"])
        for n, item in enumerate(data.items):
            base = [item["id"], f"question {n}", f"SELECT {n}", "0" if item["wrong"] else "1"]
            meta = [item["db_id"], item["difficulty"], "a hint"]
            if n % 2 and len(item["classes"]) > 1:  # one line per class, the other half "a;b"
                writer.writerows([*base, name, *meta] for name in item["classes"])
            else:
                writer.writerow([*base, ";".join(item["classes"]), *meta])
    alpha = tmp_path / "alpha.csv"
    with alpha.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["item_id", "is_bug", "error_guess"])
        writer.writerows([data.items[i]["id"], "1" if d == "reject" else "0", g] for i, d, g in data.verdicts["alpha"])
    beta = tmp_path / "beta.csv"
    with beta.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["item_id", "repeat", "verdict", "guess"])
        for k, (i, d, g) in enumerate(data.verdicts["beta"]):
            writer.writerow([data.items[i]["id"], k % 2, d, g])
    return taxonomy, gold, alpha, beta


def command(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def expected_figures(data, judge, keep):
    """The figures of one judge on the items of `keep`, from the definitions alone."""
    rejects = np.zeros(N_ITEMS)
    answered = np.zeros(N_ITEMS)
    matched = np.zeros(N_ITEMS)
    for i, decision, guess in data.verdicts[judge]:
        if decision == "error":
            continue
        answered[i] += 1
        if decision == "reject":
            rejects[i] += 1
            if data.items[i]["wrong"] and data.resolve(guess) in data.items[i]["classes"]:
                matched[i] += 1
    judged = [i for i in range(N_ITEMS) if keep[i] and answered[i] > 0]
    p = {i: rejects[i] / answered[i] for i in judged}
    wrong = [i for i in judged if data.items[i]["wrong"]]

    def rate(items):
        return (sum(p[i] for i in items) / len(items), len(items)) if items else (None, 0)

    by_class, by_category = {}, {}
    present = {name for i in range(N_ITEMS) if keep[i] and data.items[i]["wrong"] for name in data.items[i]["classes"]}
    for name in sorted(present):
        by_class[name] = rate([i for i in wrong if name in data.items[i]["classes"]])
    for category in sorted({data.category[name] for name in present}):
        by_category[category] = rate(
            [i for i in wrong if category in {data.category[c] for c in data.items[i]["classes"]}]
        )
    rejected = sum(p.values())
    accepted = sum(1 - v for v in p.values())
    classified = [i for i in wrong if data.items[i]["classes"]]
    guessed_rejects = sum(
        1 for i, d, g in data.verdicts[judge] if d == "reject" and g and keep[i] and data.items[i]["wrong"]
    )
    unmapped = {}
    for i, d, g in data.verdicts[judge]:
        if d == "reject" and keep[i] and data.items[i]["wrong"] and g and data.resolve(g) is None:
            unmapped[g] = unmapped.get(g, 0) + 1
    accuracy_denominator = sum(p[i] for i in classified)
    accuracy = sum(matched[i] / answered[i] for i in classified) / accuracy_denominator if guessed_rejects else None
    return {
        "by_class": by_class,
        "by_category": by_category,
        "precision": (sum(p[i] for i in wrong) / rejected, math.floor(rejected)),
        "npv": (sum(1 - p[i] for i in judged if not data.items[i]["wrong"]) / accepted, math.floor(accepted)),
        "class_accuracy": (accuracy, math.floor(accuracy_denominator + 1e-9)),
        "unmapped": unmapped,
    }


def assert_close(actual, expected, where):
    if expected is None or actual is None:
        assert actual == expected, where
        return
    if isinstance(expected, list):
        assert len(actual) == len(expected), where
        for a, e in zip(actual, expected, strict=True):
            assert abs(a - e) < 1e-9, f"{where}: {actual} != {expected}"
        return
    assert abs(actual - expected) < 1e-9, f"{where}: {actual} != {expected}"


def check_judge(entry, expected, where):
    assert set(entry["catch_rate_by_error_class"]) == set(expected["by_class"]), where
    for name, (rate, n) in expected["by_class"].items():
        assert_close(entry["catch_rate_by_error_class"][name], rate, f"{where} class {name}")
        assert_close(entry["catch_rate_by_error_class_ci95"][name], wilson(rate, n), f"{where} class {name} ci")
    assert set(entry["catch_rate_by_category"]) == set(expected["by_category"]), where
    for name, (rate, n) in expected["by_category"].items():
        assert_close(entry["catch_rate_by_category"][name], rate, f"{where} category {name}")
        assert_close(entry["catch_rate_by_category_ci95"][name], wilson(rate, n), f"{where} category {name} ci")
    for key in ("precision", "npv", "class_accuracy"):
        value, n = expected[key]
        assert_close(entry[key], value, f"{where} {key}")
        assert_close(entry[f"{key}_ci95"], wilson(value, n), f"{where} {key} ci")
    assert entry["unmapped_guesses"] == expected["unmapped"], where


@pytest.fixture
def imported(tmp_path):
    data = Dataset(np.random.default_rng(RNG_SEED))
    taxonomy, gold, alpha, beta = write_files(data, tmp_path)
    said = command("import_gold", str(gold), "--gold-set", "bench", "--taxonomy", str(taxonomy),
                   "--metadata-columns", "db_id,difficulty")  # fmt: skip
    assert "Kept as metadata: db_id, difficulty. Ignored fields: evidence." in said
    base = ["import_verdicts", "--gold-set", "bench", "--format", "csv", "--map", "query_id=item_id"]
    command(*base, str(alpha), "--judge", "alpha", "--map", "decision=is_bug", "--positive-means", "reject",
            "--map", "error_class_guess=error_guess", "--run", "alpha-run")  # fmt: skip
    command(*base, str(beta), "--judge", "beta", "--map", "decision=verdict", "--map", "error_class_guess=guess",
            "--run", "beta-run")  # fmt: skip
    return data


def report(*args):
    return json.loads(command("judge_report", "--gold-set", "bench", "--format", "json", *args))


def test_every_per_class_per_category_and_class_accuracy_figure_matches_an_independent_computation(imported):
    data = imported
    result = report()
    assert result["taxonomy"] == {
        "name": "bench",
        "version": 1,
        "classes": [{"class": name, "category": category} for name, category in data.classes],
    }
    assert sorted(result["run_labels"].values()) == ["alpha-run", "beta-run"]
    every = np.ones(N_ITEMS, dtype=bool)
    assert [entry["name"] for entry in result["judges"]] == ["alpha", "beta"]
    for entry in result["judges"]:
        check_judge(entry, expected_figures(data, entry["name"], every), entry["name"])
        # The data exercises what it should: every class and category, real accuracy, unmapped guesses.
        assert len(entry["catch_rate_by_error_class"]) == 31 and len(entry["catch_rate_by_category"]) == 9
        assert 0 < entry["class_accuracy"] < 1 and entry["unmapped_guesses"][UNMAPPED] > 0
    assert result["judges"][1]["repeats"] == 2 and result["judges"][1]["errors"] > 0


@pytest.mark.parametrize(("key", "min_slice"), [("difficulty", 30), ("db_id", 30)])
def test_every_figure_per_slice_matches_too_with_small_values_pooled_as_other(imported, key, min_slice):
    data = imported
    result = report("--slice", key, "--min-slice", str(min_slice), "--runs", "alpha-run,beta-run")
    counts = {}
    for item in data.items:
        counts[item[key]] = counts.get(item[key], 0) + 1
    kept = sorted(value for value, n in counts.items() if n >= min_slice)
    expected_values = kept + (["other"] if any(n < min_slice for n in counts.values()) else [])
    assert result["slices"]["key"] == key and list(result["slices"]["values"]) == expected_values
    for value, entry in result["slices"]["values"].items():
        keep = np.array(
            [(item[key] == value) if value != "other" else counts[item[key]] < min_slice for item in data.items]
        )
        assert entry["items"] == int(keep.sum())
        for judge in entry["judges"]:
            check_judge(judge, expected_figures(data, judge["name"], keep), f"{key}={value} {judge['name']}")


def test_a_numeric_decision_column_without_positive_means_imports_nothing(imported, tmp_path):
    _, _, alpha, _ = write_files(imported, tmp_path)
    with pytest.raises(CommandError, match="--positive-means"):
        command("import_verdicts", str(alpha), "--gold-set", "bench", "--format", "csv", "--map", "query_id=item_id",
                "--judge", "gamma", "--map", "decision=is_bug")  # fmt: skip
    assert "gamma" not in [j["name"] for j in report()["judges"]]


def test_the_dashboard_shows_categories_class_guesses_and_slices(imported, client_for):
    version = GoldSetVersion.objects.get(gold_set__name="bench")
    url = reverse("judges:dashboard", args=[version.pk])
    client = client_for("ml_engineer")
    html = client.get(url).content.decode()
    assert 'id="category-table"' in html and 'data-category="Category 8"' in html
    assert "Unmapped guesses" in html and UNMAPPED in html and "class-guess-table" in html
    assert '<option value="difficulty"' in html and 'id="slice-table"' not in html
    sliced = client.get(url, {"slice": "difficulty", "min_slice": "30"}).content.decode()
    assert 'data-slice="simple" data-judge="alpha"' in sliced and 'data-figure="precision"' in sliced
