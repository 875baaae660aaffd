"""Live queries posted while the warehouse is stopped or its role stripped: the judges alone decide.

Through the real ingestion API and the pipeline (run eagerly, in the request's process, as
the API fuzz test runs it), against real warehouses: a SQLite file removed, a PostgreSQL DSN
pointing at a closed port, a PostgreSQL reader whose SELECT grant is revoked. The verifier
could not check, so it says so and never flags; a probe that cannot run fails open; a
hypothesis-probe judge that could run no probe answers `error`, which does not flag.
"""

import json
import socket
from urllib.parse import urlparse, urlunparse

import psycopg
import pytest
from psycopg import sql

from judges.models import Verdict
from judges.tests.factories import simulated_version
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import create_reader_role
from probes.tests import shop
from probes.tests.conftest import drop_role, unique_name
from probes.warehouses import dsn_env_var, warehouse_register
from simulator import SimModel, Simulator, start_in_thread
from tests.support.services import require_postgres_server
from triage import tasks as triage_tasks  # noqa: F401 — eager mode below runs them in this process
from triage.models import IngestStatus, LiveQuery, TriageItem
from triage.pipeline import live_query_process
from triage.policy import policy_publish
from triage.tests import factories

pytestmark = pytest.mark.usefixtures("synchronous_publish", "eager_tasks")

OUTAGE_POSTS = 50
WRONG_EVERY = 5  # one post in five is wrong, and the judges say so


@pytest.fixture
def simulator(settings):
    """The vendor simulator with an always-right model: the judges' verdicts are known in advance."""
    perfect = SimModel(
        family="simulated",
        catch_probability=1.0,
        false_reject_probability=0.0,
        flip_probability=0.0,
        class_accuracy=1.0,
        latency_ms=1,
    )
    server, url = start_in_thread(Simulator(models={"sim-perfect": perfect}))
    settings.VENDOR_SIMULATOR_URL = url
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def poster(client):
    _, plaintext = factories.token()

    def post(rows):
        response = client.post(
            "/api/v1/queries",
            data=json.dumps(rows),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {plaintext}",
        )
        assert response.status_code == 202, response.content
        return response.json()

    post.status = lambda pk: client.get(f"/api/v1/queries/{pk}", HTTP_AUTHORIZATION=f"Bearer {plaintext}").json()
    return post


def strict_policy(judges, **changes):
    """The verifier on and flagging on failure, the detector on, any judge's reject flags."""
    values = {
        "run_verifier": True,
        "flag_on_verifier_failure": True,
        "run_fanout_detector": True,
        "flag_rule": "any",
        "audit_share": 0.0,
    }
    return policy_publish(changes=values | changes, judge_versions=judges)


def outage_row(n: int, warehouse: str, measure: str = "o.amount") -> dict:
    wrong = n % WRONG_EVERY == 0
    # Every text is right by the catalogue: only the warehouse could have said more.
    text = f"SELECT SUM({measure}) FROM orders o" if n % 2 else factories.FANOUT_SQL
    marker = " -- sim: wrong missing_filter" if wrong else " -- sim: correct"
    return {"external_id": f"outage-{n}", "question": f"Revenue {n}?", "sql": text + marker, "warehouse": warehouse}


@pytest.mark.django_db(transaction=True)
def test_an_outage_of_fifty_posts_adds_only_what_the_judges_flagged(tmp_path, monkeypatch, simulator, poster):
    path = tmp_path / "shop.sqlite3"
    factories.fanout_trap_warehouse(path, monkeypatch)
    strict_policy([simulated_version(name="outage-judge")])
    path.unlink()  # the warehouse stops; its catalogue stays
    posted = [poster(outage_row(n, "shop"))["id"] for n in range(OUTAGE_POSTS)]

    lives = LiveQuery.objects.filter(pk__in=posted).select_related("query")
    assert {live.status for live in lives} == {IngestStatus.FLAGGED, IngestStatus.PASSED}
    wrong = {live.query_id for live in lives if "sim: wrong" in live.query.sql}
    assert len(wrong) == OUTAGE_POSTS // WRONG_EVERY
    items = TriageItem.objects.filter(query__live__in=posted)
    assert set(items.values_list("query_id", flat=True)) == wrong, "the queue holds what the judges flagged, no more"
    for item in items:
        assert not item.verifier_failed and not item.probe_confirmed
        assert item.priority == item.judges_agreeing == 1
        assert item.flagged_because.startswith("1 of 1 judges rejected (any) (verifier could not check: transport:")
    for live in lives:
        assert live.verifier_result["outcome"] == "fault" and live.verifier_result["cause"] == "transport"
        assert any(note.startswith("verifier could not check: transport") for note in live.decision["notes"])
    probed = [probe.probe_run for live in lives for probe in live.probes.all()]
    assert probed and {run.outcome for run in probed} == {"error"}, "the detector's probes could not run"
    status = poster.status(posted[1])
    assert status["verifier"]["outcome"] == "fault" and status["status"] == IngestStatus.PASSED


