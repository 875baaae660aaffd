"""Property test on the database: every surface states the twin's figures, under the source filter.

Random verdict tables are stored as a gold-set version whose items are organic or
mutation-seeded, with judges whose verdicts have a cost or (imported) none. For a random
`source` selection, the dashboard's judges table, `judge_report --format json`, `--format
csv`, the dashboard's JSON and CSV downloads and triage's calibration are each held equal
to figures computed from the raw table by `judges.tests.twins` — not to one another's
functions — so a column that ignores the selection (as "Verdicts" once ignored the source)
or a cost read as $0 fails here.
"""

import csv
import io
import json
import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from config.roles import ML_ENGINEER, ensure_role_groups
from judges.models import Verdict
from judges.tests import twins
from judges.tests.calibration_builders import item_queries, make_gold_set, make_judge_version, make_run
from labelling.models import Query, QueryOrigin
from triage.monitoring import calibration_for_live_judge

PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
FIGURES = ("verdicts", "errors", "items", "unjudged", "catch_rate", "false_reject_rate", "cost_per_verdict_usd")
DECISION = st.one_of(st.sampled_from(["accept", "reject"]), st.sampled_from(["accept", "reject", "error", None]))


@st.composite
def stored_tables(draw):
    n_items = draw(st.integers(2, 8))
    n_judges = draw(st.integers(1, 3))
    repeats = draw(st.integers(1, 3))
    return {
        "table": [[[draw(DECISION) for _ in range(repeats)] for _ in range(n_judges)] for _ in range(n_items)],
        "wrong": draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items)),
        "mutated": draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items)),
        # None: imported without a cost (unknown, never $0).
        "cost": draw(st.lists(st.sampled_from(["0.01", "0.03", None]), min_size=n_judges, max_size=n_judges)),
        "source": draw(st.sampled_from(["both", "organic", "mutated"])),
    }


def store(drawn):
    """Write the table: one gold-set version, one completed run, one verdict per decision."""
    labels = [("wrong", "join_fanout") if wrong else ("correct", "") for wrong in drawn["wrong"]]
    version = make_gold_set("surfaces", labels)
    queries = item_queries(version)
    mutated = [q.pk for q, m in zip(queries, drawn["mutated"], strict=True) if m]
    Query.objects.filter(pk__in=mutated).update(origin=QueryOrigin.MUTATED)
    n_judges = len(drawn["table"][0])
    judges = [make_judge_version(f"judge-{j}") for j in range(n_judges)]
    run = make_run(version, repeats=len(drawn["table"][0][0]))
    run.judge_versions.add(*judges)
    cost = drawn["cost"]
    Verdict.objects.bulk_create(
        Verdict(
            judge_version=judges[j],
            query=query,
            run=run,
            repeat=r,
            decision=decision,
            cost_usd=None if cost[j] is None else Decimal(cost[j]),
            latency_ms=100.0 + r,
        )
        for query, row in zip(queries, drawn["table"], strict=True)
        for j, cell in enumerate(row)
        for r, decision in enumerate(cell)
        if decision is not None
    )
    return version, judges


def selected(drawn):
    """Return the rows of the table the source selection keeps, and their gold labels."""
    keep = [drawn["source"] == "both" or (drawn["source"] == "mutated") == m for m in drawn["mutated"]]
    table = [row for row, k in zip(drawn["table"], keep, strict=True) if k]
    wrong = [w for w, k in zip(drawn["wrong"], keep, strict=True) if k]
    return table, wrong


def twin_judge(table, wrong, column, cost):
    """A judge's row of the judges table, from the raw table."""
    cells = [row[column] for row in table]
    verdicts = sum(1 for cell in cells for d in cell if d is not None)
    answered_any = [bool(twins.answered(table, i, column)) for i in range(len(table))]
    any_verdict = [any(d is not None for d in cell) for cell in cells]
    rates = twins.judge_rates(table, wrong, column)
    return {
        "verdicts": verdicts,
        "errors": sum(1 for cell in cells for d in cell if d == "error"),
        "items": sum(answered_any),
        "unjudged": sum(1 for a, v in zip(answered_any, any_verdict, strict=True) if v and not a),
        "cost_per_verdict_usd": None if cost is None else float(cost),
        **rates,
    }


def same(actual, expected):
    if expected is None:
        return actual in (None, "")
    return float(actual) == pytest.approx(expected, abs=1e-12)


def figures_on_page(html):
    """Return {judge version id: {figure: data-value}} from the dashboard's judges table."""
    rows = re.findall(r'<tr data-judge-version="(\d+)">(.*?)</tr>', html, flags=re.S)
    return {int(pk): dict(re.findall(r'data-figure="([a-z_0-9]+)"[^>]*?data-value="([^"]*)"', row)) for pk, row in rows}


