"""Every labelling page: who may open it, and the keyboard flow's endpoints walked without a browser."""

import io
import json

import pytest
from django.urls import reverse

from labelling.models import Adjudication, GoldSetVersion, Label, Query
from labelling.services import goldset_publish, label_create
from labelling.tests import factories
from probes.models import Catalogue, Warehouse

pytestmark = pytest.mark.django_db

ALL_USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]
READERS = {"labeller", "ml_engineer", "admin"}
MANAGERS = {"ml_engineer", "admin"}
LABELLERS = {"labeller", "admin"}


@pytest.fixture
def world(role_users):
    gold_set = factories.gold_set(name="gs")
    q1 = factories.query(gold_set=gold_set, external_id="q1", sql="SELECT id FROM orders")
    q2 = factories.query(gold_set=gold_set, external_id="q2")
    label_create(query=q1, labeller=role_users["analyst"], decision="correct")
    label_create(query=q1, labeller=role_users["ml_engineer"], decision="wrong", error_class="syntax")
    version = goldset_publish(gold_set=gold_set)
    return {"gold_set": gold_set, "q1": q1, "q2": q2, "version": version}


def pages(world):
    """(method, url, roles allowed, expected status for an allowed role)."""
    v, q1 = world["version"], world["q1"]
    return [
        ("get", reverse("labelling:index"), READERS, 200),
        ("get", reverse("labelling:goldset_detail", args=["gs"]), READERS, 200),
        ("get", reverse("labelling:version_browse", args=["gs", v.number]), READERS, 200),
        ("get", reverse("labelling:version_agreement", args=["gs", v.number]), MANAGERS, 200),
        # Labels, final labels and agreement: not for labellers, whose labelling is blind.
        ("get", reverse("labelling:agreement", args=["gs"]), MANAGERS, 200),
        ("get", reverse("labelling:agreement_export", args=["gs", "json"]), MANAGERS, 200),
        ("get", reverse("labelling:agreement_export", args=["gs", "csv"]), MANAGERS, 200),
        ("get", reverse("labelling:disagreements_export", args=["gs", "json"]), MANAGERS, 200),
        ("get", reverse("labelling:disagreements_export", args=["gs", "csv"]), MANAGERS, 200),
        ("get", reverse("labelling:version_items_export", args=["gs", v.number, "json"]), MANAGERS, 200),
        ("get", reverse("labelling:version_items_export", args=["gs", v.number, "csv"]), MANAGERS, 200),
        ("get", reverse("labelling:version_diff", args=["gs"]) + f"?old={v.number}&new={v.number}", MANAGERS, 200),
        ("get", reverse("labelling:version_export", args=[v.pk, "jsonl"]), MANAGERS, 200),
        ("get", reverse("labelling:version_export", args=[v.pk, "csv"]), MANAGERS, 200),
        ("get", reverse("labelling:preview", args=[q1.pk]), READERS, 200),
        ("get", reverse("labelling:import"), MANAGERS, 200),
        ("post", reverse("labelling:goldset_publish", args=["gs"]), MANAGERS, 302),
        ("post", reverse("labelling:adjudicate", args=[q1.pk]), MANAGERS, 302),
        ("get", reverse("labelling:queue", args=["gs"]), LABELLERS, 302),
        ("get", reverse("labelling:queue_item", args=["gs", q1.pk]), LABELLERS, 200),
        ("get", reverse("labelling:queue_next", args=["gs", q1.pk]), LABELLERS, 302),
        ("get", reverse("labelling:queue_prev", args=["gs", q1.pk]), LABELLERS, 302),
        ("post", reverse("labelling:queue_label", args=["gs", q1.pk]), LABELLERS, 302),
        ("post", reverse("labelling:queue_undo", args=["gs"]), LABELLERS, 302),
    ]


def test_anonymous_visitors_are_sent_to_login_everywhere(client, world):
    for method, url, _allowed, _status in pages(world):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


@pytest.mark.parametrize("who", ALL_USERS)
def test_each_page_admits_exactly_its_roles(client, role_users, world, who):
    client.force_login(role_users[who])
    for method, url, allowed, status in pages(world):
        data = {"decision": "correct", "reason": "checked the schema"} if method == "post" else None
        response = getattr(client, method)(url, data) if data else getattr(client, method)(url)
        expected = status if who in allowed else 403
        assert response.status_code == expected, f"{who} {method} {url}"


@pytest.mark.parametrize("name", ["goldset_publish", "queue_undo"])
def test_mutating_views_refuse_get(client, role_users, world, name):
    client.force_login(role_users["admin"])
    assert client.get(reverse(f"labelling:{name}", args=["gs"])).status_code == 405


