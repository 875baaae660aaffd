"""Benchmark: what labelling pages and the drift monitor cost as items and live traffic grow (issue 33).

- The labelling queue's next item (GET the queue, following its redirect to the item page)
  and a gold-set version's page (its first page of items, as an admin sees it), each on a
  gold set of 10,000 and of 100,000 items, 92% of them labelled twice: target, the 100,000
  page at most 1.5× the 10,000 one. Medians through Django's test client.
- The hourly drift monitor (`triage.monitoring.live_judges_monitor`, one live judge) over
  10,000 and then 1,000,000 live queries (90% passed, 10% flagged, half of those labelled):
  the peak resident memory of a fresh process that runs it once; target, the peak at
  1,000,000 at most 1.5× the peak at 10,000.

On PostgreSQL (database `bench_growth`) when a server answers, else on a SQLite file; the
lines name which. Filled by COPY (`tests/bench/bulk_fill.py`), measured in child processes.

    python -m tests.bench.bench_growth
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse

from config.roles import LABELLER, ensure_role_groups
from judges.models import Backend, JudgeVersion, Verdict
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Label, Query
from tests.bench.bulk_fill import ScratchDatabase, analyze, bulk_insert, judge_versions_create, phased_main, size_label
from tests.bench.calibration_processes import own_peak_rss_mb
from triage.models import LiveQuery
from triage.monitoring import live_judges_monitor
from triage.policy import policy_publish

MODULE = "bench_growth"
# BENCH_GROWTH_SCALE=0.01 checks the bench itself quickly (the lines then name smaller sizes).
SCALE = float(os.environ.get("BENCH_GROWTH_SCALE", "1"))
ITEMS = (int(10_000 * SCALE), int(100_000 * SCALE))
LIVE = (int(10_000 * SCALE), int(1_000_000 * SCALE))
ROUNDS = 9
LABELLERS = 5


# --- child-process phases -----------------------------------------------------------------


def phase_fill_items() -> dict:
    """Migrate, make the users, and fill a labelled gold set and its published version per size."""
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    ensure_role_groups()
    users = get_user_model().objects
    users.create_superuser("bench-admin", password="bench")
    labellers = [users.create_user(f"bench-labeller-{i}", password="bench") for i in range(LABELLERS)]
    for labeller in labellers:
        labeller.groups.add(Group.objects.get(name=LABELLER))
    for items in ITEMS:
        with transaction.atomic():
            labelled_gold_set(f"bench-items-{items}", items, [u.pk for u in labellers])
    analyze()
    return {"fill_seconds": time.perf_counter() - started}


def labelled_gold_set(name: str, items: int, labeller_ids: list[int]) -> None:
    """A gold set whose first 92% are labelled by two labellers, and version 1 with every item.

    The first labeller ("me" in the timing) labelled two fifths of the done items, so the
    queue has to look past many of its own.
    """
    gold_set = GoldSet.objects.create(name=name, overlap_share=0.2)
    done = int(items * 0.92)
    bulk_insert(
        Query,
        ["question", "sql", "gold_set_id", "external_id", "fingerprint", "overlap_key", "wants_second_label",
         "label_count"],
        ((f"q{i}", f"SELECT {i}", gold_set.pk, f"{name}-{i}", f"{i:064x}", (i * 7919 % 10007) / 10007,
          (i * 7919 % 10007) / 10007 < 0.2, 2 if i < done else 0) for i in range(items)),
    )  # fmt: skip
    query_ids = list(Query.objects.filter(gold_set=gold_set).order_by("pk").values_list("pk", flat=True))
    count = len(labeller_ids)
    bulk_insert(
        Label,
        ["query_id", "labeller_id", "decision", "error_class", "is_current"],
        (
            (query_id, labeller_ids[(n + shift) % count], "wrong" if n % 5 == 0 else "correct",
             "join_fanout" if n % 5 == 0 else "", True)
            for n, query_id in enumerate(query_ids[:done])
            for shift in (0, 1)
        ),
    )  # fmt: skip
    version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
    bulk_insert(
        GoldSetVersionItem,
        ["version_id", "query_id", "decision", "error_class"],
        ((version.pk, query_id, "wrong" if n % 5 == 0 else "correct", "join_fanout" if n % 5 == 0 else "")
         for n, query_id in enumerate(query_ids[:done])),
    )  # fmt: skip
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)  # published: its items are fixed now


def timed(client: Client, url: str, *, follow: bool = False) -> float:
    started = time.perf_counter()
    response = client.get(url, follow=follow)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}")
    return elapsed


def phase_pages() -> dict:
    """Time the queue's next item and the version page at each size, in turn; return the medians.

    Taking the four in turn, round after round, puts the same machine load on each.
    """
    labeller, admin = Client(), Client()
    labeller.force_login(get_user_model().objects.get(username="bench-labeller-0"))
    admin.force_login(get_user_model().objects.get(username="bench-admin"))
    pages = {}
    for items in ITEMS:
        name = f"bench-items-{items}"
        pages[f"queue_{items}"] = (labeller, reverse("labelling:queue", args=[name]), True)
        pages[f"version_{items}"] = (admin, reverse("labelling:version_browse", args=[name, 1]), False)
    for client, url, follow in pages.values():
        timed(client, url, follow=follow)  # warm the connection, the templates and the database's cache
    times = {key: [] for key in pages}
    for _ in range(ROUNDS):
        for key, (client, url, follow) in pages.items():
            times[key].append(timed(client, url, follow=follow))
    return {key: statistics.median(found) for key, found in times.items()}


def phase_fill_live(total: str) -> dict:
    """Bring the live traffic to `total` queries judged by one live judge (the first call sets it up)."""
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    wanted = int(total)
    with transaction.atomic():
        judges = (
            judge_versions_create("bench-live-judge", 1, Backend.ANTHROPIC) if not LiveQuery.objects.exists() else None
        )
        if judges:
            policy_publish(
                changes={"run_verifier": False, "run_fanout_detector": False, "audit_share": 0.0},
                judge_versions=judges,
            )
        judge_id = JudgeVersion.objects.get(judge__name="bench-live-judge-00").pk
        have = LiveQuery.objects.count()
        live_queries_add(have, wanted, judge_id)
    analyze()
    return {"fill_seconds": time.perf_counter() - started}


def live_queries_add(start: int, end: int, judge_id: int) -> None:
    """Add live queries start..end-1: 10% flagged (half of those labelled), each with the judge's verdict."""
    bulk_insert(
        Query,
        ["question", "sql", "source", "external_id"],
        ((f"live {i}", f"SELECT {i}", "live", f"live-{i}") for i in range(start, end)),
    )
    ids = list(Query.objects.filter(source="live", external_id__in=[f"live-{start}", f"live-{end - 1}"]).values_list(
        "pk", flat=True))  # fmt: skip
    query_ids = range(min(ids), max(ids) + 1)  # one COPY: consecutive ids
    bulk_insert(
        LiveQuery,
        ["query_id", "status", "external_id"],
        ((qid, "flagged" if qid % 10 == 0 else "passed", f"live-{qid}") for qid in query_ids),
    )
    bulk_insert(
        Verdict,
        ["judge_version_id", "query_id", "repeat", "decision", "model_reported"],
        ((judge_id, qid, 0, "reject" if qid % 10 == 0 or qid % 97 == 0 else "accept", "sim-live") for qid in query_ids),
    )
    bulk_insert(
        Label,
        ["query_id", "decision", "error_class", "source"],
        ((qid, "wrong" if qid % 30 else "correct", "join_fanout" if qid % 30 else "", "triage")
         for qid in query_ids if qid % 20 == 0),
    )  # fmt: skip