def csv_records(text):
    return list(csv.DictReader(io.StringIO(text)))


def ml_engineer_client() -> Client:
    ensure_role_groups()
    user = get_user_model().objects.create_user(username="ml", password="pw-for-tests")
    user.groups.add(Group.objects.get(name=ML_ENGINEER))
    client = Client()
    client.force_login(user)
    return client


class EverySurfaceStatesTheDefinitions(TestCase):
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
    @given(drawn=stored_tables())
    def test_dashboard_json_csv_downloads_and_triage_agree_with_the_twin(self, drawn):
        version, judges = store(drawn)
        table, wrong = selected(drawn)
        source = drawn["source"]
        client = ml_engineer_client()
        query = {"source": source}

        out = io.StringIO()
        call_command("judge_report", "--gold-set", "surfaces", "--format", "json", "--source", source, stdout=out)
        report = json.loads(out.getvalue())
        out = io.StringIO()
        call_command("judge_report", "--gold-set", "surfaces", "--format", "csv", "--source", source, stdout=out)
        command_csv = {row["name"]: row for row in csv_records(out.getvalue())}
        html = client.get(reverse("judges:dashboard", args=[version.pk]), query).content.decode()
        page = figures_on_page(html)
        download = client.get(reverse("judges:dashboard-report-json", args=[version.pk]), query).json()
        judges_csv = b"".join(
            client.get(reverse("judges:dashboard-table-export", args=[version.pk, "judges", "csv"]), query)
        ).decode()
        exported = {row["name"]: row for row in csv_records(judges_csv)}

        assert download == report
        columns = {jv.pk: j for j, jv in enumerate(judges)}
        listed = report["judges"]
        expected_columns = [j for j in range(len(judges)) if any(any(d for d in row[j]) for row in table)]
        assert sorted(columns[e["judge_version_id"]] for e in listed) == expected_columns
        for entry in listed:
            column = columns[entry["judge_version_id"]]
            twin = twin_judge(table, wrong, column, drawn["cost"][column])
            surfaces = {
                "json": entry,
                "page": page[entry["judge_version_id"]],
                "command csv": command_csv[entry["name"]],
                "download csv": exported[entry["name"]],
            }
            for figure in FIGURES:
                for surface, figures in surfaces.items():
                    assert same(figures[figure], twin[figure]), (surface, figure)
            command_row, export_row, shown = surfaces["command csv"], surfaces["download csv"], surfaces["page"]
            for interval in ("catch_rate_ci95", "false_reject_rate_ci95"):
                expected = twin[interval]
                if expected is None:
                    assert entry[interval] is None and command_row[f"{interval}_lo"] == ""
                else:
                    assert entry[interval] == pytest.approx(expected)
                    assert float(command_row[f"{interval}_lo"]) == pytest.approx(expected[0])
                    assert float(export_row[f"{interval}_hi"]) == pytest.approx(expected[1])
            if drawn["cost"][column] is None:
                assert entry["cost_per_accepted_usd"] is None and shown["cost_per_accepted_usd"] == ""

        # Pairs: the union on aligned draws, in the JSON and in the pairs download.
        pairs_csv = b"".join(
            client.get(reverse("judges:dashboard-table-export", args=[version.pk, "pairs", "csv"]), query)
        ).decode()
        for entry, row in zip(report["pairs"], csv_records(pairs_csv), strict=True):
            a = next(columns[jv.pk] for jv in judges if jv.judge.name == entry["a"])
            b = next(columns[jv.pk] for jv in judges if jv.judge.name == entry["b"])
            twin = twins.pair(table, wrong, a, b)
            for key in ("union_catch_rate", "union_false_reject_rate", "both_missed"):
                assert same(entry[key], twin[key]) and same(row[key], twin[key]), key

        # Triage calibrates on every item (its rule has no source filter).
        if source == "both":
            for entry in listed:
                column = columns[entry["judge_version_id"]]
                twin = twins.judge_rates(table, wrong, column)
                calibration = calibration_for_live_judge(judges[column])
                assert same(calibration.catch.estimate, twin["catch_rate"])
                assert same(calibration.false_reject.estimate, twin["false_reject_rate"])
                if twin["catch_rate_ci95"] is not None:
                    assert (calibration.catch.low, calibration.catch.high) == pytest.approx(twin["catch_rate_ci95"])
                assert (calibration.wrong, calibration.correct) == (twin["judged_wrong"], twin["judged_correct"])