def test_label_and_adjudicate_refuse_get(client, role_users, world):
    client.force_login(role_users["admin"])
    assert client.get(reverse("labelling:queue_label", args=["gs", world["q1"].pk])).status_code == 405
    assert client.get(reverse("labelling:adjudicate", args=[world["q1"].pk])).status_code == 405


def test_the_keyboard_flow_saves_advances_goes_back_and_undoes(client, role_users):
    gold_set = factories.gold_set(name="flow")
    items = [factories.query(gold_set=gold_set, external_id=f"f{i}") for i in range(3)]
    client.force_login(role_users["labeller"])
    htmx = {"HTTP_HX_REQUEST": "true"}

    start = client.get(reverse("labelling:queue", args=["flow"]))
    assert start["Location"] == reverse("labelling:queue_item", args=["flow", items[0].pk])
    page = client.get(start["Location"]).content.decode()
    assert 'data-key="c"' in page and "labelling-queue.js" in page

    # c: save "correct" on item 0 -> the partial of item 1 comes back, URL pushed, no full page
    saved = client.post(reverse("labelling:queue_label", args=["flow", items[0].pk]), {"decision": "correct"}, **htmx)
    assert saved.status_code == 200
    assert saved["HX-Push-Url"] == reverse("labelling:queue_item", args=["flow", items[1].pk])
    assert f'data-query="{items[1].pk}"' in saved.content.decode() and "<html" not in saved.content.decode()

    # w 3: wrong with an error class and a note, on item 1 -> item 2
    saved = client.post(
        reverse("labelling:queue_label", args=["flow", items[1].pk]),
        {"decision": "wrong", "error_class": "aggregation_grain", "note": "sums a pre-aggregated column"},
        **htmx,
    )
    assert f'data-query="{items[2].pk}"' in saved.content.decode()
    label = Label.objects.get(query=items[1], labeller=role_users["labeller"], is_current=True)
    assert (label.decision, label.error_class, label.note) == (
        "wrong",
        "aggregation_grain",
        "sums a pre-aggregated column",
    )

    # k: back to item 1, then k again to item 0, then j forward to item 1
    back = client.get(reverse("labelling:queue_prev", args=["flow", items[2].pk]), **htmx)
    assert back["HX-Push-Url"].endswith(f"/item/{items[1].pk}/")
    assert "Your label" in back.content.decode()
    back = client.get(reverse("labelling:queue_prev", args=["flow", items[1].pk]), **htmx)
    assert back["HX-Push-Url"].endswith(f"/item/{items[0].pk}/")
    forward = client.get(reverse("labelling:queue_next", args=["flow", items[0].pk]), **htmx)
    assert forward["HX-Push-Url"].endswith(f"/item/{items[1].pk}/")

    # z: undo the last label (item 1's) -> back on item 1, which waits again
    undone = client.post(reverse("labelling:queue_undo", args=["flow"]), **htmx)
    assert undone["HX-Push-Url"].endswith(f"/item/{items[1].pk}/")
    assert not Label.objects.filter(query=items[1], is_current=True).exists()
    assert Label.objects.filter(query=items[1], is_current=False).count() == 1  # kept as history
    assert Query.objects.get(pk=items[1].pk).label_count == 0

    # u on item 2 and the queue is done for this labeller (item 1 was labelled once, so it is skipped)
    client.post(reverse("labelling:queue_label", args=["flow", items[2].pk]), {"decision": "unsure"}, **htmx)
    done = client.get(reverse("labelling:queue", args=["flow"]))
    assert done.status_code == 200 and "Nothing left for you" in done.content.decode()


def test_a_wrong_label_without_class_is_refused_and_nothing_saved(client, role_users):
    gold_set = factories.gold_set(name="flow")
    query = factories.query(gold_set=gold_set)
    client.force_login(role_users["labeller"])
    response = client.post(reverse("labelling:queue_label", args=["flow", query.pk]), {"decision": "wrong"})
    assert response.status_code == 422
    assert not Label.objects.exists()


def test_an_error_class_button_submitted_without_scripts_saves_a_wrong_label(client, role_users):
    gold_set = factories.gold_set(name="flow")
    query = factories.query(gold_set=gold_set)
    client.force_login(role_users["labeller"])
    # What the browser itself posts for an error-class button: its name and value, no decision.
    response = client.post(reverse("labelling:queue_label", args=["flow", query.pk]), {"error_class": "join_fanout"})
    assert response.status_code == 302
    label = Label.objects.get()
    assert (label.decision, label.error_class) == ("wrong", "join_fanout")


