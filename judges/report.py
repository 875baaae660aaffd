"""Build the calibration report from loaded arrays: per-judge entries, pairs, ensembles.

This is the one implementation behind the dashboard, `judge_report`, the JSON download and
triage's calibration. `judges.calibration_data` loads the arrays; every number is computed
by `judges.metrics` (one judge) and `judges.ensembles` (judges together); this module
assembles them into the report dict (the JSON contract of `judge_report`).
"""

from __future__ import annotations

import itertools

import numpy as np

from judges import metrics
from judges.calibration_data import CalibrationData, load_calibration
from judges.class_guesses import class_data_ensure, judge_class_figures
from judges.ensembles import ensemble_description, ensemble_metrics, pair_overlap, pareto_frontier
from judges.fitness import fitness_thresholds_of, judge_fitness, judged_kappa_interval, judged_kappa_intervals
from judges.ladder_selectors import ladder_report
from judges.models import CalibrationRun
from judges.run_selection import RunSelection
from judges.sample_size import planner_entry
from judges.slices import MIN_SLICE, calibration_subset, metadata_values, slice_masks
from labelling.models import UNCLASSIFIED, GoldSetVersion
from labelling.split_models import SPLIT_ALL


def judge_entry(
    data: CalibrationData, column: int, generation_cost_usd: float, runs: list[int] | None = None, kappa_ci=...
) -> dict:
    """Return one judge version's entry of the report.

    `runs` (the selected runs it took part in) and `kappa_ci` (its `judged_kappa_interval`)
    are computed here unless given, as `judge_entries` gives them for every judge at once.
    """
    judge = data.judges[column]
    summary = metrics.judge_summary(
        data.counts,
        column,
        data.is_wrong,
        data.error_class,
        cost_sum=float(data.cost_sum[column]),  # NaN: no verdict's cost was measured
        verdicts=int(data.verdicts[column]),
        latencies=data.latency_of(column),
        generation_cost=generation_cost_usd,
    )
    entry = {"name": judge.name, "slug": judge.slug, "version": judge.number, "judge_version_id": judge.id}
    # What the calls recorded, not what the version was registered as (issue 16): a run
    # whose verdicts are of both kinds is "mixed", and both counts are given.
    verdict_count = int(data.verdicts[column])
    simulated = data.simulated_verdicts.get(judge.id, 0)
    if not verdict_count:
        entry["simulation"] = "simulated" if judge.is_simulated else "real"
    else:
        entry["simulation"] = "simulated" if simulated == verdict_count else "real" if not simulated else "mixed"
    entry["simulated"] = entry["simulation"] == "simulated"
    entry["simulated_verdicts"] = simulated
    entry["runs"] = data.runs_of_judges()[column] if runs is None else runs
    # Its own worked examples among the items, left out of every figure of this entry (judges.examples).
    excluded = data.excluded_examples
    entry["excluded_examples"] = int(excluded[column]) if excluded is not None else 0
    entry.update(summary)
    # Per category, precision, NPV and class accuracy (judges.class_metrics), on the version's taxonomy.
    entry.update(judge_class_figures(data, column))
    # Gate, monitor or explore, from the bounds (judges.fitness); κ's interval by a bootstrap of the items.
    probs = data.probs[:, column]
    if kappa_ci is ...:
        kappa_ci = judged_kappa_interval(probs, data.is_wrong)
    thresholds = fitness_thresholds_of(data.gold_set_version.gold_set)  # the gold set's own (issue 30)
    entry.update(judge_fitness(entry, probs, data.is_wrong, data.error_class, kappa_ci, thresholds))
    # How many labelled items an interval of a chosen width, or a difference detected, would need.
    entry["planner"] = planner_entry(entry)
    return entry


def judge_entries(data: CalibrationData, generation_cost_usd: float, baseline: str | None) -> list[dict]:
    """Return the report's `judges`: one entry per judge version, with break-even costs against the baseline."""
    total = len(data.is_wrong)
    runs_of_judges = data.runs_of_judges()
    kappa_cis = judged_kappa_intervals(data.probs, data.is_wrong)
    judges = [
        judge_entry(data, column, generation_cost_usd, runs=runs_of_judges[column], kappa_ci=kappa_cis[column])
        for column in range(len(data.judges))
    ]
    add_break_even(data, judges, baseline, wrong_share=int(data.is_wrong.sum()) / total if total else 0.0)
    return judges


def slices_report(
    data: CalibrationData, key: str, *, min_items: int = MIN_SLICE, generation_cost_usd: float = 0.0, baseline=None
) -> dict:
    """Return the report's `slices`: every judge entry again on the items of each value of a metadata key."""
    class_data_ensure(data)
    values = {}
    for value, keep in slice_masks(metadata_values(data, key), min_items).items():
        subset = calibration_subset(data, keep)
        values[value] = {"items": int(keep.sum()), "judges": judge_entries(subset, generation_cost_usd, baseline)}
    return {"key": key, "values": values}


