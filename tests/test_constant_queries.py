"""Pages cost the same with 2 runs or 20, 2 judge versions or 10, 1 gold-set version or 3 (issue 33).

Each test builds a small history, counts the queries of every page, grows the history
(more runs, more judge versions, more gold-set versions, more queue items) and counts
again: the counts must be equal, not merely bounded. The dashboard's htmx partials are
counted twice, cold (nothing cached) and after the page (their calibration load reused).
Runs on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judges.models import Verdict
from judges.tests.calibration_builders import (
    add_verdicts,
    item_queries,
    labels,
    make_judge_version,
    make_published_gold_set,
    make_run,
)
from judges.verdict_sums import record_verdict_sums
from labelling.taxonomy import taxonomy_default
from tests.support.fixtures import caches_clear
from triage.models import IngestStatus, TriageItem
from triage.tests.factories import live_query

pytestmark = pytest.mark.django_db
R, A, E = "reject", "accept", "error"
PATTERNS = ([R, R, A, A, A, A], [R, A, R, A, R, A], [A, R, E, R, A, A])


class History:
    """A gold set whose judges ran over and over: alpha (many versions) and beta, on one or more versions."""

    def __init__(self):
        self.gold = make_published_gold_set("history", labels(3, 3))
        self.golds = [self.gold]
        self.alphas = [make_judge_version("alpha", number=1), make_judge_version("alpha", number=2)]
        self.beta = make_judge_version("beta")
        self.runs = []
        self.add_runs(2)
        for index in range(2):
            live = live_query(status=IngestStatus.FLAGGED)
            item = TriageItem.objects.create(query=live.query, flagged_because=f"flag {index}", judges_answered=1)
            item.rejecting_judges.add(*self.alphas)

    def add_runs(self, count: int, gold=None) -> None:
        """Add completed runs on `gold` (the first version by default), each judging with every judge version."""
        gold = gold or self.gold
        for _ in range(count):
            run = make_run(gold, label=f"run-{len(self.runs) + 1}")
            for version in [*self.alphas, self.beta]:
                add_verdicts(run, version, PATTERNS[(len(self.runs) + version.number) % len(PATTERNS)])
            self.runs.append(run)

    def add_judge_versions(self, count: int) -> None:
        """Add versions of alpha, each with verdicts in every run so far."""
        for _ in range(count):
            version = make_judge_version("alpha", number=len(self.alphas) + 1)
            for run in self.runs:
                add_verdicts(run, version, PATTERNS[(run.pk + version.number) % len(PATTERNS)])
            self.alphas.append(version)
            for item in TriageItem.objects.all():
                item.rejecting_judges.add(version)

    def add_gold_versions(self, count: int) -> None:
        """Publish later versions of the gold set, each with a run of every judge version."""
        for _ in range(count):
            gold = make_published_gold_set("history", labels(3, 3), number=len(self.golds) + 1)
            self.golds.append(gold)
            self.add_runs(1, gold=gold)

    def add_queue_items(self, count: int) -> None:
        for index in range(count):
            live = live_query(status=IngestStatus.FLAGGED)
            item = TriageItem.objects.create(query=live.query, flagged_because=f"more {index}", judges_answered=1)
            item.rejecting_judges.add(*self.alphas)


@pytest.fixture
def history():
    # The default taxonomy, as migration 0010 seeds it in every deployment: a transactional
    # test's flush earlier in this process removes it, and the first page would recreate it
    # (counted as that page's queries, not the second time).
    taxonomy_default()
    return History()


def pages(history: History) -> dict[str, str]:
    """Every page whose cost could follow history, with the partials of the dashboard."""
    gold, alpha, beta = history.gold, history.alphas[0], history.beta
    item = item_queries(gold)[0]
    dashboard = reverse("judges:dashboard", args=[gold.pk])
    on_gold = [run for run in history.runs if run.gold_set_version_id == gold.pk]
    return {
        "judges": reverse("judges:index"),
        "dashboard": dashboard,
        "dashboard_runs": f"{dashboard}?runs={on_gold[0].pk},{on_gold[-1].pk}",
        "report_json": reverse("judges:dashboard-report-json", args=[gold.pk]),
        "judges_csv": reverse("judges:dashboard-table-export", args=[gold.pk, "judges", "csv"]),
        "ensemble": reverse("judges:dashboard-ensemble", args=[gold.pk])
        + f"?judge={alpha.pk}&judge={beta.pk}&rule=any",
        "heatmap_cell": reverse("judges:dashboard-missed", args=[gold.pk]) + f"?judge={alpha.pk}&judge={beta.pk}",
        "upset_bar": reverse("judges:dashboard-missed", args=[gold.pk]) + f"?judge={beta.pk}&exact=1",
        "confusion_cell": reverse("judges:dashboard-cell", args=[gold.pk])
        + f"?judge={beta.pk}&gold=wrong&decision=reject",
        "item": reverse("judges:dashboard-item", args=[gold.pk, item.pk]),
        "judge": reverse("judges:judge_detail", args=[alpha.judge_id]),
        "judge_compare": reverse("judges:judge_compare", args=[alpha.judge_id]),
        "run": reverse("judges:run_detail", args=[history.runs[0].pk]),
        "version": reverse("labelling:version_browse", args=[gold.gold_set.name, gold.number]),
        "triage_queue": reverse("triage:index"),
        "loop_lab": reverse("loops:lab"),
    }


PARTIALS = ("ensemble", "heatmap_cell", "upset_bar", "confusion_cell", "report_json", "judges_csv")


def count_queries(client, url: str, **headers) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
    assert response.status_code == 200, (url, response.status_code)
    return len(captured), [query["sql"] for query in captured.captured_queries]


def costs(client, history: History) -> dict[str, int]:
    """Count each page cold (an empty cache), and each partial again right after the dashboard."""
    counted = {}
    for name, url in pages(history).items():
        caches_clear()
        counted[name], _ = count_queries(client, url)
    caches_clear()
    count_queries(client, pages(history)["dashboard"])
    for name in PARTIALS:
        counted[f"{name} after the page"], _ = count_queries(client, pages(history)[name], HTTP_HX_REQUEST="true")
    return counted


def test_every_page_costs_the_same_with_2_runs_or_20(client_for, history):
    client = client_for("admin")
    with_two = costs(client, history)
    history.add_runs(18)
    assert costs(client, history) == with_two


def test_every_page_costs_the_same_with_2_judge_versions_or_10(client_for, history):
    client = client_for("admin")
    with_two = costs(client, history)
    history.add_judge_versions(8)
    assert costs(client, history) == with_two


def test_every_page_costs_the_same_with_1_gold_set_version_or_3(client_for, history):
    client = client_for("admin")
    with_one = costs(client, history)
    history.add_gold_versions(2)
    assert costs(client, history) == with_one


def test_the_triage_queue_costs_the_same_with_2_items_or_20(client_for, history):
    client = client_for("admin")
    url = reverse("triage:index")
    with_two, _ = count_queries(client, url)
    history.add_queue_items(18)
    assert count_queries(client, url)[0] == with_two


def test_a_partial_after_the_page_reads_no_verdict_but_the_newest_one(client_for, history):
    client = client_for("ml_engineer")
    count_queries(client, pages(history)["dashboard"])
    for name in PARTIALS:
        _, statements = count_queries(client, pages(history)[name], HTTP_HX_REQUEST="true")
        on_verdicts = [sql for sql in statements if "judges_verdict" in sql]
        assert len(on_verdicts) == 1, (name, on_verdicts)
        # The newest verdict of the runs: one row, its id and time.
        assert "LIMIT 1" in on_verdicts[0].upper() and '"created_at"' in on_verdicts[0], (name, on_verdicts)


def test_a_partial_after_a_new_verdict_answers_from_the_new_verdicts(client_for, history):
    client = client_for("ml_engineer")
    url = pages(history)["confusion_cell"]
    before = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "3 wrong items beta v1 decided reject" not in before
    # A third run where beta rejects every wrong item: each one's majority is now a reject.
    run = make_run(history.gold, label="one more")
    add_verdicts(run, history.beta, [R, R, R, A, A, A])
    after = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "3 wrong items beta v1 decided reject" in after


def test_a_partial_after_a_changed_verdict_of_a_summed_run_answers_from_the_changed_verdicts(client_for, history):
    """Completed runs with recorded sums are fingerprinted by them, not by their newest verdict:
    an UPDATE of an old verdict adds none, yet the database triggers delete the run's sums,
    so the kept load is replaced."""
    record_verdict_sums([run.pk for run in history.runs])
    client = client_for("ml_engineer")
    url = pages(history)["confusion_cell"]
    before = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "3 wrong items beta v1 decided reject" not in before
    wrong = history.gold.items.filter(decision="wrong").values("query_id")
    changed = Verdict.objects.filter(judge_version=history.beta, query_id__in=wrong).update(decision=R)
    assert changed == 3 * len(history.runs)
    after = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "3 wrong items beta v1 decided reject" in after
