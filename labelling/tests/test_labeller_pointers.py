"""What waits for a labeller (counted as the queue counts), the confirmations, the adjudication page,
who may import, and the import's warning about items without a warehouse."""

import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from labelling import queue_selectors
from labelling.goldset_io import goldset_import
from labelling.models import LabelReveal, QuerySource
from labelling.queue_selectors import disagreement_get, queue_item_get_next, queue_waiting_for
from labelling.services import goldset_publish, label_create, label_undo
from labelling.tests import factories
from tests.support.access import admitted, denied

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
WHO_MAY_ADJUDICATE = ["admin-user", "ml_engineer-user"]


@pytest.mark.parametrize("seed", range(4))
def test_the_count_is_what_the_queue_still_gives_down_to_nothing_left(role_users, django_user_model, seed):
    """Label until the queue says "Nothing left": the count falls by one a label and is 0 exactly then."""
    rng = random.Random(seed)
    me, other = role_users["labeller"], django_user_model.objects.create_user(username=f"other-{seed}")
    gold_set = factories.gold_set(name=f"count-{seed}", overlap_share=rng.choice([0.0, 0.5, 1.0]))
    for n in range(12):
        query = factories.query(gold_set=gold_set, external_id=f"c{seed}-{n}")
        roll = rng.random()
        if roll < 0.25:
            label_create(query=query, labeller=other, decision="correct")  # wants a second label, or none
        elif roll < 0.4:
            label_undo(label=label_create(query=query, labeller=me, decision="correct"))  # seen by me
        elif roll < 0.5:
            label_create(query=query, labeller=me, decision="unsure")
    for n in range(rng.randint(0, 3)):
        factories.query(external_id=f"audit-{seed}-{n}", source=QuerySource.AUDIT)

    while (following := queue_item_get_next(user=me, gold_set=gold_set)) is not None:
        count = queue_waiting_for(user=me, gold_set=gold_set)
        assert count["total"] == count["audit"] + count["gold_set"] > 0
        label_create(query=following, labeller=me, decision="correct")
        assert queue_waiting_for(user=me, gold_set=gold_set)["total"] == count["total"] - 1
    assert queue_waiting_for(user=me, gold_set=gold_set)["total"] == 0


def test_items_waiting_only_for_someone_elses_second_label_are_not_counted_for_me(role_users):
    gold_set = factories.gold_set(name="second", overlap_share=1.0)
    query = factories.query(gold_set=gold_set)
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    mine = queue_waiting_for(user=role_users["labeller"], gold_set=gold_set)
    theirs = queue_waiting_for(user=role_users["admin"], gold_set=gold_set)
    assert (mine["gold_set"], mine["for_others"]) == (0, 1)
    assert (theirs["gold_set"], theirs["for_others"]) == (1, 0)


def test_the_queues_counts_stop_past_the_cap_and_say_so(client_for, role_users, monkeypatch):
    """A count past the cap reads "N+" (issue 33: exact counts of a large set grew with it)."""
    monkeypatch.setattr(queue_selectors, "COUNT_CAP", 2)
    gold_set = factories.gold_set(name="capped", overlap_share=1.0)
    queries = [factories.query(gold_set=gold_set, external_id=f"k{n}") for n in range(6)]
    for query in queries[:3]:
        label_create(query=query, labeller=role_users["labeller"], decision="correct")
    assert queue_waiting_for(user=role_users["labeller"], gold_set=gold_set)["gold_set"] == 3  # 3 of 3 past the cap
    page = client_for("labeller").get(reverse("labelling:queue", args=["capped"]), follow=True).content.decode()
    assert "<strong>2+</strong> items need your label · 2+ in the set · 2+ labelled by you" in page
    for query in queries[3:5]:
        label_create(query=query, labeller=role_users["labeller"], decision="correct")
    assert queue_waiting_for(user=role_users["labeller"], gold_set=gold_set)["gold_set"] == 1  # exact under the cap


def test_the_gold_set_list_shows_the_queues_count_for_a_labeller_only(client_for, role_users):
    gold_set = factories.gold_set(name="listed")
    for n in range(3):
        factories.query(gold_set=gold_set, external_id=f"l{n}")
    label_create(query=gold_set.queries.first(), labeller=role_users["labeller"], decision="correct")
    html = client_for("labeller").get(reverse("labelling:index")).content.decode()
    assert '<td class="num for-you">2</td>' in html
    assert "Need your label" not in client_for("ml_engineer").get(reverse("labelling:index")).content.decode()


def test_a_label_and_an_undo_say_so_in_the_status_line(client_for, role_users):
    gold_set = factories.gold_set(name="said")
    first, _second = factories.query(gold_set=gold_set, external_id="s1"), factories.query(gold_set=gold_set)
    client = client_for("labeller")
    url = reverse("labelling:queue_label", args=["said", first.pk])
    html = client.post(url, {"decision": "wrong", "error_class": "join_fanout"}, **HTMX).content.decode()
    assert 'hx-swap-oob="true"' in html and "Saved: s1 labelled wrong (join_fanout). Press z to undo." in html
    html = client.post(reverse("labelling:queue_undo", args=["said"]), **HTMX).content.decode()
    assert "Undone: your label wrong of s1 is withdrawn; label it again now." in html
    page = client.post(url, {"decision": "correct"}, follow=True).content.decode()  # without htmx: a message
    assert "Saved: s1 labelled correct. Press z to undo." in page


