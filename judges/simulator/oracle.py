"""The simulator's oracle: Docket's gold labels, looked up by SQL fingerprint.

With it, the demo judges have a truth to miss; without it, unmarked SQL counts as correct.
"""

from __future__ import annotations

import threading

from django.db import close_old_connections

from judges.simulator.vendor import ERROR_CLASSES, Truth
from labelling.models import GoldSetVersionItem
from probes.fingerprint import sql_fingerprint


def gold_label_oracle():
    """Return oracle(sql) -> Truth | None reading the latest published gold label of the SQL."""
    cache: dict = {}
    lock = threading.Lock()

    def oracle(sql: str):
        with lock:
            if sql in cache:
                return cache[sql]
        # The prompt does not say the dialect for sure: match the fingerprint under either.
        fingerprints = {sql_fingerprint(sql, "sqlite"), sql_fingerprint(sql, "postgres")}
        try:
            item = (
                GoldSetVersionItem.objects.filter(query__fingerprint__in=fingerprints)
                .order_by("-version__published_at")
                .values("decision", "error_class")
                .first()
            )
        finally:
            close_old_connections()
        truth = (
            None
            if item is None
            else Truth(
                wrong=item["decision"] == "wrong",
                # The first of the item's classes the simulated judges know (several are "a;b").
                error_class=next((c for c in (item["error_class"] or "").split(";") if c in ERROR_CLASSES), ""),
            )
        )
        with lock:
            cache[sql] = truth
        return truth

    return oracle
