"""Blind double labelling (issue 26, item 6): a labeller sees no other labels before giving their own,
κ rests on labels given blind, and whoever is shown the others' labels is recorded."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from labelling.agreement_report import agreement_report
from labelling.blind import label_reveals_record
from labelling.goldset_io import goldset_import
from labelling.models import GoldSet, Label, LabelReveal
from labelling.services import goldset_publish, label_create
from labelling.tests import factories

pytestmark = pytest.mark.django_db
OTHER = "amy-the-other-labeller"  # a name that appears on a page only if amy's labels are shown


@pytest.fixture
def amy(django_user_model):
    return django_user_model.objects.create_user(username=OTHER, password="pw-for-tests")


@pytest.fixture
def double(role_users, amy):
    """A published gold set of two items amy labelled; the second also has an import label."""
    gold_set = factories.gold_set(name="double", overlap_share=1.0)
    first = factories.query(gold_set=gold_set, external_id="first", sql="SELECT 1")
    second = factories.query(gold_set=gold_set, external_id="second", sql="SELECT 2")
    label_create(query=first, labeller=amy, decision="wrong", error_class="join_fanout")
    label_create(query=second, labeller=amy, decision="correct")
    label_create(query=second, labeller=None, decision="unsure", source="import")
    version = goldset_publish(gold_set=gold_set, resolve="majority")
    return {"gold_set": gold_set, "first": first, "second": second, "version": version}


def allow_reveal(gold_set: GoldSet) -> None:
    gold_set.reveal_labels_after_labelling = True
    gold_set.save(update_fields=["reveal_labels_after_labelling"])


def item_page(client, query) -> str:
    return client.get(reverse("labelling:queue_item", args=[query.gold_set.name, query.pk])).content.decode()


def label_on_page(client, query, decision="correct", error_class=""):
    data = {"decision": decision, "error_class": error_class}
    return client.post(reverse("labelling:queue_label", args=[query.gold_set.name, query.pk]), data)


# --- what a labeller sees ---------------------------------------------------------------------


def test_the_item_page_never_shows_other_labels_before_the_labeller_gives_theirs(client_for, double):
    allow_reveal(double["gold_set"])
    html = item_page(client_for("labeller"), double["first"])
    assert OTHER not in html and 'id="other-labels"' not in html
    assert not LabelReveal.objects.exists()


def test_by_default_the_other_labels_stay_hidden_even_after_labelling(client_for, role_users, double):
    client = client_for("labeller")
    label_on_page(client, double["first"])
    html = item_page(client, double["first"])
    assert "Your label" in html and OTHER not in html and 'id="other-labels"' not in html
    assert not LabelReveal.objects.exists()
    assert Label.objects.get(labeller=role_users["labeller"]).blind


def test_where_the_gold_set_allows_the_labeller_sees_the_others_after_labelling_and_the_reveal_is_recorded(
    client_for, role_users, double
):
    allow_reveal(double["gold_set"])
    client = client_for("labeller")
    label_on_page(client, double["second"], "wrong", "misread_intent")
    html = item_page(client, double["second"])
    section = html.split('id="other-labels"')[1].split("</section>")[0]
    assert OTHER in section and "correct" in section and "(import)" in section and "unsure" in section
    assert "Your label was given before you saw these" in section
    reveal = LabelReveal.objects.get()
    assert (reveal.user, reveal.query, reveal.shown_on) == (role_users["labeller"], double["second"], "queue")
    # Labelling it again after seeing the others is not blind, and the page says so.
    label_on_page(client, double["second"], "correct")
    current = Label.objects.get(labeller=role_users["labeller"], is_current=True)
    assert not current.blind and Label.objects.get(labeller=role_users["labeller"], is_current=False).blind
    assert "agreement leaves it out" in item_page(client, double["second"])


def test_the_version_page_shows_a_labeller_only_their_own_labels(client_for, double):
    client = client_for("labeller")
    label_on_page(client, double["first"], "correct")
    url = reverse("labelling:version_browse", args=["double", double["version"].number])
    html = client.get(url).content.decode()
    items = html.split('id="version-items"')[1]
    assert OTHER not in html and "(import)" not in items and "join_fanout" not in items
    assert "<strong>you</strong>: correct" in items and items.count("others' labels hidden") == 2
    assert 'id="left-out"' not in html and 'id="audit"' not in html and 'id="blind-note"' in html
    # Every filter but the text search reads the labels: a labeller's filters are ignored.
    filtered = client.get(url, {"label": "wrong", "labeller": OTHER}).content.decode()
    assert "<code>first</code>" in filtered and "<code>second</code>" in filtered
    assert 'name="labeller"' not in filtered and "items with all labels" not in html
    assert not LabelReveal.objects.exists()


def test_the_version_page_reveals_a_labelled_item_where_the_gold_set_allows(client_for, role_users, double):
    allow_reveal(double["gold_set"])
    client = client_for("labeller")
    label_on_page(client, double["first"], "correct")
    items = (
        client.get(reverse("labelling:version_browse", args=["double", double["version"].number]))
        .content.decode()
        .split('id="version-items"')[1]
    )
    first, second = items.split("<code>second</code>")
    assert OTHER in first and "join_fanout" in first  # labelled: revealed
    assert OTHER not in second and "unsure" not in second  # not labelled yet: hidden
    assert list(LabelReveal.objects.values_list("query_id", "shown_on")) == [(double["first"].pk, "version")]


# --- who may open what ------------------------------------------------------------------------


def label_pages(double) -> list[str]:
    version = double["version"]
    return [
        reverse("labelling:agreement", args=["double"]),
        reverse("labelling:agreement", args=["double"]) + f"?version={version.number}",
        reverse("labelling:agreement_export", args=["double", "json"]),
        reverse("labelling:agreement_export", args=["double", "csv"]),
        reverse("labelling:disagreements_export", args=["double", "json"]),
        reverse("labelling:disagreements_export", args=["double", "csv"]),
        reverse("labelling:version_items_export", args=["double", version.number, "json"]),
        reverse("labelling:version_items_export", args=["double", version.number, "csv"]),
        reverse("labelling:version_export", args=[version.pk, "jsonl"]),
        reverse("labelling:version_export", args=[version.pk, "csv"]),
        reverse("labelling:version_diff", args=["double"]) + f"?old={version.number}&new={version.number}",
    ]


@pytest.mark.parametrize(
    "who, status", [("labeller", 403), ("analyst", 403), ("outsider", 403), ("ml_engineer", 200), ("admin", 200)]
)
def test_agreement_disagreements_and_label_downloads_are_for_engineers_and_admins(client_for, double, who, status):
    client = client_for(who)
    for url in label_pages(double):
        response = client.get(url)
        assert response.status_code == status, (who, url)
        if status == 403:
            assert OTHER.encode() not in response.content


def test_a_labeller_s_pages_link_to_no_agreement_and_no_label_download(client_for, double):
    client = client_for("labeller")
    for url in (reverse("labelling:index"), reverse("labelling:goldset_detail", args=["double"])):
        html = client.get(url).content.decode()
        assert "/agreement" not in html and "export." not in html and "items." not in html, url
    engineer = client_for("ml_engineer").get(reverse("labelling:goldset_detail", args=["double"])).content.decode()
    assert "/agreement" in engineer and "export.jsonl" in engineer


# --- what seeing costs ------------------------------------------------------------------------


def test_every_page_and_download_that_shows_labels_records_its_reveals_for_the_viewer(client_for, role_users, double):
    admin = role_users["admin"]
    client = client_for("admin")
    client.get(reverse("labelling:agreement", args=["double"]))  # "second" disagrees: amy vs the import
    assert set(LabelReveal.objects.filter(user=admin).values_list("query_id", "shown_on")) == {
        (double["second"].pk, "agreement")
    }
    response = client.get(reverse("labelling:version_items_export", args=["double", double["version"].number, "json"]))
    b"".join(response.streaming_content)
    assert set(LabelReveal.objects.filter(user=admin).values_list("query_id", flat=True)) == {
        double["first"].pk,
        double["second"].pk,
    }
    assert LabelReveal.objects.filter(user=admin).count() == 2  # the first reveal of each item only
    filtered = client.get(
        reverse("labelling:version_items_export", args=["double", double["version"].number, "json"]),
        {"disagreement": "yes", "labeller": OTHER},
    )
    assert [record["id"] for record in json.loads(b"".join(filtered.streaming_content))] == []
    # An admin labels in the queue too: having been shown the others, their label is not blind.
    label_on_page(client, double["first"])
    assert not Label.objects.get(labeller=admin, query=double["first"]).blind


def test_showing_a_user_only_their_own_label_reveals_nothing(role_users):
    gold_set = factories.gold_set(name="alone")
    query = factories.query(gold_set=gold_set)
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    assert label_reveals_record(user=role_users["labeller"], query_ids=[query.pk], shown_on="test") == 0
    assert label_reveals_record(user=role_users["admin"], query_ids=[query.pk], shown_on="test") == 1


# --- agreement rests on blind labels ------------------------------------------------------------


@pytest.fixture
def three_raters(role_users, amy):
    """Ten items each labelled by amy and the labeller, all agreeing; then the labeller relabels two after a reveal."""
    gold_set = factories.gold_set(name="kappa", overlap_share=1.0)
    allow_reveal(gold_set)
    items = [factories.query(gold_set=gold_set, external_id=f"k{n}") for n in range(10)]
    for n, item in enumerate(items):
        decision = "correct" if n % 2 else "wrong"
        error_class = "" if n % 2 else "missing_filter"
        label_create(query=item, labeller=amy, decision=decision, error_class=error_class)
        label_create(query=item, labeller=role_users["labeller"], decision=decision, error_class=error_class)
    return gold_set, items


def test_agreement_counts_only_labels_given_blind_and_says_how_many_it_left_out(client_for, role_users, three_raters):
    gold_set, items = three_raters
    before = agreement_report(gold_set=gold_set)
    assert (before["blind_labels"], before["not_blind_excluded"], before["items"]) == (20, 0, 10)
    assert before["pairs"][0]["cohen_kappa"] == 1.0
    client = client_for("labeller")
    for item in items[:2]:  # seen the others on the item page, then changed their mind
        item_page(client, item)
        label_on_page(client, item, "unsure")
    after = agreement_report(gold_set=gold_set)
    assert (after["blind_labels"], after["not_blind_excluded"], after["items"]) == (16, 2, 8)
    assert after["pairs"][0]["cohen_kappa"] == 1.0  # the two non-blind "unsure" labels do not count against
    page = client_for("ml_engineer").get(reverse("labelling:agreement", args=["kappa"])).content.decode()
    assert "κ on 16 labels given blind; 2 excluded" in page
    version = goldset_publish(gold_set=gold_set, resolve="majority")
    engineer = client_for("ml_engineer")
    browse = engineer.get(reverse("labelling:version_browse", args=["kappa", version.number])).content.decode()
    # The page loads its agreement line after itself, from the version's agreement partial.
    partial = reverse("labelling:version_agreement", args=["kappa", version.number])
    assert f'hx-get="{partial}"' in browse
    assert "κ on 16 labels given blind; 2 excluded" in engineer.get(partial).content.decode()
    assert "not blind" in browse


def test_the_agreement_command_and_download_say_the_same(client_for, three_raters):
    gold_set, _ = three_raters
    out = io.StringIO()
    call_command("agreement_report", "--gold-set", "kappa", "--format", "table", stdout=out)
    assert "kappa on 20 labels given blind; 0 excluded" in out.getvalue()
    response = client_for("ml_engineer").get(reverse("labelling:agreement_export", args=["kappa", "json"]))
    assert json.loads(b"".join(response.streaming_content)) == agreement_report(gold_set=gold_set)


def test_an_imported_label_is_blind_unless_its_labeller_had_been_shown_the_item(tmp_path, role_users, amy):
    gold_set = factories.gold_set(name="imported")
    seen = factories.query(gold_set=gold_set, external_id="seen")
    label_create(query=seen, labeller=amy, decision="correct")
    label_reveals_record(user=role_users["labeller"], query_ids=[seen.pk], shown_on="test")
    lines = [
        {"id": "seen", "question": "How many?", "sql": "SELECT 1", "label": "wrong", "labeller": "labeller-user"},
        {"id": "fresh", "question": "How many?", "sql": "SELECT 2", "label": "correct", "labeller": "labeller-user"},
        {"id": "fresh", "question": "How many?", "sql": "SELECT 2", "label": "correct"},
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    goldset_import(path_or_file=path, gold_set_name="imported", fmt="jsonl")
    blind = {
        (label.query.external_id, label.labeller.username if label.labeller else None): label.blind
        for label in Label.objects.filter(source="import").select_related("query", "labeller")
    }
    assert blind == {("seen", "labeller-user"): False, ("fresh", "labeller-user"): True, ("fresh", None): True}


def test_a_new_gold_set_is_blind_by_default():
    assert GoldSet.objects.create(name="fresh").reveal_labels_after_labelling is False


def test_an_admin_allows_the_reveal_in_the_django_admin_and_an_ml_engineer_cannot(client, role_users):
    gold_set = factories.gold_set(name="set-by-admin")
    url = reverse("admin:labelling_goldset_change", args=[gold_set.pk])
    for who in ("admin", "ml_engineer"):
        role_users[who].is_staff = True
        role_users[who].save(update_fields=["is_staff"])
    client.force_login(role_users["ml_engineer"])
    assert (
        client.post(
            url, {"name": gold_set.name, "overlap_share": "0.2", "reveal_labels_after_labelling": "on"}
        ).status_code
        == 403
    )
    client.force_login(role_users["admin"])
    assert 'name="reveal_labels_after_labelling"' in client.get(url).content.decode()
    thresholds = {
        "fitness_gate_catch_lower": "0.8",
        "fitness_gate_false_reject_upper": "0.05",
        "fitness_monitor_kappa_lower": "0.6",
    }
    response = client.post(
        url, {"name": gold_set.name, "overlap_share": "0.2", "reveal_labels_after_labelling": "on", **thresholds}
    )
    assert response.status_code == 302
    gold_set.refresh_from_db()
    assert gold_set.reveal_labels_after_labelling