@pytest.mark.django_db(transaction=True)
def test_a_hypothesis_probe_judge_that_could_run_no_probe_does_not_flag(tmp_path, monkeypatch, simulator, poster):
    path = tmp_path / "shop.sqlite3"
    factories.fanout_trap_warehouse(path, monkeypatch)
    hypothesis_judge = simulated_version(name="hypothesis-live", backend="hypothesis_probe")
    strict_policy([hypothesis_judge], run_verifier=False, run_fanout_detector=False)
    path.unlink()
    wrong = factories.FANOUT_SQL + " -- sim: wrong join_fanout table=order_items grain=o.id"
    live_id = poster({"external_id": "h-1", "question": "Revenue?", "sql": wrong, "warehouse": "shop"})["id"]

    live = LiveQuery.objects.get(pk=live_id)
    verdict = Verdict.objects.get(query=live.query, judge_version=hypothesis_judge)
    assert verdict.decision == "error" and verdict.reason.startswith("no probe could run:")
    assert live.status == IngestStatus.UNJUDGED, "nothing was checked: shown as unjudged, never flagged"
    assert not TriageItem.objects.filter(query=live.query).exists()


@pytest.mark.django_db
def test_a_judges_select_2_1_probe_never_flags_a_live_query(tmp_path, monkeypatch):
    warehouse = factories.fanout_trap_warehouse(tmp_path / "shop.sqlite3", monkeypatch)  # the warehouse is up
    judge = factories.judge_version("model-probe")
    strict_policy([judge], run_verifier=False, run_fanout_detector=False)
    live = factories.live_query(wh=warehouse, sql=factories.CLEAN_SQL)
    # The judge's stored answer: it accepts, but hands in a "probe" that returns 2, then 1.
    suspicion = {"suspected": True, "join_table": "order_items", "grain_key": "o.id", "probe_sql": "SELECT 2, 1"}
    factories.live_verdict(judge, live.query, "accept", hypotheses=[suspicion])
    live_query_process(live_id=live.pk)

    live.refresh_from_db()
    probe = live.probes.get().probe_run
    assert probe.outcome == "refused" and probe.message.startswith("probe refused: not a fan-out probe")
    assert live.status == IngestStatus.PASSED
    assert not TriageItem.objects.filter(query=live.query).exists()


# --- PostgreSQL: unreachable, and a role that cannot read ----------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def shop_on_postgres(monkeypatch, settings, tmp_path):
    """A fresh shop database on PostgreSQL with a reader role of its own, registered and introspected."""
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    admin = require_postgres_server()
    database, role = unique_name("triage_shop"), unique_name("triage_reader")
    owner_dsn = shop.create_postgres(admin, database)
    reader = create_reader_role(owner_dsn, role=role, tables=shop.TABLES)
    monkeypatch.setenv(dsn_env_var("shop-pg"), reader)
    warehouse = warehouse_register(name="shop-pg", dialect="postgres")
    catalogue_refresh(warehouse=warehouse)
    warehouse.owner_dsn, warehouse.reader_dsn, warehouse.role = owner_dsn, reader, role
    yield warehouse
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
    drop_role(admin, role)


def pg_rows(prefix: str) -> list[dict]:
    right = "SELECT SUM(o.total) FROM orders o WHERE o.status = 'paid'"
    return [
        {
            "external_id": f"{prefix}-ok",
            "question": "Paid revenue?",
            "sql": right + " -- sim: correct",
            "warehouse": "shop-pg",
        },
        {
            "external_id": f"{prefix}-bad",
            "question": "Paid revenue?",
            "sql": right + " -- sim: wrong missing_filter",
            "warehouse": "shop-pg",
        },
    ]


def assert_judges_alone_decided(cause: str):
    lives = {live.query.external_id.rpartition("-")[2]: live for live in LiveQuery.objects.select_related("query")}
    assert lives["ok"].status == IngestStatus.PASSED
    assert lives["bad"].status == IngestStatus.FLAGGED
    item = TriageItem.objects.get(query=lives["bad"].query)
    assert not item.verifier_failed and item.priority == 1
    for live in lives.values():
        assert (live.verifier_result["outcome"], live.verifier_result["cause"]) == ("fault", cause)
        assert live.decision["notes"][0].startswith(f"verifier could not check: {cause}:")


@pytest.mark.django_db(transaction=True)
def test_a_postgres_warehouse_on_a_closed_port_leaves_the_decision_to_the_judges(
    shop_on_postgres, monkeypatch, simulator, poster
):
    strict_policy([simulated_version(name="pg-judge")])
    parts = urlparse(shop_on_postgres.reader_dsn)
    unreachable = parts._replace(netloc=f"{parts.netloc.rpartition('@')[0]}@127.0.0.1:{closed_port()}")
    monkeypatch.setenv(dsn_env_var("shop-pg"), urlunparse(unreachable))
    poster(pg_rows("closed"))
    assert_judges_alone_decided("transport")


@pytest.mark.django_db(transaction=True)
def test_a_postgres_reader_stripped_of_select_leaves_the_decision_to_the_judges(shop_on_postgres, simulator, poster):
    strict_policy([simulated_version(name="pg-judge")])
    with psycopg.connect(shop_on_postgres.owner_dsn, autocommit=True) as conn:
        role = sql.Identifier(shop_on_postgres.role)
        conn.execute(sql.SQL("REVOKE SELECT ON ALL TABLES IN SCHEMA public FROM {}").format(role))
    poster(pg_rows("stripped"))
    assert_judges_alone_decided("privilege")
