"""Small builders for triage tests: warehouses, live queries, queue items, judges, tokens."""

import itertools
import sqlite3

from judges.models import Backend, Judge, JudgeVersion, Verdict
from labelling.models import Query, QuerySource
from probes.models import Catalogue, Warehouse
from triage.models import IngestStatus, LiveQuery, TriageItem
from triage.policy import policy_publish
from triage.tokens import api_token_issue

_counter = itertools.count(1)


def warehouse(name="shop", dialect="sqlite"):
    return Warehouse.objects.get_or_create(name=name, defaults={"dialect": dialect})[0]


def live_query(*, status=IngestStatus.PENDING, wh=None, external_id=None, sql="SELECT 1", question="How many?"):
    n = next(_counter)
    query = Query.objects.create(
        question=f"{question} #{n}",
        sql=sql,
        dialect="sqlite",
        warehouse=wh or warehouse(),
        source=QuerySource.LIVE,
        external_id=external_id or f"ext-{n}",
    )
    return LiveQuery.objects.create(query=query, status=status)


def triage_item(*, probe_confirmed=False, judges_agreeing=1, wh=None, **extra):
    live = live_query(status=IngestStatus.FLAGGED, wh=wh)
    return TriageItem.objects.create(
        query=live.query,
        flagged_because="test",
        probe_confirmed=probe_confirmed,
        judges_agreeing=judges_agreeing,
        judges_answered=max(judges_agreeing, 1),
        **extra,
    )


def judge_version(name=None, model="sim-model-1"):
    judge = Judge.objects.create(name=name or f"judge-{next(_counter)}")
    return JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.ANTHROPIC, model=model, is_simulated=True)


def live_verdict(version, query, decision, model="sim-model-1", **extra):
    return Verdict.objects.create(judge_version=version, query=query, decision=decision, model_reported=model, **extra)


def token(scopes=("ingest", "read"), client="acme"):
    return api_token_issue(client=client, scopes=list(scopes))


def quiet_policy(**changes):
    """A policy that calls no judge, verifier or probe: for tests of the pipeline's bookkeeping."""
    values = {"run_verifier": False, "run_fanout_detector": False, "audit_share": 0.0} | changes
    return policy_publish(changes=values, judge_versions=[])


# A warehouse with a fan-out trap: orders (412 rows) joined to order_items (several per order).
FANOUT_SQL = "SELECT SUM(o.amount) FROM orders o JOIN order_items oi ON oi.order_id = o.id"
CLEAN_SQL = "SELECT SUM(o.amount) FROM orders o"
UNKNOWN_COLUMN_SQL = "SELECT SUM(o.amout) FROM orders o"

FANOUT_TRAP_SNAPSHOT = {
    "tables": {
        "orders": {
            "columns": [
                {"name": "id", "type": "INTEGER", "nullable": False},
                {"name": "amount", "type": "REAL", "nullable": False},
            ],
            "primary_key": ["id"],
            "unique": [],
            "foreign_keys": [],
            "row_estimate": 412,
        },
        "order_items": {
            "columns": [
                {"name": "id", "type": "INTEGER", "nullable": False},
                {"name": "order_id", "type": "INTEGER", "nullable": False},
                {"name": "price", "type": "REAL", "nullable": False},
            ],
            "primary_key": ["id"],
            "unique": [],
            "foreign_keys": [{"columns": ["order_id"], "ref_table": "orders", "ref_columns": ["id"]}],
            "row_estimate": 1214,
        },
    }
}


def fanout_trap_warehouse(path, monkeypatch, name="shop"):
    """Build the fan-out trap as a SQLite file, register it with its catalogue; return the warehouse.

    The DSN goes into this process's environment, so a worker subprocess started afterwards sees it too.
    """
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount REAL NOT NULL)")
        db.execute("CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, price REAL NOT NULL)")
        db.executemany("INSERT INTO orders VALUES (?, ?)", [(i, 10.0) for i in range(1, 413)])
        items = [(n, (n % 412) + 1, 1.0) for n in range(1, 1215)]
        db.executemany("INSERT INTO order_items VALUES (?, ?, ?)", items)
    monkeypatch.setenv(f"WAREHOUSE_{name.upper()}_URL", f"sqlite:///{path}")
    trap = warehouse(name, "sqlite")
    Catalogue.objects.create(warehouse=trap, version=1, snapshot=FANOUT_TRAP_SNAPSHOT)
    return trap
