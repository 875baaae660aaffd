"""Judge and run pages: who may open them, and what they do."""

import pytest
from django.urls import reverse

from judges.models import CalibrationRun, Judge, JudgeVersion
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version

pytestmark = pytest.mark.django_db
ALL_USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]
ALLOWED = {"ml_engineer", "admin"}


@pytest.fixture
def objects():
    version = simulated_version(name="page-judge")
    gold = gold_set_version_with(mixed_items(1, 0))
    run = CalibrationRun.objects.create(gold_set_version=gold, repeats=1)
    run.judge_versions.set([version])
    return {"judge": version.judge, "run": run}


def page_urls(objects):
    judge, run = objects["judge"], objects["run"]
    return [
        reverse("judges:index"),
        reverse("judges:judge_create"),
        reverse("judges:judge_detail", args=[judge.pk]),
        reverse("judges:judge_edit", args=[judge.pk]),
        reverse("judges:judge_compare", args=[judge.pk]),
        reverse("judges:run_start"),
        reverse("judges:run_detail", args=[run.pk]),
    ]


def post_urls(objects):
    judge, run = objects["judge"], objects["run"]
    return [
        reverse("judges:judge_clone", args=[judge.pk]),
        reverse("judges:run_cancel", args=[run.pk]),
        reverse("judges:run_resume", args=[run.pk]),
    ]


def test_anonymous_visitors_are_sent_to_login(client, objects):
    for url in page_urls(objects) + post_urls(objects):
        response = client.post(url) if url in post_urls(objects) else client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


@pytest.mark.parametrize("who", ALL_USERS)
def test_judge_pages_admit_only_ml_engineers_and_admins(client_for, objects, who):
    client = client_for(who)
    for url in page_urls(objects):
        assert client.get(url).status_code == (200 if who in ALLOWED else 403), url


@pytest.mark.parametrize("who", ALL_USERS)
def test_mutating_judge_pages_refuse_other_roles(client_for, objects, who):
    client = client_for(who)
    for url in post_urls(objects):
        assert client.post(url, {"name": "cloned"}).status_code == (302 if who in ALLOWED else 403), url


def test_mutating_judge_pages_reject_get(client_for, objects):
    client = client_for("ml_engineer")
    for url in post_urls(objects):
        assert client.get(url).status_code == 405, url


def test_creating_a_judge_makes_its_first_version(client_for, vendor_simulator):
    response = client_for("ml_engineer").post(
        reverse("judges:judge_create"),
        {
            "name": "new-judge",
            "backend": "anthropic",
            "family": "anthropic",
            "model": "claude-x",
            "temperature": "0",
            "max_tokens": "512",
            "price_input_per_mtok": "3",
            "price_output_per_mtok": "15",
            "price_cache_read_per_mtok": "0.3",
            "price_cache_write_per_mtok": "3.75",
            "config": "{}",
        },
    )
    judge = Judge.objects.get(name="new-judge")
    assert response.status_code == 302
    version = judge.latest_version
    assert version.number == 1
    # No key in the environment of the tests, and not created as simulated: it is not
    # switched to the simulator (its calls fail, naming the variable).
    assert not version.is_simulated
    assert version.schema_token_budget == 4000


def test_editing_a_judge_freezes_a_new_version_and_leaves_the_old_one(client_for, vendor_simulator):
    version = simulated_version(name="edited")
    data = {
        "backend": "anthropic",
        "family": "anthropic",
        "model": "sim-claude-judge",
        "prompt_template": "Be strict.",
        "temperature": "0",
        "max_tokens": "256",
        "price_input_per_mtok": "3",
        "price_output_per_mtok": "15",
        "price_cache_read_per_mtok": "0.3",
        "price_cache_write_per_mtok": "3.75",
        "config": '{"simulated": true}',
    }
    client = client_for("ml_engineer")
    review = client.post(reverse("judges:judge_edit", args=[version.judge.pk]), data)
    # The first post shows the diff against the current version and saves nothing.
    assert review.status_code == 200 and JudgeVersion.objects.filter(judge=version.judge).count() == 1
    assert "+Be strict." in review.content.decode()
    client.post(reverse("judges:judge_edit", args=[version.judge.pk]), {**data, "confirm": "save"})
    versions = list(JudgeVersion.objects.filter(judge=version.judge).order_by("number"))
    assert [v.number for v in versions] == [1, 2]
    assert versions[0].prompt_template == "" and versions[1].prompt_template == "Be strict."


def test_a_config_holding_an_api_key_is_refused_and_nothing_is_saved(client_for):
    version = simulated_version(name="keyed")
    response = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[version.judge.pk]),
        {
            "backend": "anthropic",
            "model": "m",
            "temperature": "0",
            "max_tokens": "256",
            "price_input_per_mtok": "0",
            "price_output_per_mtok": "0",
            "price_cache_read_per_mtok": "0",
            "price_cache_write_per_mtok": "0",
            "config": '{"api_key": "sk-ant-secret"}',
        },
    )
    assert response.status_code == 200
    assert "api_key_env" in response.content.decode()
    assert version.judge.versions.count() == 1


def test_cloning_a_judge_copies_its_latest_version(client_for):
    version = simulated_version(name="original")
    client_for("ml_engineer").post(reverse("judges:judge_clone", args=[version.judge.pk]), {"name": "copy"})
    clone = Judge.objects.get(name="copy").latest_version
    assert (clone.number, clone.model, clone.config, clone.is_simulated) == (1, version.model, version.config, True)


def test_the_run_page_polls_a_progress_partial_while_the_run_is_active(client_for, objects):
    client = client_for("ml_engineer")
    url = reverse("judges:run_detail", args=[objects["run"].pk])
    full = client.get(url).content.decode()
    partial = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 2s"' in full and "<h1>" in full
    assert 'id="run-progress"' in partial and "<h1>" not in partial
    # No verdict yet: no badge, whatever the versions were registered as (badges read verdicts).
    assert 'class="badge sim"' not in full


def test_the_progress_poll_of_a_finished_run_reloads_the_page_once(client_for, objects):
    client = client_for("ml_engineer")
    run = objects["run"]
    url = reverse("judges:run_detail", args=[run.pk])
    assert "HX-Refresh" not in client.get(url, headers={"HX-Request": "true"})
    run.status = "completed"
    run.save(update_fields=["status"])
    finished = client.get(url, headers={"HX-Request": "true"})
    assert finished["HX-Refresh"] == "true"
    assert 'hx-trigger="every 2s"' not in client.get(url).content.decode()


def test_starting_a_run_from_the_page_queues_it(client_for, vendor_simulator, django_capture_on_commit_callbacks):
    version = simulated_version(name="to-run")
    gold = gold_set_version_with(mixed_items(2, 1))
    with django_capture_on_commit_callbacks() as callbacks:
        response = client_for("ml_engineer").post(
            reverse("judges:run_start"), {"gold_set_version": gold.pk, "judge_versions": [version.pk], "repeats": 2}
        )
    assert response.status_code == 302
    assert len(callbacks) == 1  # the plan task, sent once the run is committed
    assert version.calibration_runs.get().repeats == 2


def test_api_keys_never_appear_on_judge_pages(client_for, settings):
    settings.ANTHROPIC_API_KEY = "sk-ant-very-secret"
    version = simulated_version(name="secretive")
    client = client_for("ml_engineer")
    for url in [
        reverse("judges:judge_detail", args=[version.judge.pk]),
        reverse("judges:judge_edit", args=[version.judge.pk]),
    ]:
        assert "sk-ant-very-secret" not in client.get(url).content.decode()