def sample_warnings(data: CalibrationData, judges: list[dict]) -> list[str]:
    """Say when the judges compared rest on different item sets or different repeat counts."""
    warnings = []
    if len(judges) < 2:
        return warnings
    judged = ~np.isnan(data.probs)
    if not (judged == judged[:, :1]).all():
        listed = ", ".join(f"{j['name']} v{j['version']} {j['items']}" for j in judges)
        warnings.append(
            f"The judges rest on different item sets (items judged: {listed}). Each judge's rates use "
            f"its own items, pairs the items both judged, and ensembles and the Pareto chart the "
            f"{int(data.common_items.sum())} items every judge judged."
        )
    if len({j["repeats"] for j in judges}) > 1:
        listed = ", ".join(f"{j['name']} v{j['version']} {j['repeats']}" for j in judges)
        warnings.append(
            f"The judges rest on different repeat counts (most verdicts on one item: {listed}); "
            f"flip rates and interval widths are not comparable between them."
        )
    return warnings


def report_from_data(data: CalibrationData, *, generation_cost_usd: float = 0.0, baseline: str | None = None) -> dict:
    """Build the report dict (the JSON contract of `judge_report`) from loaded arrays."""
    total = len(data.is_wrong)
    wrong = int(data.is_wrong.sum())
    class_data_ensure(data)
    judges = judge_entries(data, generation_cost_usd, baseline)
    pairs = []
    for a, b in itertools.combinations(range(len(data.judges)), 2):
        pair = pair_overlap(data.draws, data.is_wrong, a, b)
        pairs.append(
            {
                "a": data.judges[a].name,
                "a_version": data.judges[a].number,
                "b": data.judges[b].name,
                "b_version": data.judges[b].number,
                **pair,
            }
        )
    version = data.gold_set_version
    return {
        "gold_set": version.gold_set.name,
        "version": version.number,
        "runs": data.run_ids,
        # {run id: its label} of the runs above ("" for a run without one).
        "run_labels": data.run_labels if data.run_labels is not None else run_labels_get(data.run_ids),
        "run_selection": data.selection.as_dict(),
        # Which part of the version's dev/test split every figure is on: dev, test or all.
        "split": data.split,
        # The error taxonomy the version was published under: its classes and their categories.
        "taxonomy": data.taxonomy.as_report(),
        "generation_cost_usd": generation_cost_usd,
        "baseline": baseline,
        "items": {"total": total, "wrong": wrong, "correct": total - wrong},
        "common_items": {
            "items": int(data.common_items.sum()),
            "wrong": int((data.common_items & data.is_wrong).sum()),
            "rule": "items every judge of the selection judged (ensembles and the Pareto chart)",
        },
        "warnings": sample_warnings(data, judges),
        # Items the version left out at publish (e.g. unresolved ties), and how it resolved the rest.
        "left_out": {
            "count": version.unresolved_count,
            "summary": version.left_out_summary,
            "resolution": version.resolution or "manual",
        },
        # Wrong items without an error class: left out of every per-class figure.
        "unclassified_wrong": int((data.is_wrong & (data.error_class == UNCLASSIFIED)).sum()),
        "judges": judges,
        "pairs": pairs,
        # The verification ladder's rungs among the judges (seed 002): cumulative and marginal.
        "ladder": ladder_report(data=data),
    }


def run_labels_get(run_ids: list[int]) -> dict[int, str]:
    """Return {run id: label} of the runs ("" for a run without a label)."""
    return dict(CalibrationRun.objects.filter(pk__in=run_ids).order_by("pk").values_list("pk", "label"))


def add_break_even(data: CalibrationData, judges: list[dict], baseline: str | None, wrong_share: float) -> None:
    """Fill each judge's break_even_error_cost_usd against the baseline (None without one)."""
    base = judges[data.judge_index(baseline)] if baseline else None
    for entry in judges:
        entry["break_even_error_cost_usd"] = (
            None
            if base is None or entry is base
            else metrics.break_even_error_cost(
                entry["cost_per_accepted_usd"],
                entry["catch_rate"],
                base["cost_per_accepted_usd"],
                base["catch_rate"],
                wrong_share,
            )
        )


def build_report(
    *,
    gold_set_version: GoldSetVersion,
    generation_cost_usd: float = 0.0,
    baseline: str | None = None,
    run_ids=None,
    selection: RunSelection | None = None,
    slice_key: str | None = None,
    min_slice: int = MIN_SLICE,
    split: str = SPLIT_ALL,
) -> dict:
    """Load a gold-set version's verdicts and return the calibration report dict.

    `baseline` names a judge ("name" or "name:N") for break-even costs; `run_ids` limits
    the runs to named ones, `selection` chooses them by ids, labels and dates (default: every
    completed run on the version). `slice_key` adds `slices`: every judge figure per value of
    that item metadata key (values with fewer than `min_slice` items pooled as `other`).
    Raises ValueError when the baseline judge has no verdicts there or a named run is not on
    the version. `split` keeps one part of the version's dev/test split (dev, test; default all).
    """
    data = load_calibration(gold_set_version=gold_set_version, selection=selection, run_ids=run_ids, split=split)
    report = report_from_data(data, generation_cost_usd=generation_cost_usd, baseline=baseline)
    if slice_key:
        report["slices"] = slices_report(
            data, slice_key, min_items=min_slice, generation_cost_usd=generation_cost_usd, baseline=baseline
        )
    return report


