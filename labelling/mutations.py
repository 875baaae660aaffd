"""Mutation-seeded wrong items: wrong variants of correct items, kept only when execution says so.

Truth by execution: a variant is kept only if it still runs (through the read-only path)
and its result differs from the reference's under the gold comparison
(`labelling.compare.compare_result_sets`: order-insensitive, numbers rounded to two
decimals). Variants equal to the reference are discarded and counted, as are variants
that fail. Kept variants become *proposed* items of the gold set (origin `mutated`,
the suggested class and the result diff in `metadata["mutation"]`): a labeller confirms
or rejects them in the queue like any other item, so the gold set stays human-checked.
"""

import hashlib
import itertools
from dataclasses import dataclass, field

import sqlglot
from django.db import transaction
from sqlglot.errors import SqlglotError

from labelling.compare import compare_result_sets
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, LabelDecision, Query, QueryOrigin
from labelling.mutation_operators import Schema, operators_for, variants_of
from labelling.services import query_create
from probes.execution import run_readonly
from probes.fingerprint import sqlglot_dialect
from probes.selectors import catalogue_get_latest

RUN_TIMEOUT_S = 10.0
# Whole results are compared; a result past this many rows is not compared (counted as failing).
COMPARE_ROW_CAP = 5000
# Candidates tried per source item before giving up on reaching `per_item` kept variants.
MAX_TRIES_PER_ITEM = 24


@dataclass(frozen=True)
class Source:
    """A correct query to mutate: the item it comes from and the SQL known to answer its question."""

    query: Query
    correct_sql: str


@dataclass
class Outcome:
    """What a run of the seeder found: kept variants and how many candidates were discarded."""

    kept: list[dict] = field(default_factory=list)
    discarded_equivalent: int = 0
    discarded_failing: int = 0

    def as_dict(self) -> dict:
        """Return the `seed_mutations --format json` contract."""
        contract = ("source_id", "sql", "reference_sql", "error_class", "operator")
        return {
            "kept": [{key: entry[key] for key in contract} for entry in self.kept],
            "discarded_equivalent": self.discarded_equivalent,
            "discarded_failing": self.discarded_failing,
        }


def mutation_sources(*, version: GoldSetVersion) -> list[Source]:
    """Return the version's organic items with a known correct SQL, in item order.

    A correct item's own SQL is correct; a wrong item's reference SQL is. Mutated items
    are never mutated again.
    """
    items = (
        GoldSetVersionItem.objects.filter(version=version, query__origin=QueryOrigin.ORGANIC)
        .select_related("query__warehouse")
        .order_by("query_id")
    )
    sources = []
    for item in items:
        if item.query.warehouse_id is None:
            continue
        if item.decision == LabelDecision.CORRECT:
            sources.append(Source(item.query, item.query.sql))
        elif item.decision == LabelDecision.WRONG and item.query.reference_sql:
            sources.append(Source(item.query, item.query.reference_sql))
    return sources


def _run(warehouse, sql: str):
    """Return (columns, rows) of a complete result, or None when it was refused, failed or was cut."""
    result = run_readonly(warehouse=warehouse, sql=sql, row_cap=COMPARE_ROW_CAP, timeout_s=RUN_TIMEOUT_S)
    if not result.allowed or not result.executed or result.error or result.truncated:
        return None
    return result.columns, [tuple(row) for row in result.rows]


def _diff(comparison) -> dict:
    """The result diff shown to the labeller: a summary and a few rows only in either result."""
    return {
        "summary": comparison.summary,
        "rows_variant": comparison.row_count_a,
        "rows_reference": comparison.row_count_b,
        "only_in_variant": [list(row) for row in comparison.only_in_a],
        "only_in_reference": [list(row) for row in comparison.only_in_b],
    }


def mutated_external_id(source_id: str, operator: str, sql: str) -> str:
    """A stable id per (source, operator, text): seeding twice proposes each variant once."""
    return f"{source_id}~{operator}~{hashlib.sha256(sql.encode()).hexdigest()[:8]}"