def phase_monitor() -> dict:
    """Run the hourly monitor once in this fresh process; return its peak resident memory."""
    before = own_peak_rss_mb()
    started = time.perf_counter()
    passes = live_judges_monitor()
    seconds = time.perf_counter() - started
    assert len(passes) == 1
    peak = own_peak_rss_mb()
    return {"peak_rss_mb": peak, "rss_before_mb": before, "seconds": seconds}


PHASES = {"fill_items": phase_fill_items, "pages": phase_pages, "fill_live": phase_fill_live, "monitor": phase_monitor}


# --- parent -------------------------------------------------------------------------------


def run() -> list[dict]:
    with ScratchDatabase("bench_growth") as database:
        backend = database.vendor
        filled = database.run_phase(MODULE, "fill_items")
        pages = database.run_phase(MODULE, "pages")
        print(f"{backend}: items filled in {filled['fill_seconds']:.0f}s; {pages}", file=sys.stderr)
        monitor = {}
        for total in LIVE:
            filled = database.run_phase(MODULE, "fill_live", total)
            monitor[total] = database.run_phase(MODULE, "monitor")
            print(f"{backend}: {total} live queries (filled in {filled['fill_seconds']:.0f}s): {monitor[total]}",
                  file=sys.stderr)  # fmt: skip
    small, large = ITEMS
    few, many = LIVE
    sizes = f"{size_label(large)}_vs_{size_label(small)}"
    results = []
    for page, label in (("queue", "labelling_queue_next_item"), ("version", "version_page")):
        ratio = pages[f"{page}_{large}"] / pages[f"{page}_{small}"]
        results.append({"name": f"{label}_{backend}_{sizes}_items", "value": round(ratio, 3), "unit": "x",
                        "target_op": "<=", "target": 1.5})  # fmt: skip
        results += [{"name": f"{label}_{backend}_{size_label(items)}_items_seconds", "value": round(
            pages[f"{page}_{items}"], 4), "unit": "s"} for items in ITEMS]  # fmt: skip
    ratio = monitor[many]["peak_rss_mb"] / monitor[few]["peak_rss_mb"]
    results.append({"name": f"drift_monitor_{backend}_peak_rss_{size_label(many)}_vs_{size_label(few)}_live_queries",
                    "value": round(ratio, 3), "unit": "x", "target_op": "<=", "target": 1.5})  # fmt: skip
    for total in LIVE:
        found, prefix = monitor[total], f"drift_monitor_{backend}_{size_label(total)}_live_queries"
        results += [
            {"name": f"{prefix}_peak_rss", "value": round(found["peak_rss_mb"], 1), "unit": "MB"},
            {"name": f"{prefix}_growth_over_start", "value": round(found["peak_rss_mb"] - found["rss_before_mb"], 1),
             "unit": "MB"},
            {"name": f"{prefix}_seconds", "value": round(found["seconds"], 2), "unit": "s"},
        ]  # fmt: skip
    return results


if __name__ == "__main__":
    phased_main(run, PHASES)
