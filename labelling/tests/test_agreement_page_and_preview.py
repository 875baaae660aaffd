"""The agreement page's caveats and adjudication form, and the comparison rows (#21 defects 7, 9)."""

import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from labelling.services import label_create
from labelling.tests.factories import gold_set, query

pytestmark = pytest.mark.django_db


@pytest.fixture
def disagreement(role_users):
    """One item: an import and the labeller say wrong (different classes), the ML engineer says correct."""
    gs = gold_set(name="agree")
    item = query(gold_set=gs, sql="SELECT region, COUNT(*) FROM customers GROUP BY region")
    label_create(query=item, labeller=None, decision="wrong", error_class="join_fanout", source="import")
    label_create(query=item, labeller=role_users["labeller"], decision="wrong", error_class="join_fanout")
    label_create(query=item, labeller=role_users["ml_engineer"], decision="correct")
    return gs, item


def page(client_for, gs):
    return client_for("ml_engineer").get(reverse("labelling:agreement", args=[gs.name])).content.decode()


def test_the_import_is_not_counted_as_a_labeller(client_for, disagreement):
    gs, _ = disagreement
    count = re.search(r'<div class="muted" id="rater-count">(.*?)</div>', page(client_for, gs)).group(1)
    assert "from 2 labellers and the imported labels" in count


def test_the_adjudication_form_starts_from_what_most_labels_say(client_for, disagreement):
    gs, _ = disagreement
    form = re.search(r'<form method="post" class="adjudication".*?</form>', page(client_for, gs), re.S).group(0)
    assert '<option value="wrong" selected>' in form
    assert '<option value="join_fanout" selected>' in form


def test_the_disagreement_row_shows_the_sql(client_for, disagreement):
    gs, _ = disagreement
    sql = re.search(r'<pre class="sql hl">(.*?)</pre>', page(client_for, gs), re.S).group(1)
    assert '<span class="k">SELECT</span>' in sql and "customers" in sql


def test_a_per_class_figure_on_one_rating_is_not_shown_as_a_number(client_for, role_users):
    gs = gold_set(name="thin")
    item = query(gold_set=gs)
    label_create(query=item, labeller=role_users["labeller"], decision="wrong", error_class="dialect")
    label_create(query=item, labeller=role_users["ml_engineer"], decision="correct")
    html = page(client_for, gs)
    row = re.search(r"<tr><td>dialect</td>(.*?)</tr>", html, re.S).group(1)
    assert "one rating: nothing to agree on" in row
    assert "0.000" not in row


def test_comparison_rows_show_as_cells_not_python_tuples():
    preview = {
        "available": True,
        "result": {"ok": True, "columns": ["region", "n"], "rows": [("north", 47.0)]},
        "reference": {"ok": True},
        "comparison": {"match": False, "summary": "Results differ", "only_in_a": [("unknown", 47.0)], "only_in_b": []},
    }
    html = render_to_string("labelling/preview.html", {"preview": preview})
    assert "(&#x27;unknown&#x27;, 47.0)" not in html and "('unknown', 47.0)" not in html
    assert "<td>unknown</td><td>47</td>" in html