def _mutate_one(
    source: Source, *, per_item: int, operators: list[str], schema: Schema, outcome: Outcome, start: int
) -> None:
    dialect = sqlglot_dialect(source.query.dialect)
    try:
        tree = sqlglot.parse_one(source.correct_sql, read=dialect)
    except SqlglotError:
        return
    variants = variants_of(tree, schema, operators, start)
    first = next(variants, None)
    if first is None:
        return  # no operator applies: the reference need not run
    reference = _run(source.query.warehouse, source.correct_sql)
    if reference is None:
        return
    seen = {tree.sql(dialect=dialect)}
    kept = tries = 0
    for variant in itertools.chain([first], variants):
        if kept >= per_item or tries >= MAX_TRIES_PER_ITEM:
            return
        sql = variant.sql.sql(dialect=dialect)
        if sql in seen:
            continue
        seen.add(sql)
        tries += 1
        result = _run(source.query.warehouse, sql)
        if result is None:
            outcome.discarded_failing += 1
            continue
        comparison = compare_result_sets(result[0], result[1], reference[0], reference[1])
        if comparison.match:
            outcome.discarded_equivalent += 1
            continue
        kept += 1
        outcome.kept.append(
            {
                "source_id": source.query.external_id,
                "sql": sql,
                "reference_sql": source.correct_sql,
                "error_class": variant.error_class,
                "operator": variant.operator,
                "source": source,
                "diff": _diff(comparison),
            }
        )


def mutations_generate(*, sources: list[Source], per_item: int, classes=None) -> Outcome:
    """Generate and execute variants of each source; keep up to `per_item` that differ from it."""
    operators = operators_for(classes)
    outcome = Outcome()
    schemas: dict[int, Schema] = {}
    for position, source in enumerate(sources):
        warehouse = source.query.warehouse
        if warehouse.pk not in schemas:
            catalogue = catalogue_get_latest(warehouse_id=warehouse.pk)
            schemas[warehouse.pk] = Schema.from_snapshot(catalogue.snapshot if catalogue else None)
        _mutate_one(
            source,
            per_item=per_item,
            operators=operators,
            schema=schemas[warehouse.pk],
            outcome=outcome,
            start=position,
        )
    return outcome


@transaction.atomic
def mutations_propose(*, gold_set: GoldSet, outcome: Outcome) -> int:
    """Add each kept variant to the gold set as a proposed item (unlabelled, origin mutated).

    Return how many were new; a variant proposed before is left as it is.
    """
    created = 0
    existing = set(
        Query.objects.filter(gold_set=gold_set, origin=QueryOrigin.MUTATED).values_list("external_id", flat=True)
    )
    for entry in outcome.kept:
        source = entry["source"].query
        external_id = mutated_external_id(source.external_id, entry["operator"], entry["sql"])
        if external_id in existing:
            continue
        query_create(
            question=source.question,
            sql=entry["sql"],
            external_id=external_id,
            dialect=source.dialect,
            warehouse=source.warehouse,
            gold_set=gold_set,
            reference_sql=entry["reference_sql"],
            origin=QueryOrigin.MUTATED,
            metadata={
                "mutation": {
                    "source_id": source.external_id,
                    "operator": entry["operator"],
                    "error_class": entry["error_class"],
                    "diff": entry["diff"],
                }
            },
        )
        existing.add(external_id)
        created += 1
    return created


def latest_version(*, gold_set: GoldSet) -> GoldSetVersion | None:
    return GoldSetVersion.objects.filter(gold_set=gold_set, is_frozen=True).order_by("-number").first()


def mutations_seed(*, gold_set: GoldSet, per_item: int, classes=None, propose: bool = True) -> Outcome:
    """Seed wrong variants from the gold set's latest version; propose the kept ones (unless told not to)."""
    version = latest_version(gold_set=gold_set)
    if version is None:
        return Outcome()
    outcome = mutations_generate(sources=mutation_sources(version=version), per_item=per_item, classes=classes)
    if propose:
        mutations_propose(gold_set=gold_set, outcome=outcome)
    return outcome
