"""Property tests: on random verdict tables every page states the same figures.

Random gold sets (wrong/correct items), 1-3 judges with 1-5 repeats, errors, items a judge
never judged, and sometimes a second run in which only some judges took part. For each:
the dashboard's figures equal the JSON report's, the report's equal an independent
computation from the raw table, every heatmap cell and UpSet bar equals the sum of the
probabilities its click-through list shows, and triage's calibration equals the report's.
"""

import json
import re
from decimal import Decimal

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from config.roles import ML_ENGINEER, ensure_role_groups
from judges.models import Verdict
from judges.report import build_report
from judges.tests import twins
from judges.tests.calibration_builders import item_queries, make_gold_set, make_judge_version, make_run
from triage.monitoring import calibration_for_live_judge

# Shrinking a failure of a test this size takes minutes; report the example as found.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
DECISIONS = ["accept", "reject", "error", None]  # None: no verdict at all


@st.composite
def verdict_tables(draw):
    """Draw items, judges and runs: {"wrong": [...], "runs": [{judge: [[decision per repeat] per item]}]}."""
    n_items = draw(st.integers(2, 9))
    wrong = draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items))
    n_judges = draw(st.integers(1, 3))
    # Answered verdicts twice as likely as errors or gaps.
    weighted = st.one_of(st.sampled_from(["accept", "reject"]), st.sampled_from(DECISIONS))
    runs = []
    for run_index in range(draw(st.integers(1, 2))):
        judges = range(n_judges) if run_index == 0 else draw(st.sets(st.integers(0, n_judges - 1), min_size=1))
        run = {}
        for judge in judges:
            repeats = draw(st.integers(1, 5 if run_index == 0 else 2))
            run[judge] = [[draw(weighted) for _ in range(repeats)] for _ in range(n_items)]
        runs.append(run)
    latency = draw(st.lists(st.integers(1, 5000), min_size=n_judges, max_size=n_judges))
    cost = draw(st.lists(st.sampled_from(["0", "0.01", "0.072"]), min_size=n_judges, max_size=n_judges))
    return {"wrong": wrong, "n_judges": n_judges, "runs": runs, "latency": latency, "cost": cost}


def store(table):
    """Write the table as a gold-set version, judge versions, completed runs and verdicts."""
    labels = [
        ("wrong", "join_fanout" if i % 2 else "missing_filter") if w else ("correct", "")
        for i, w in enumerate(table["wrong"])
    ]
    version = make_gold_set("prop", labels)
    judges = [make_judge_version(f"judge-{j}") for j in range(table["n_judges"])]
    queries = item_queries(version)
    runs = []
    for index, run_table in enumerate(table["runs"]):
        run = make_run(version, label=f"run-{index}", repeats=max(len(r[0]) for r in run_table.values()))
        runs.append(run)
        verdicts = []
        for judge, rows in run_table.items():
            run.judge_versions.add(judges[judge])
            for query, repeats in zip(queries, rows, strict=True):
                for repeat, decision in enumerate(repeats):
                    if decision is None:
                        continue
                    verdicts.append(
                        Verdict(
                            judge_version=judges[judge],
                            query=query,
                            run=run,
                            repeat=repeat,
                            decision=decision,
                            cost_usd=Decimal(table["cost"][judge]),
                            latency_ms=table["latency"][judge] + repeat,
                            model_reported="sim-model",
                        )
                    )
        Verdict.objects.bulk_create(verdicts)
    return version, judges, runs


def independent_probs(table):
    """Reject share of answered verdicts per item × judge, straight from the raw table."""
    n_items = len(table["wrong"])
    rejects = np.zeros((n_items, table["n_judges"]))
    answered = np.zeros((n_items, table["n_judges"]))
    for run_table in table["runs"]:
        for judge, rows in run_table.items():
            for item, repeats in enumerate(rows):
                rejects[item, judge] += sum(d == "reject" for d in repeats)
                answered[item, judge] += sum(d in ("accept", "reject") for d in repeats)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(answered > 0, rejects / np.maximum(answered, 1), np.nan)


def draw_table(table):
    """Return the table as twins read it: items × judges × decisions in draw order (run, repeat)."""
    return [
        [
            [d for run_table in table["runs"] if judge in run_table for d in run_table[judge][item]]
            for judge in range(table["n_judges"])
        ]
        for item in range(len(table["wrong"]))
    ]


def figures_on_page(html):
    """Return {judge version id: {figure: data-value}} from the dashboard's judges table."""
    result = {}
    for row in re.findall(r'<tr data-judge-version="(\d+)">(.*?)</tr>', html, flags=re.S):
        result[int(row[0])] = dict(re.findall(r'data-figure="([a-z_0-9]+)"[^>]*?data-value="([^"]*)"', row[1]))
    return result


def as_number(text):
    return None if text == "" else float(text)


def listed_probabilities(html):
    values = [float(v) for v in re.findall(r'class="num missed-probability" data-value="([^"]+)"', html)]
    total = float(re.search(r'class="missed-total" data-value="([^"]+)"', html).group(1))
    return values, total


def ml_engineer_client() -> Client:
    ensure_role_groups()
    user = get_user_model().objects.create_user(username="ml", password="pw-for-tests")
    user.groups.add(Group.objects.get(name=ML_ENGINEER))
    client = Client()
    client.force_login(user)
    return client


