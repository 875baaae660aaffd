"""The labeller's item page on deeply nested SQL: a plain message, never a 500 (issue 26, item 7)."""

import pytest
from django.urls import reverse

from labelling.tests import factories

pytestmark = pytest.mark.django_db


def nested_parentheses(depth: int) -> str:
    return "SELECT " + "(" * depth + "1" + ")" * depth + " FROM orders"


def nested_subqueries(depth: int) -> str:
    return "SELECT * FROM " + "(SELECT * FROM " * depth + "orders" + ") AS t" * depth


@pytest.mark.parametrize("depth", [300, 1000, 5000])
@pytest.mark.parametrize("build", [nested_parentheses, nested_subqueries])
def test_the_item_page_and_preview_of_deeply_nested_sql_answer_with_a_plain_message(
    client_for, demo_sqlite_warehouse, build, depth
):
    gold_set = factories.gold_set(name="deep")
    item = factories.query(gold_set=gold_set, sql=build(depth), warehouse=demo_sqlite_warehouse)
    client = client_for("labeller")
    client.raise_request_exception = False
    page = client.get(reverse("labelling:queue_item", args=["deep", item.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    problem = html.split('id="sql-problem"')[1].split("</p>")[0]
    assert "nested too deeply" in problem or "WAREHOUSE_MAX_SQL" in problem  # a bound, named
    assert '<pre class="sql hl">' in html  # the SQL itself is still shown, highlighted
    preview = client.get(reverse("labelling:preview", args=[item.pk]))
    assert preview.status_code == 200
    assert "Refused by the read-only guard" in preview.content.decode()


def test_an_ordinary_item_still_lists_the_columns_it_touches(client_for, demo_sqlite_warehouse):
    gold_set = factories.gold_set(name="flat")
    item = factories.query(gold_set=gold_set, sql="SELECT status FROM orders", warehouse=demo_sqlite_warehouse)
    html = client_for("labeller").get(reverse("labelling:queue_item", args=["flat", item.pk])).content.decode()
    assert 'id="sql-problem"' not in html and "<code>orders</code>" in html
