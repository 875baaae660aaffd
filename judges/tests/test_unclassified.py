"""A reject or a wrong label without an error class is `unclassified`, for judges and labels alike.

Before, a judge's reject without a class was stored as `other` (a class of its own in the
taxonomy) while a label without one was `unclassified`; a wrong gold item with a blank class
was neither counted in `unclassified_wrong` nor named; and a simulated judge answering on
an `unclassified` gold item sent a class the answer schema refuses, so its reject became an
error.
"""

import pytest

from judges import metrics
from judges.backends.base import parse_verdict
from judges.calibration_data import load_calibration
from judges.report import build_report
from judges.simulator_truth import gold_label_oracle
from judges.tests.calibration_builders import add_verdicts, make_gold_set, make_judge_version, make_run
from labelling.models import UNCLASSIFIED
from probes.fingerprint import sql_fingerprint
from simulator.vendor import SimModel, Simulator, parse_marker


def test_the_product_has_one_word_for_no_class():
    assert metrics.UNCLASSIFIED == UNCLASSIFIED == "unclassified"


def test_a_judges_reject_without_a_class_is_unclassified_and_other_stays_a_class():
    assert parse_verdict({"decision": "reject", "reason": "wrong"})["error_class"] == UNCLASSIFIED
    assert parse_verdict({"decision": "reject", "error_class": ""})["error_class"] == UNCLASSIFIED
    assert parse_verdict({"decision": "reject", "error_class": "other"})["error_class"] == "other"
    assert parse_verdict({"decision": "accept"})["error_class"] == ""


@pytest.mark.django_db
def test_wrong_items_with_a_blank_or_unclassified_label_are_both_unclassified():
    # A wrong item with a blank class can no longer be stored (the label rule is each table's
    # constraint, labelling_versionitem_error_class_iff_wrong): the loader's word for it is the same.
    version = make_gold_set(
        "classes", [("wrong", "join_fanout"), ("wrong", UNCLASSIFIED), ("wrong", UNCLASSIFIED), ("correct", "")]
    )
    add_verdicts(make_run(version), make_judge_version("judge"), ["reject", "reject", "accept", "accept"])
    data = load_calibration(gold_set_version=version)
    assert data.error_class.tolist() == ["join_fanout", UNCLASSIFIED, UNCLASSIFIED, ""]
    report = build_report(gold_set_version=version)
    assert report["unclassified_wrong"] == 2
    assert report["judges"][0]["catch_rate_by_error_class"] == {"join_fanout": 1.0}


def simulated_reject(truth) -> dict:
    model = SimModel(catch_probability=1.0, class_accuracy=1.0, flip_probability=0.0)
    return Simulator().decide("m", model, "SELECT 1", truth)


def test_a_simulated_judge_names_no_class_it_does_not_know_and_its_reject_parses():
    truth = parse_marker("SELECT 1 -- sim: wrong")
    assert truth.error_class == ""
    answer = simulated_reject(truth)
    assert answer["decision"] == "reject" and answer["error_class"] == ""
    assert parse_verdict(answer)["error_class"] == UNCLASSIFIED


@pytest.mark.django_db
def test_the_simulators_oracle_reads_an_unclassified_gold_label_as_no_class():
    version = make_gold_set("oracle", [("wrong", UNCLASSIFIED)])
    query = version.items.get().query
    query.fingerprint = sql_fingerprint(query.sql, "sqlite")
    query.save(update_fields=["fingerprint"])
    truth = Simulator(oracle=gold_label_oracle()).truth_for(query.sql)
    assert truth.wrong and truth.error_class == ""
    # Before, the simulated judge answered "unclassified", a class its schema refuses: an error.
    assert parse_verdict(simulated_reject(truth))["error_class"] == UNCLASSIFIED