def test_an_item_of_another_gold_set_is_not_in_this_queue(client, role_users):
    factories.gold_set(name="one")
    other = factories.query(gold_set=factories.gold_set(name="two"))
    client.force_login(role_users["labeller"])
    assert client.get(reverse("labelling:queue_item", args=["one", other.pk])).status_code == 404


def test_the_item_page_highlights_sql_and_lists_catalogue_columns(client, role_users):
    warehouse = Warehouse.objects.create(name="demo", dialect="sqlite")
    Catalogue.objects.create(
        warehouse=warehouse,
        version=1,
        snapshot={"tables": {"orders": {"columns": [{"name": "unit_price", "type": "REAL", "nullable": False}]}}},
    )
    gold_set = factories.gold_set(name="cat")
    query = factories.query(
        gold_set=gold_set, warehouse=warehouse, sql="SELECT o.unit_price FROM orders o JOIN ghosts g"
    )
    client.force_login(role_users["labeller"])
    html = client.get(reverse("labelling:queue_item", args=["cat", query.pk])).content.decode()
    assert '<span class="k">SELECT</span>' in html
    assert "unit_price" in html and "REAL" in html
    assert "ghosts" in html and "not in the catalogue" in html


def test_adjudication_records_who_and_why_and_shows_on_the_agreement_page(client, role_users, world):
    client.force_login(role_users["ml_engineer"])
    page = client.get(reverse("labelling:agreement", args=["gs"])).content.decode()
    assert "q1" in page and "Items that disagree" in page
    client.post(
        reverse("labelling:adjudicate", args=[world["q1"].pk]),
        {"decision": "wrong", "error_class": "syntax", "reason": "trailing comma"},
    )
    adjudication = Adjudication.objects.get(query=world["q1"])
    assert adjudication.adjudicator == role_users["ml_engineer"] and adjudication.reason == "trailing comma"
    assert "trailing comma" in client.get(reverse("labelling:agreement", args=["gs"])).content.decode()


def test_publish_and_diff_pages_show_the_new_version_and_its_changes(client, role_users, world):
    client.force_login(role_users["admin"])
    Adjudication.objects.create(
        query=world["q1"], adjudicator=role_users["admin"], decision="correct", reason="runs fine"
    )
    client.post(reverse("labelling:goldset_publish", args=["gs"]), {"note": "after adjudication"})
    new = GoldSetVersion.objects.get(gold_set=world["gold_set"], number=2)
    assert new.items.count() == 1 and new.note == "after adjudication"
    html = client.get(reverse("labelling:version_diff", args=["gs"]) + "?old=1&new=2").content.decode()
    assert "1 added" in html and "q1" in html


def test_export_download_is_the_version_as_jsonl(client, role_users, world):
    label_create(query=world["q2"], labeller=role_users["analyst"], decision="wrong", error_class="dialect")
    version = goldset_publish(gold_set=world["gold_set"])
    client.force_login(role_users["ml_engineer"])
    response = client.get(reverse("labelling:version_export", args=[version.pk, "jsonl"]))
    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert records == [
        {
            "id": "q2",
            "question": "How many?",
            "sql": "SELECT 1",
            "label": "wrong",
            "error_class": "dialect",
            "warehouse": None,
            "labeller": None,
            "reference_sql": None,
            "metadata": None,
            "split": None,  # the version has no dev/test split
        }
    ]
    assert "attachment" in response["Content-Disposition"]
    assert client.get(reverse("labelling:version_export", args=[version.pk, "xml"])).status_code == 404


def test_the_upload_form_imports_and_reports_a_bad_line(client, role_users):
    client.force_login(role_users["ml_engineer"])
    good = io.BytesIO(b'{"id": "u1", "question": "q", "sql": "SELECT 1", "label": "correct", "error_class": null}\n')
    good.name = "gold.jsonl"
    response = client.post(reverse("labelling:import"), {"file": good, "gold_set": "uploaded"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "uploaded v1" in response.content.decode()
    bad = io.BytesIO(b'{"id": "u2", "question": "q", "sql": "SELECT 1", "label": "wrong", "error_class": "nope"}\n')
    bad.name = "gold.jsonl"
    response = client.post(reverse("labelling:import"), {"file": bad, "gold_set": "uploaded"})
    assert response.status_code == 422
    assert "line 1: unknown error class &#x27;nope&#x27;" in response.content.decode()
    assert not Query.objects.filter(external_id="u2").exists()
