"""Browsing a version (search, filters, pages, labels, history) and its downloads."""

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from labelling import views
from labelling.goldset_io import goldset_import
from labelling.models import GoldSetVersion, Query
from labelling.selectors import version_item_filter, version_item_list
from labelling.services import adjudication_create, goldset_publish, label_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(tmp_path, role_users):
    rows = []
    for n in range(1, 8):
        item = {"id": f"b{n}", "question": f"Revenue {n}?", "sql": f"SELECT {n} FROM orders"}
        rows.append({**item, "label": "correct", "labeller": "amy"})
        rows.append({**item, "label": "correct" if n % 3 else "wrong", "labeller": "bob"})
    rows.append({"id": "b8", "question": "=HYPERLINK(1)", "sql": "SELECT 8", "label": "0", "error_class": "syntax"})
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    goldset_import(path_or_file=path, gold_set_name="browse", create_labellers=True)
    b3 = Query.objects.get(external_id="b3")
    adjudication_create(query=b3, adjudicator=role_users["ml_engineer"], decision="correct", reason="checked")
    label_create(query=b3, labeller=get_user_model().objects.get(username="bob"), decision="correct")

    return goldset_publish(gold_set=b3.gold_set, resolve="manual")


def page(client, version, **params):
    url = reverse("labelling:version_browse", args=["browse", version.number])
    return client.get(url, params).content.decode()


def test_the_version_page_lists_items_with_labels_adjudication_and_history(client, role_users, version):
    client.force_login(role_users["ml_engineer"])
    html = page(client, version)
    assert "b3" in html and "adjudicated correct" in html and "checked" in html and "(superseded)" in html
    rows = html.split('id="version-items"')[1]
    assert "<code>b3</code></a>" in rows and "<code>b6</code></a>" not in rows  # b6 left out: the labellers disagree
    assert "1 left out: 1 unresolved disagreement" in html and "<code>b6</code>: unresolved disagreement" in html
    assert "Resolution: manual" in html


def test_search_and_filters_narrow_the_items(client, role_users, version):
    client.force_login(role_users["ml_engineer"])

    def ids(**params):
        html = page(client, version, **params).split('id="version-items"')[1]
        return sorted(f"b{n}" for n in range(1, 9) if f"<code>b{n}</code>" in html)

    assert ids(search="Revenue 2") == ["b2"]
    assert ids(search="SELECT 8") == ["b8"]
    assert ids(label="wrong") == ["b8"] and ids(error_class="syntax") == ["b8"]
    assert ids(labeller="amy") == ["b1", "b2", "b3", "b4", "b5", "b7"]
    assert ids(disagreement="yes") == []  # b3 now agrees; b6, the one disagreement, is left out
    assert ids(source="manual") == ["b3"]


def test_pages_hold_the_page_size(client, role_users, version, monkeypatch):
    monkeypatch.setattr(views, "BROWSE_PAGE_SIZE", 3)
    client.force_login(role_users["ml_engineer"])
    assert "page 1 of 3" in page(client, version)
    assert "<code>b8</code>" in page(client, version, page=3)


def test_items_export_with_every_label_neutralised(client, role_users, version):
    client.force_login(role_users["ml_engineer"])
    url = reverse("labelling:version_items_export", args=["browse", version.number, "json"])
    records = json.loads(b"".join(client.get(url).streaming_content))
    b3 = next(r for r in records if r["id"] == "b3")
    assert [(label["labeller"], label["label"], label["current"]) for label in b3["labels"]] == [
        ("amy", "correct", True),
        ("bob", "wrong", False),
        ("bob", "correct", True),
    ]
    assert b3["adjudications"][0]["reason"] == "checked"
    response = client.get(reverse("labelling:version_items_export", args=["browse", version.number, "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == sum(max(1, len(r["labels"])) for r in records)
    assert next(r for r in rows if r["id"] == "b8")["question"] == "'=HYPERLINK(1)"


def test_the_publish_form_offers_the_resolution_policies(client, role_users, version):
    client.force_login(role_users["ml_engineer"])
    html = client.get(reverse("labelling:goldset_detail", args=["browse"])).content.decode()
    assert 'value="majority"' in html and 'value="unanimous-only"' in html
    response = client.post(reverse("labelling:goldset_publish", args=["browse"]), {"resolve": "unanimous-only"})
    latest = GoldSetVersion.objects.filter(gold_set__name="browse").order_by("-number").first()
    assert response.status_code == 302 and latest.resolution == "unanimous-only"
    # unanimous-only ignores the adjudication: b3's labels agree now, b6's do not.
    assert sorted(e["id"] for e in latest.left_out) == ["b6"]
    assert latest.items.count() == 7


def test_the_version_filter_ignores_only_the_value_it_refuses_and_a_blind_one_keeps_search_and_metadata(version):
    def ids(filters):
        return sorted(item.query.external_id for item in version_item_list(filters=filters))

    # A labeller nobody is drops only that filter: the label filter still narrows.
    refused = version_item_filter(version=version, params={"labeller": "nobody", "label": "wrong"}, labellers=["amy"])
    assert ids(refused) == ["b8"] and "labeller" in refused.form.errors
    blind = version_item_filter(version=version, params={"label": "wrong", "search": "Revenue"}, sees_all=False)
    assert set(blind.form.fields) == {"search", "meta_key", "meta_value"}
    assert len(ids(blind)) == 6 and "b8" not in ids(blind)
