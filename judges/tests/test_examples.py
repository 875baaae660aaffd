"""Few-shot examples: dev items only, shown in the prompt, never scored."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from judges.backends.prompt import prompt_build
from judges.examples import judge_version_examples_add
from judges.report import build_report
from judges.tests.calibration_builders import (
    add_verdicts,
    item_queries,
    make_gold_set,
    make_judge_version,
    make_published_gold_set,
    make_run,
)
from labelling.splits import goldset_split

pytestmark = pytest.mark.django_db

LABELS = [("wrong", "join_fanout")] * 8 + [("correct", "")] * 12


@pytest.fixture
def split_version():
    version = make_published_gold_set("fs", LABELS)
    split = goldset_split(version=version, test_share=0.5, seed=2)
    parts = dict(split.items.values_list("query__external_id", "part"))
    return version, parts


def first_of(parts, part, decision):
    return next(f"q{i:03d}" for i, (d, _) in enumerate(LABELS) if d == decision and parts[f"q{i:03d}"] == part)


def judge_entry(report, name):
    return next(judge for judge in report["judges"] if judge["name"] == name)


def test_an_example_leaves_the_figures_of_its_version_on_every_split(split_version):
    version, parts = split_version
    example = first_of(parts, "dev", "wrong")
    plain, tuned = make_judge_version("plain"), make_judge_version("tuned")
    judge_version_examples_add(judge_version=tuned, gold_set_version=version, external_ids=[example])
    run = make_run(version)
    # Both judges reject only the example item: the one catch of the tuned judge is its own example.
    decisions = ["reject" if f"q{i:03d}" == example else "accept" for i in range(len(LABELS))]
    add_verdicts(run, plain, decisions)
    add_verdicts(run, tuned, decisions)
    report = build_report(gold_set_version=version)
    assert judge_entry(report, "plain")["items"] == 20 and judge_entry(report, "plain")["excluded_examples"] == 0
    assert judge_entry(report, "plain")["catch_rate"] == pytest.approx(1 / 8)
    assert judge_entry(report, "tuned")["items"] == 19 and judge_entry(report, "tuned")["excluded_examples"] == 1
    assert judge_entry(report, "tuned")["catch_rate"] == 0.0
    dev = build_report(gold_set_version=version, split="dev")
    assert judge_entry(dev, "tuned")["excluded_examples"] == 1
    assert judge_entry(dev, "tuned")["items"] == judge_entry(dev, "plain")["items"] - 1
    test = build_report(gold_set_version=version, split="test")
    assert judge_entry(test, "tuned")["excluded_examples"] == 0
    assert judge_entry(test, "tuned")["items"] == judge_entry(test, "plain")["items"]
    # Pairs rest on the draws: the example is not an item both judged.
    pair = report["pairs"][0]
    assert pair["both_missed"] == pytest.approx(7)  # of 8 wrong items: the example is not counted


def test_a_test_item_is_refused_with_a_message(split_version):
    version, parts = split_version
    test_item = first_of(parts, "test", "wrong")
    tuned = make_judge_version("tuned")
    with pytest.raises(ValidationError, match=f"{test_item} is in the test split of fs v1: a test item can never"):
        judge_version_examples_add(judge_version=tuned, gold_set_version=version, external_ids=[test_item])
    assert not tuned.examples.exists()


def test_a_version_without_a_split_or_with_verdicts_is_refused():
    version = make_gold_set("raw", LABELS)
    tuned = make_judge_version("tuned")
    with pytest.raises(ValidationError, match="no dev/test split"):
        judge_version_examples_add(judge_version=tuned, gold_set_version=version, external_ids=["q000"])
    run = make_run(version)
    add_verdicts(run, tuned, ["accept"] * len(LABELS))
    with pytest.raises(ValidationError, match="already has verdicts"):
        judge_version_examples_add(judge_version=tuned, gold_set_version=version, external_ids=["q000"])


def test_the_examples_are_rendered_into_the_prompt_with_label_and_class(split_version):
    version, parts = split_version
    wrong, correct = first_of(parts, "dev", "wrong"), first_of(parts, "dev", "correct")
    tuned = make_judge_version("tuned")
    judge_version_examples_add(judge_version=tuned, gold_set_version=version, external_ids=[wrong, correct])
    subject = item_queries(version)[-1]
    prompt = prompt_build(tuned, subject, instructions="Judge the SQL.")
    assert prompt.instructions.startswith("Judge the SQL.\n\n<worked_examples>")
    assert '<example label="wrong" error_class="join_fanout">' in prompt.instructions
    assert '<example label="correct">' in prompt.instructions
    assert f"SELECT {int(wrong[1:])}" in prompt.instructions
    plain = prompt_build(make_judge_version("plain"), subject, instructions="Judge the SQL.")
    assert plain.instructions == "Judge the SQL."


def test_add_examples_adds_dev_items_and_refuses_test_items(split_version):
    version, parts = split_version
    tuned = make_judge_version("tuned")
    call_command("add_examples", "--judge", "tuned:1", "--gold-set", "fs", first_of(parts, "dev", "wrong"))
    assert tuned.examples.count() == 1
    with pytest.raises(CommandError, match="a test item can never be an example"):
        call_command("add_examples", "--judge", "tuned:1", "--gold-set", "fs", first_of(parts, "test", "correct"))
    assert tuned.examples.count() == 1
