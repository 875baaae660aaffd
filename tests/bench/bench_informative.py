"""Benchmark: labelling the demo set in "informative first" order vs in random order.

The demo gold set (labelling/data/demo_gold.jsonl: 223 items, 45 wrong over 7 classes)
is judged, 3 draws each, by the three simulated demo judges, with the simulator's own
decision rule (`simulator.Simulator.decide`, seeded) and no HTTP or database.
Labelling is then replayed one item at a time from nothing: in informative-first order
(`judges.informative`, re-scored after every label as the class counts grow) and in 40
random orders. After each label the judge comparison's uncertainty is measured on the
items labelled so far:

- per class: the mean over judges and error classes of the catch rate's 95% Wilson width
  (a class with no labelled wrong item yet spans the whole axis);
- overall: the mean over judges of the catch rate's width.

For a target width (the width with every item labelled, plus 25% and plus 50%), the
result is how many labels each order needs to reach it: reported as labels saved and as
the ratio informative / random (the random baseline is the mean over its orders). No
fixed target: this measures the claim, it does not gate it.

    python -m tests.bench.bench_informative       # prints the results as JSON lines
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import numpy as np

from judges.informative import informative_order, informative_scores
from judges.interval_budget import interval_width
from simulator.vendor import DEFAULT_MODELS, Simulator, Truth

DEMO_GOLD = Path(__file__).resolve().parents[2] / "labelling" / "data" / "demo_gold.jsonl"
JUDGES = ("sim-claude-judge", "sim-gpt-judge", "sim-llama-judge")
REPEATS = 3
RANDOM_ORDERS = 40
SLACKS = (1.25, 1.5)


def demo_items() -> list[dict]:
    with open(DEMO_GOLD, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def judge_demo(items: list[dict], seed: int = 19) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Return (reject probability items × judges, class votes items × classes, classes)."""
    simulator = Simulator()
    simulator.rng = random.Random(seed)
    classes = sorted({item["error_class"] for item in items if item["label"] == "wrong"})
    probs = np.zeros((len(items), len(JUDGES)))
    votes = np.zeros((len(items), len(classes)))
    for row, item in enumerate(items):
        truth = Truth(wrong=item["label"] == "wrong", error_class=item["error_class"] or "")
        for column, name in enumerate(JUDGES):
            for _ in range(REPEATS):
                verdict = simulator.decide(name, DEFAULT_MODELS[name], item["sql"], truth)
                if verdict["decision"] == "reject":
                    probs[row, column] += 1 / REPEATS
                    if verdict["error_class"] in classes:
                        votes[row, classes.index(verdict["error_class"])] += 1
    return probs, votes, classes


def comparison_widths(labelled: np.ndarray, probs, is_wrong, class_of, n_classes) -> tuple[float, float]:
    """Return (mean per-class width, mean overall width) of the judges' catch rates on labelled items."""
    per_class, overall = [], []
    for column in range(probs.shape[1]):
        wrong = labelled & is_wrong
        rate = probs[wrong, column].mean() if wrong.any() else None
        overall.append(interval_width(rate=rate, n=int(wrong.sum())))
        for slug in range(n_classes):
            of_class = wrong & (class_of == slug)
            n = int(of_class.sum())
            per_class.append(interval_width(rate=probs[of_class, column].mean() if n else None, n=n))
    return float(np.mean(per_class)), float(np.mean(overall))


def curve(order: list[int], probs, is_wrong, class_of, n_classes) -> np.ndarray:
    """Return labels × 2: the comparison widths after each label of `order`."""
    labelled = np.zeros(len(is_wrong), dtype=bool)
    widths = []
    for row in order:
        labelled[row] = True
        widths.append(comparison_widths(labelled, probs, is_wrong, class_of, n_classes))
    return np.array(widths)


def informative_sequence(probs, votes, is_wrong, class_of, n_classes) -> list[int]:
    """Replay informative-first labelling: re-score the waiting items after every label."""
    waiting = list(range(len(is_wrong)))
    counts = [0] * n_classes
    sequence = []
    while waiting:
        scores = informative_scores(probs=probs[waiting], class_votes=votes[waiting], class_counts=counts)
        chosen = informative_order(ids=waiting, scores=scores)[0]
        sequence.append(chosen)
        waiting.remove(chosen)
        if is_wrong[chosen]:
            counts[class_of[chosen]] += 1
    return sequence


def labels_to_reach(widths: np.ndarray, target: float) -> int:
    """Return the number of labels after which the width first stays at or under target."""
    above = np.flatnonzero(widths > target)
    return int(above[-1]) + 2 if len(above) else 1


def run() -> list[dict]:
    started = time.perf_counter()
    items = demo_items()
    probs, votes, classes = judge_demo(items)
    is_wrong = np.array([item["label"] == "wrong" for item in items])
    class_of = np.array([classes.index(item["error_class"]) if item["label"] == "wrong" else -1 for item in items])
    informative = curve(
        informative_sequence(probs, votes, is_wrong, class_of, len(classes)), probs, is_wrong, class_of, len(classes)
    )
    rng = random.Random(7)
    randoms = []
    for _ in range(RANDOM_ORDERS):
        order = list(range(len(items)))
        rng.shuffle(order)
        randoms.append(curve(order, probs, is_wrong, class_of, len(classes)))
    results = []
    for index, figure in enumerate(("per-class", "overall")):
        final = informative[-1, index]
        for slack in SLACKS:
            target = final * slack
            needed = labels_to_reach(informative[:, index], target)
            baseline = float(np.mean([labels_to_reach(r[:, index], target) for r in randoms]))
            tag = f"{figure} width {target:.3f} ({slack:g}x the full set's)"
            results.append({"name": f"informative first: labels to reach the {tag}", "value": needed, "unit": "labels"})
            results.append(
                {
                    "name": f"random order: labels to reach the {tag} (mean of {RANDOM_ORDERS})",
                    "value": round(baseline, 1),
                    "unit": "labels",
                }
            )
            results.append(
                {"name": f"informative / random labels, {tag}", "value": round(needed / baseline, 3), "unit": "ratio"}
            )
            results.append(
                {
                    "name": f"labels saved by informative first, {tag}",
                    "value": round(baseline - needed, 1),
                    "unit": "labels",
                }
            )
    results.append(
        {"name": "informative-first simulation seconds", "value": round(time.perf_counter() - started, 2), "unit": "s"}
    )
    return results


if __name__ == "__main__":
    for result in run():
        print(json.dumps(result))
