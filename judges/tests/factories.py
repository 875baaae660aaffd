"""Builders for judge tests: gold sets whose SQL carries simulator markers, simulated judges."""

from decimal import Decimal

from judges.models import Judge, JudgeVersion
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query


def gold_set_version_with(items, name="calib"):
    """Create a published gold-set version from (sql_marker, decision, error_class) triples."""
    gold_set = GoldSet.objects.create(name=name)
    version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
    rows = []
    for index, (marker, decision, error_class) in enumerate(items):
        query = Query.objects.create(
            question=f"question {index}",
            sql=(
                "SELECT o.id, SUM(oi.price) FROM orders o JOIN order_items oi ON oi.order_id = o.id "
                f"WHERE o.id > {index} GROUP BY o.id -- sim: {marker}"
            ),
            gold_set=gold_set,
            external_id=f"item-{index}",
        )
        rows.append(GoldSetVersionItem(version=version, query=query, decision=decision, error_class=error_class))
    GoldSetVersionItem.objects.bulk_create(rows)
    return version


def mixed_items(correct=6, wrong=4, faults=()):
    """Correct and join-fanout items, then one correct item per fault marker given."""
    items = [("correct", "correct", "")] * correct + [("wrong join_fanout", "wrong", "join_fanout")] * wrong
    items += [(f"correct fault={fault}", "correct", "") for fault in faults]
    return items


def simulated_version(name="sim-judge", backend="anthropic", model="sim-perfect", **config):
    judge = Judge.objects.create(name=name)
    return JudgeVersion.objects.create(
        judge=judge,
        number=1,
        backend=backend,
        family="simulated",
        model=model,
        price_input_per_mtok=Decimal("3"),
        price_output_per_mtok=Decimal("15"),
        price_cache_read_per_mtok=Decimal("0.3"),
        price_cache_write_per_mtok=Decimal("3.75"),
        config={"simulated": True, "retry_base_delay_s": 0.01, "timeout_s": 1.0, "concurrency": 8, **config},
        is_simulated=True,
    )
