"""The live error-rate estimates and drift detection, on streams built with known truth."""

import numpy as np
import pytest

from judges.metrics import wilson_interval
from triage import estimates

CATCH, FALSE_REJECT = 0.6, 0.1


def stream(prevalence, n, seed, catch=CATCH, false_reject=FALSE_REJECT):
    """Build n live queries: which are wrong and which the judge flags."""
    rng = np.random.default_rng(seed)
    wrong = rng.random(n) < prevalence
    flagged = np.where(wrong, rng.random(n) < catch, rng.random(n) < false_reject)
    return wrong, flagged


def calibration(seed=99, wrong=400, correct=1600):
    rng = np.random.default_rng(seed)
    return {
        "catch_rate": rng.binomial(wrong, CATCH) / wrong,
        "wrong": wrong,
        "false_reject_rate": rng.binomial(correct, FALSE_REJECT) / correct,
        "correct": correct,
    }


def test_rogan_gladen_inverts_the_flag_rate_formula():
    flag_rate = 0.25 * CATCH + 0.75 * FALSE_REJECT
    assert estimates.rogan_gladen(flag_rate, CATCH, FALSE_REJECT) == pytest.approx(0.25)


def test_rogan_gladen_is_undefined_for_a_judge_no_better_than_chance():
    assert estimates.rogan_gladen(0.3, 0.2, 0.2) is None


@pytest.mark.parametrize("prevalence", [0.05, 0.2, 0.4])
def test_rogan_gladen_on_a_constructed_stream_matches_its_known_prevalence(prevalence):
    wrong, flagged = stream(prevalence, 20_000, seed=1)
    result = estimates.rogan_gladen_interval(flagged=int(flagged.sum()), judged=flagged.size, **calibration())
    assert result.estimate == pytest.approx(prevalence, abs=0.03)
    assert result.contains(prevalence)
    naive = flagged.mean()
    if prevalence != 0.2:  # at 0.2 the flag rate happens to equal the prevalence
        assert abs(naive - prevalence) > abs(result.estimate - prevalence)


def test_the_audit_estimate_weights_each_stratum_by_its_size():
    wrong, flagged = stream(0.2, 20_000, seed=2)
    rng = np.random.default_rng(3)
    audited = ~flagged & (rng.random(flagged.size) < 0.1)
    result = estimates.stratified_error_rate(
        flagged_total=int(flagged.sum()),
        unflagged_total=int((~flagged).sum()),
        flagged_wrong=wrong[flagged],
        audit_wrong=wrong[audited],
    )
    assert result.contains(0.2)
    assert result.estimate == pytest.approx(0.2, abs=0.02)


def test_the_audit_estimate_needs_labels_in_every_stratum():
    result = estimates.stratified_error_rate(
        flagged_total=10, unflagged_total=90, flagged_wrong=np.array([True]), audit_wrong=np.array([])
    )
    assert result.estimate is None


def labelled_sample(wrong, flagged, audit_share, seed):
    """Label every flagged query (triage) and a random share of unflagged ones (audit)."""
    rng = np.random.default_rng(seed)
    labelled = flagged | (rng.random(flagged.size) < audit_share)
    weights = estimates.inverse_probability_weights(
        flagged=flagged[labelled], flagged_share_labelled=1.0, audit_share=audit_share
    )
    return flagged[labelled], wrong[labelled], weights


def test_weighting_recovers_the_true_catch_rate_that_triage_labels_alone_overstate():
    wrong, flagged = stream(0.2, 20_000, seed=4)
    rejected, is_wrong, weights = labelled_sample(wrong, flagged, 0.1, seed=5)
    rates = estimates.live_rates(rejected=rejected, wrong=is_wrong, weights=weights)
    assert rates.catch.estimate == pytest.approx(CATCH, abs=0.05)
    assert rates.false_reject.estimate == pytest.approx(FALSE_REJECT, abs=0.02)
    naive_catch = rejected[is_wrong].mean()
    assert naive_catch > 0.85, "unweighted, the flagged-only triage labels make the judge look far better"


def calibrated_catch():
    c = calibration()
    low, high = wilson_interval(c["catch_rate"], c["wrong"])
    return estimates.Interval(c["catch_rate"], low, high)


def test_the_drift_alert_fires_on_a_constructed_shift():
    wrong, flagged = stream(0.2, 6_000, seed=6, catch=0.3)
    rejected, is_wrong, weights = labelled_sample(wrong, flagged, 0.1, seed=7)
    rates = estimates.live_rates(rejected=rejected, wrong=is_wrong, weights=weights)
    drift = estimates.detect_drift(calibration=calibrated_catch(), live=rates.catch, effective_n=rates.effective_wrong)
    assert drift.drifted
    assert "below calibration" in drift.reason


@pytest.mark.parametrize("seed", range(10))
def test_the_drift_alert_stays_quiet_on_noise(seed):
    wrong, flagged = stream(0.2, 3_000, seed=100 + seed)
    rejected, is_wrong, weights = labelled_sample(wrong, flagged, 0.1, seed=200 + seed)
    rates = estimates.live_rates(rejected=rejected, wrong=is_wrong, weights=weights)
    drift = estimates.detect_drift(calibration=calibrated_catch(), live=rates.catch, effective_n=rates.effective_wrong)
    assert not drift.drifted, drift.reason


def test_drift_needs_enough_labels():
    live = estimates.Interval(0.1, 0.05, 0.15)
    drift = estimates.detect_drift(calibration=calibrated_catch(), live=live, effective_n=5)
    assert not drift.drifted and "effective labels" in drift.reason