class FiguresAgreeEverywhere(TestCase):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
    @given(table=verdict_tables())
    def test_dashboard_report_lists_and_triage_state_the_same_figures(self, table):
        client = ml_engineer_client()
        version, judges, runs = store(table)
        report = build_report(gold_set_version=version)
        probs = independent_probs(table)
        is_wrong = np.array(table["wrong"])

        # The report against the raw table.
        assert report["runs"] == [run.pk for run in runs]
        for entry in report["judges"]:
            column = next(j for j, jv in enumerate(judges) if jv.pk == entry["judge_version_id"])
            p = probs[:, column]
            judged = ~np.isnan(p)
            assert entry["items"] == int(judged.sum())
            assert entry["runs"] == [run.pk for run, t in zip(runs, table["runs"], strict=True) if column in t]
            assert entry["verdicts"] == sum(
                sum(d is not None for repeats in t[column] for d in repeats) for t in table["runs"] if column in t
            )
            most = [
                sum(len([d for d in t[column][i] if d is not None]) for t in table["runs"] if column in t)
                for i in range(len(is_wrong))
            ]
            assert entry["repeats"] == max(most)
            if (judged & is_wrong).any():
                assert entry["catch_rate"] == pytest.approx(p[judged & is_wrong].mean())
            else:
                assert entry["catch_rate"] is None
            if (judged & ~is_wrong).any():
                assert entry["false_reject_rate"] == pytest.approx(p[judged & ~is_wrong].mean())

        # The dashboard's table states the JSON's numbers.
        url = reverse("judges:dashboard", args=[version.pk])
        html = client.get(url).content.decode()
        page = figures_on_page(html)
        assert set(page) == {entry["judge_version_id"] for entry in report["judges"]}
        for entry in report["judges"]:
            shown = page[entry["judge_version_id"]]
            assert shown["runs"] == ",".join(map(str, entry["runs"]))
            for figure in ("items", "repeats", "verdicts", "errors", "unjudged"):
                assert int(shown[figure]) == entry[figure], figure
            for figure in (
                "catch_rate",
                "false_reject_rate",
                "flag_rate",
                "flip_rate",
                "kappa_vs_gold",
                "cost_per_verdict_usd",
                "cost_per_accepted_usd",
                "latency_ms_p50",
                "latency_ms_p95",
            ):
                expected = entry[figure]
                if expected is None:
                    assert shown[figure] == "", figure
                else:
                    assert as_number(shown[figure]) == pytest.approx(expected, rel=1e-12, abs=1e-12), figure
        json_report = client.get(reverse("judges:dashboard-report-json", args=[version.pk])).json()
        assert json_report == json.loads(json.dumps(report))
        assert ("different item sets" in " ".join(report["warnings"])) == bool(
            len({tuple(~np.isnan(probs[:, j])) for j in range(len(judges))}) > 1
        )
        for warning in report["warnings"]:
            assert escape(warning) in html

        # Every heatmap cell equals the sum of the probabilities its list shows.
        missed_url = reverse("judges:dashboard-missed", args=[version.pk])
        pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
        for a_id, b_id, value in re.findall(r'data-both_missed="(\d+)-(\d+)" data-value="([^"]*)"', html):
            listing = client.get(missed_url, {"judge": [a_id, b_id]}).content.decode()
            values, total = listed_probabilities(listing)
            assert values == sorted(values, reverse=True) and all(v > 0 for v in values)
            assert sum(values) == pytest.approx(float(value), abs=1e-9)
            assert total == pytest.approx(float(value), abs=1e-9)
        draws = draw_table(table)
        for pair in pairs.values():
            a = next(j for j, jv in enumerate(judges) if jv.judge.name == pair["a"])
            b = next(j for j, jv in enumerate(judges) if jv.judge.name == pair["b"])
            twin = twins.pair(draws, table["wrong"], a, b)
            assert pair["both_missed"] == pytest.approx(twin["both_missed"])
            assert pair["union_catch_rate"] == (
                None if twin["union_catch_rate"] is None else pytest.approx(twin["union_catch_rate"])
            )

        # UpSet bars: each equals its list, and together the expected number missed by anyone
        # (on aligned draws of every judge).
        patterns = twins.miss_patterns(draws, table["wrong"], len(judges))
        missed_by_any = sum(size for pattern, size in patterns.items() if any(pattern))
        bars = re.findall(r'<g class="col cell" data-value="([^"]+)" hx-get="[^"?]*\?([^"]*)"', html)
        if len(judges) > 1:
            shown_any = float(re.search(r'id="upset-missed-by-any" data-value="([^"]+)"', html).group(1))
            assert shown_any == pytest.approx(missed_by_any)
            assert sum(float(v) for v, _ in bars) == pytest.approx(missed_by_any)
        for value, query in bars:
            ids = re.findall(r"judge=(\d+)", query)
            listing = client.get(missed_url, {"judge": ids, "exact": "1"}).content.decode()
            values, _ = listed_probabilities(listing)
            assert sum(values) == pytest.approx(float(value))

        # Triage's calibration is the report's figure for the same runs.
        for entry in report["judges"]:
            jv = next(jv for jv in judges if jv.pk == entry["judge_version_id"])
            calibration = calibration_for_live_judge(jv)
            assert calibration.runs == entry["runs"]
            if entry["catch_rate"] is None:
                assert calibration.catch.estimate is None
            else:
                assert calibration.catch.estimate == entry["catch_rate"]
                assert (calibration.catch.low, calibration.catch.high) == tuple(entry["catch_rate_ci95"])
            assert calibration.false_reject.estimate == entry["false_reject_rate"]
            assert calibration.wrong == entry["judged_wrong"] and calibration.correct == entry["judged_correct"]
