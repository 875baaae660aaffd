"""Labeller progress: labels done today and this week, and agreement with the others."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from labelling.models import Label, LabelSource
from labelling.progress import agreement_with_others, labeller_progress_list
from labelling.services import label_create
from labelling.tests import factories

pytestmark = pytest.mark.django_db
# A Wednesday: Monday 30 November starts its week.
NOW = timezone.make_aware(datetime.datetime(2026, 12, 2, 12, 0))


def test_agreement_with_others_pools_every_other_rater_on_shared_items():
    ratings = {
        1: {"ann": "wrong", "bob": "wrong", "cy": "correct"},
        2: {"ann": "correct", "bob": "wrong"},
        3: {"ann": "correct", "bob": "correct"},
        4: {"bob": "correct", "cy": "correct"},  # without ann: not hers
    }
    # ann: (w, w), (w, c), (c, w), (c, c): half the same; each side half wrong, so chance is
    # half too and kappa is 0.
    assert agreement_with_others(ratings=ratings, rater="ann") == {
        "n": 4,
        "share": 0.5,
        "kappa": 0.0,
        "low_support": True,
    }
    assert agreement_with_others(ratings=ratings, rater="dee")["n"] == 0


def labelled(query, user, decision, at, source=LabelSource.MANUAL):
    label = label_create(
        query=query, labeller=user, decision=decision, error_class="join_fanout" if decision == "wrong" else ""
    )
    Label.objects.filter(pk=label.pk).update(created_at=at, source=source)
    return label


def test_progress_counts_today_and_this_week_and_leaves_imports_out(role_users, django_user_model):
    ann = role_users["labeller"]
    bob = django_user_model.objects.create_user(username="bob")
    gs = factories.gold_set()
    q1, q2, q3, q4 = (factories.query(gold_set=gs) for _ in range(4))
    labelled(q1, ann, "wrong", NOW - datetime.timedelta(hours=1))  # today
    labelled(q2, ann, "correct", timezone.make_aware(datetime.datetime(2026, 11, 30, 9)))  # Monday
    labelled(q3, ann, "correct", timezone.make_aware(datetime.datetime(2026, 11, 27, 9)))  # last week
    labelled(q4, ann, "correct", NOW, source=LabelSource.IMPORT)  # imported: nobody's work
    labelled(q1, bob, "wrong", NOW - datetime.timedelta(hours=2))
    labelled(q2, bob, "wrong", NOW - datetime.timedelta(days=1))
    rows = {row["username"]: row for row in labeller_progress_list(now=NOW)}
    assert (rows["labeller-user"]["done_today"], rows["labeller-user"]["done_week"]) == (1, 2)
    assert rows["labeller-user"]["current"] == 4
    assert (rows["bob"]["done_today"], rows["bob"]["done_week"]) == (1, 2)
    assert rows["labeller-user"]["agreement"]["n"] == 2
    assert rows["labeller-user"]["agreement"]["share"] == 0.5
    # Only labellers and people who labelled are listed.
    assert "analyst-user" not in rows


def test_only_admins_open_the_progress_page_and_the_index_links_it(client_for, role_users):
    url = reverse("labelling:progress")
    for role in ("labeller", "analyst", "ml_engineer"):
        assert client_for(role).get(url).status_code == 403
    admin = client_for("admin")
    page = admin.get(url)
    assert page.status_code == 200
    assert 'data-labeller="labeller-user"' in page.content.decode()
    assert url in admin.get(reverse("labelling:index")).content.decode()
    assert url not in client_for("labeller").get(reverse("labelling:index")).content.decode()