def ensemble_entry(
    data: CalibrationData,
    members: list[int],
    rule: str,
    *,
    generation_cost_usd: float = 0.0,
    k: int | None = None,
    latency: bool = True,
) -> dict:
    """Return an ensemble's metrics over the judge columns `members`, on single draws and common items.

    Raises ValueError for an unknown rule or a k outside 1..len(members). `latency=False`: no latency keys.
    """
    result = ensemble_metrics(
        data.draws,
        data.is_wrong,
        members,
        rule,
        items=data.common_items,
        cost_per_verdict=data.cost_per_verdict,
        generation_cost=generation_cost_usd,
        k=k,
        latency=latency,
    )
    result["members"] = [data.judges[i].label for i in members]
    result["rule"] = rule
    result["description"] = ensemble_description(result["members"], rule, k)
    result["cost_note"] = unknown_cost_note(data, members)
    return result


def unknown_cost_note(data: CalibrationData, members: list[int]) -> str:
    """Say which members have no measured cost (then the ensemble's cost is unknown); "" when none."""
    unknown = [data.judges[i].label for i in members if np.isnan(data.cost_per_verdict[i])]
    if not unknown:
        return ""
    return (
        f"Cost unknown: {', '.join(unknown)} {'has' if len(unknown) == 1 else 'have'} no measured cost "
        "(imported without one), so its cost per accepted output is not computed and it is left off the "
        "Pareto frontier, never counted as $0."
    )


def ensembles_up_to(
    data: CalibrationData,
    *,
    max_size: int = 3,
    rules=("any", "majority"),
    generation_cost_usd: float = 0.0,
    false_reject_ceiling: float = 1.0,
    latency: bool = True,
) -> list[dict]:
    """Score every ensemble of up to `max_size` judges; mark the Pareto frontier (`latency`: as `ensemble_entry`).

    Every point is scored on the same items (`CalibrationData.common_items`). Points above
    the false-reject ceiling are kept but flagged `over_ceiling` and left off the frontier,
    which runs over cost per accepted (lower) and catch rate (higher); so are points whose
    cost is unknown (a member without a measured cost), with their `cost_note`.
    """
    points = []
    for size in range(1, min(max_size, len(data.judges)) + 1):
        for members in itertools.combinations(range(len(data.judges)), size):
            for rule in rules if size > 1 else ("any",):
                entry = ensemble_entry(
                    data, list(members), rule, generation_cost_usd=generation_cost_usd, latency=latency
                )
                if size == 1:
                    entry["rule"] = "single"
                    entry["description"] = ensemble_description(entry["members"], "single")
                entry["over_ceiling"] = (entry["false_reject_rate"] or 0) > false_reject_ceiling
                points.append(entry)
    eligible = [p for p in points if not p["over_ceiling"]]
    frontier = pareto_frontier([p["cost_per_accepted_usd"] for p in eligible], [p["catch_rate"] for p in eligible])
    for point in points:
        point["pareto"] = False
    for point, on_frontier in zip(eligible, frontier, strict=True):
        point["pareto"] = on_frontier
    return points


def marginal_values(data: CalibrationData, members: list[int], generation_cost_usd: float) -> list[dict]:
    """Return, for each judge not in the ensemble, extra errors caught per extra dollar ("any" rule).

    Per output: wrong share × Δ catch rate ÷ Δ cost per accepted output, on the common items.
    When either ensemble's cost is unknown, so are Δ cost and catches per dollar (None, with
    a `cost_note`), never computed as if the unknown cost were $0.
    """
    base = ensemble_entry(data, members, "any", generation_cost_usd=generation_cost_usd)
    common = data.common_items
    wrong_share = float(data.is_wrong[common].mean()) if common.any() else 0.0
    rows = []
    for column in range(len(data.judges)):
        if column in members:
            continue
        grown = ensemble_entry(data, [*members, column], "any", generation_cost_usd=generation_cost_usd)
        extra_catch = (grown["catch_rate"] or 0) - (base["catch_rate"] or 0)
        costs = (grown["cost_per_accepted_usd"], base["cost_per_accepted_usd"])
        extra_cost = None if None in costs else costs[0] - costs[1]
        rows.append(
            {
                "judge": data.judges[column],
                "extra_catch_rate": extra_catch,
                "extra_false_reject_rate": (grown["false_reject_rate"] or 0) - (base["false_reject_rate"] or 0),
                "extra_cost_per_accepted_usd": extra_cost,
                "catches_per_dollar": wrong_share * extra_catch / extra_cost if extra_cost and extra_cost > 0 else None,
                "cost_note": grown["cost_note"],
            }
        )
    return sorted(rows, key=lambda row: -(row["catches_per_dollar"] or 0))
