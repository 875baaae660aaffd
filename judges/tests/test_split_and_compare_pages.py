"""The dashboard's Split control, fitness badges and planner; the Compare versions page; the version's split."""

import pytest
from django.urls import reverse

from judges.tests.calibration_builders import add_verdicts, make_judge_version, make_published_gold_set, make_run
from labelling.splits import goldset_split

pytestmark = pytest.mark.django_db

LABELS = [("wrong", "join_fanout")] * 12 + [("correct", "")] * 12


@pytest.fixture
def version():
    version = make_published_gold_set("pages", LABELS)
    run = make_run(version)
    add_verdicts(run, make_judge_version("first"), ["reject"] * 6 + ["accept"] * 18)
    add_verdicts(run, make_judge_version("second"), ["reject"] * 12 + ["accept"] * 12)
    return version


def test_the_split_control_reads_one_part_and_refuses_a_version_without_a_split(client_for, version):
    client = client_for("ml_engineer")
    url = reverse("judges:dashboard", args=[version.pk])
    refused = client.get(url, {"split": "test"})
    assert refused.status_code == 400 and "no dev/test split" in refused.content.decode()
    goldset_split(version=version, test_share=0.5, seed=1)
    page = client.get(url, {"split": "test"})
    assert page.status_code == 200
    assert page.context["report"]["split"] == "test" and page.context["report"]["items"]["total"] == 12
    assert 'name="split"' in page.content.decode()


def test_the_dashboard_shows_fitness_badges_and_the_planner(client_for, version):
    page = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk]))
    html = page.content.decode()
    levels = [judge["fitness"]["level"] for judge in page.context["report"]["judges"]]
    for level in levels:
        assert f'data-fitness="{level}"' in html
    assert 'data-figure="plan_width"' in html and 'id="compare-versions"' in html


def test_the_compare_page_shows_the_comparison_and_its_sentence(client_for, version):
    page = client_for("ml_engineer").get(
        reverse("judges:compare", args=[version.pk]), {"a": "first:1", "b": "second:1", "seed": "3"}
    )
    assert page.status_code == 200
    result = page.context["result"]
    assert result["catch_rate_diff"]["estimate"] == pytest.approx(0.5)
    assert result["bootstrap"]["seed"] == 3
    assert result["summary"] in page.content.decode()


def test_the_compare_page_refuses_an_unknown_judge_and_outsiders(client_for, version):
    url = reverse("judges:compare", args=[version.pk])
    assert client_for("ml_engineer").get(url, {"a": "first:1", "b": "nobody"}).status_code == 400
    assert client_for("labeller").get(url).status_code == 403
    assert client_for("analyst").get(url).status_code == 403


def test_the_version_page_shows_the_split_counts_per_class(client_for, version):
    url = reverse("labelling:version_browse", args=[version.gold_set.name, version.number])
    assert "Not split." in client_for("ml_engineer").get(url).content.decode()
    goldset_split(version=version, test_share=0.5, seed=1)
    html = client_for("ml_engineer").get(url).content.decode()
    assert 'id="split-counts"' in html and "wrong: join_fanout" in html