def test_a_disagreement_names_who_differs_and_who_may_adjudicate(role_users):
    query = factories.query(gold_set=factories.gold_set(name="differ"))
    mine = label_create(query=query, labeller=role_users["labeller"], decision="correct")
    same = label_create(query=query, labeller=role_users["analyst"], decision="correct")
    assert disagreement_get(query=query, mine=mine, others=[same]) is None
    imported = label_create(query=query, labeller=None, decision="wrong", error_class="syntax", source="import")
    note = disagreement_get(query=query, mine=mine, others=[same, imported])
    assert note["with"] == ["(import)"] and note["adjudication"] is None
    assert note["adjudicators"] == WHO_MAY_ADJUDICATE


def test_the_agreement_page_links_each_disagreeing_item_and_names_the_adjudicators(client_for, role_users):
    query = factories.query(gold_set=factories.gold_set(name="linked"), external_id="d1")
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    label_create(query=query, labeller=None, decision="wrong", error_class="syntax", source="import")
    html = client_for("ml_engineer").get(reverse("labelling:agreement", args=["linked"])).content.decode()
    assert f'<a href="{reverse("labelling:adjudication", args=[query.pk])}"' in html
    assert f"Awaiting an adjudicator: {', '.join(WHO_MAY_ADJUDICATE)} may adjudicate." in html


@pytest.mark.parametrize("who", ["ml_engineer", "admin", "labeller", "analyst", "outsider"])
def test_the_adjudication_page_is_for_adjudicators_only(client_for, role_users, who):
    query = factories.query(gold_set=factories.gold_set(name="page"), question="Which orders?")
    label_create(query=query, labeller=None, decision="wrong", error_class="syntax", source="import")
    response = client_for(who).get(reverse("labelling:adjudication", args=[query.pk]))
    if who in ("ml_engineer", "admin"):
        assert admitted(response) and "Which orders?" in response.content.decode()
        assert LabelReveal.objects.filter(user=role_users[who], query=query, shown_on="adjudication").exists()
    else:
        assert denied(response)
        assert not LabelReveal.objects.filter(query=query).exists()


def test_the_adjudication_page_sends_an_anonymous_visitor_to_login(client):
    query = factories.query(gold_set=factories.gold_set(name="anon"))
    assert denied(client.get(reverse("labelling:adjudication", args=[query.pk])))


def test_a_labeller_refused_the_import_page_is_told_who_can_import(client_for):
    response = client_for("labeller").get(reverse("labelling:import"))
    assert response.status_code == 403
    html = response.content.decode()
    assert "so ML engineers and admins import, not labellers" in html
    assert f"Who can import: {', '.join(WHO_MAY_ADJUDICATE)}." in html
    index = client_for("labeller").get(reverse("labelling:index")).content.decode()
    assert 'id="import-pointer"' in index and ", ".join(WHO_MAY_ADJUDICATE) in index


@pytest.mark.parametrize("who", ["analyst", "outsider"])
def test_others_are_refused_the_import_page_too(client_for, who):
    assert denied(client_for(who).get(reverse("labelling:import")))


CSV = "id,question,sql,label\nw1,How many?,SELECT 1,correct\nw2,How many more?,SELECT 2,wrong\n"


def test_the_import_summary_warns_about_new_items_without_a_warehouse(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(CSV.replace("wrong", "correct"))
    summary = goldset_import(path_or_file=path, gold_set_name="bare", fmt="csv").import_summary
    assert summary.items_without_warehouse == 2
    assert summary.warnings()[0].startswith("2 new items name no warehouse, so no result preview is possible")
    again = goldset_import(path_or_file=path, gold_set_name="bare", fmt="csv").import_summary
    assert again.warnings() == []  # nothing new: nothing to warn about


def test_import_gold_prints_the_warning(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("id,question,sql,label\nw1,How many?,SELECT 1,correct\n")
    out = StringIO()
    call_command("import_gold", str(path), "--gold-set", "cmd-bare", stdout=out)
    assert "Warning: 1 new item names no warehouse, so no result preview is possible for it." in out.getvalue()


def test_an_import_with_warehouses_warns_about_nothing(tmp_path, demo_sqlite_warehouse):
    path = tmp_path / "g.csv"
    path.write_text("id,question,sql,label,warehouse\nw1,How many?,SELECT 1,correct,demo\n")
    out = StringIO()
    call_command("import_gold", str(path), "--gold-set", "cmd-demo", stdout=out)
    assert "Warning" not in out.getvalue()


def test_the_version_page_links_each_id_to_its_adjudication_page_for_adjudicators(client_for, role_users):
    gold_set = factories.gold_set(name="versioned")
    query = factories.query(gold_set=gold_set, external_id="v-1")
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    version = goldset_publish(gold_set=gold_set, user=role_users["ml_engineer"], note="")
    url = reverse("labelling:version_browse", args=["versioned", version.number])
    link = f'href="{reverse("labelling:adjudication", args=[query.pk])}"'
    assert link in client_for("ml_engineer").get(url).content.decode()
    assert link not in client_for("labeller").get(url).content.decode()  # blind: the page would show labels
