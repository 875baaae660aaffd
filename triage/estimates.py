"""The live error rate and judge drift: pure functions over counts and arrays.

Nothing here touches the database; `triage.monitoring` loads the numbers and calls these.
Calibrated rates and their Wilson intervals come from the judges report (`judges.metrics`);
so do the live rates the drift monitor compares them with (`judges.metrics.rates` with
weights). Percentiles of bootstrap draws are `judges.metrics.percentile`.

Two estimates of the share of live queries that are wrong:

* **Corrected** (Rogan–Gladen): a judge flags a wrong query with probability `catch`
  and a correct one with probability `false_reject`, so its flag rate is
  `f = p·catch + (1 − p)·false_reject`; solving for `p` gives
  `p = (f − false_reject) / (catch − false_reject)`. The interval is a parametric
  bootstrap over the flag rate and both calibration rates.
* **Audit**: flagged queries are labelled by triage, a random share of unflagged ones by
  the audit sample; each stratum's error rate is weighted by its size.

Drift: live catch and false-reject rates are re-measured on labels since calibration.
Triage labels exist only for flagged queries and audit labels for a sample of unflagged
ones, so each label is weighted by the inverse of the probability that a query of its
stratum got labelled (Horvitz–Thompson); unweighted, the triage labels would make every
judge look far better at catching than it is. The live rate is the calibration rate's own
definition (`judges.metrics.rates`: a mean of reject probabilities, here weighted) with
the same interval (Wilson, on the effective number of labels), so `detect_drift`
compares like with like: with every weight 1 the live figures are the report's.
"""

from dataclasses import dataclass

import numpy as np

from judges import metrics
from judges.metrics import percentile


@dataclass(frozen=True)
class Interval:
    estimate: float | None
    low: float | None
    high: float | None

    def contains(self, value: float) -> bool:
        return self.low is not None and self.low <= value <= self.high

    def overlaps(self, other: "Interval") -> bool:
        if None in (self.low, self.high, other.low, other.high):
            return True
        return self.low <= other.high and other.low <= self.high


def rogan_gladen(flag_rate: float, catch_rate: float, false_reject_rate: float) -> float | None:
    """Return the prevalence implied by a flag rate and a judge's two rates, clipped to [0, 1]."""
    spread = catch_rate - false_reject_rate
    if spread <= 0:
        return None  # a judge no better than chance carries no information about prevalence
    return float(np.clip((flag_rate - false_reject_rate) / spread, 0.0, 1.0))


def rogan_gladen_interval(
    *,
    flagged: int,
    judged: int,
    catch_rate: float | None,
    wrong: int,
    false_reject_rate: float | None,
    correct: int,
    draws: int = 2000,
    seed: int = 0,
) -> Interval:
    """Return the corrected prevalence with a 95% bootstrap interval.

    `flagged` of `judged` live queries were flagged; on calibration the judge's catch rate
    was `catch_rate` on `wrong` judged wrong items and its false-reject rate
    `false_reject_rate` on `correct` judged correct ones (the report's figures: means of
    reject probabilities, so not necessarily whole counts). Each draw resamples all three
    proportions, so the interval carries the calibration's uncertainty as well as the
    live sample's.
    """
    if judged == 0 or wrong == 0 or correct == 0 or catch_rate is None or false_reject_rate is None:
        return Interval(None, None, None)
    point = rogan_gladen(flagged / judged, catch_rate, false_reject_rate)
    rng = np.random.default_rng(seed)
    f = rng.binomial(judged, flagged / judged, draws) / judged
    c = rng.binomial(wrong, catch_rate, draws) / wrong
    r = rng.binomial(correct, false_reject_rate, draws) / correct
    spread = c - r
    usable = spread > 0
    if not usable.any():
        return Interval(point, None, None)
    samples = np.clip((f[usable] - r[usable]) / spread[usable], 0.0, 1.0)
    low, high = percentile(samples, [2.5, 97.5])
    return Interval(point, low, high)


def stratified_error_rate(
    *,
    flagged_total: int,
    unflagged_total: int,
    flagged_wrong: np.ndarray,
    audit_wrong: np.ndarray,
    draws: int = 2000,
    seed: int = 0,
) -> Interval:
    """Estimate the live error rate from triage labels (flagged) and audit labels (unflagged).

    `flagged_wrong` / `audit_wrong` are boolean arrays, one entry per labelled query of
    that stratum. A stratum with queries but no labels leaves the estimate undefined.
    """
    flagged_wrong = np.asarray(flagged_wrong, dtype=bool)
    audit_wrong = np.asarray(audit_wrong, dtype=bool)
    return stratified_error_rate_of_counts(
        flagged_total=flagged_total,
        unflagged_total=unflagged_total,
        flagged_labelled=flagged_wrong.size,
        flagged_wrong=int(flagged_wrong.sum()),
        audit_labelled=audit_wrong.size,
        audit_wrong=int(audit_wrong.sum()),
        draws=draws,
        seed=seed,
    )


def stratified_error_rate_of_counts(
    *,
    flagged_total: int,
    unflagged_total: int,
    flagged_labelled: int,
    flagged_wrong: int,
    audit_labelled: int,
    audit_wrong: int,
    draws: int = 2000,
    seed: int = 0,
) -> Interval:
    """`stratified_error_rate` on counts: labelled and wrong queries per stratum (the monitor's grouped rows)."""
    total = flagged_total + unflagged_total
    if total == 0:
        return Interval(None, None, None)
    if (flagged_total and not flagged_labelled) or (unflagged_total and not audit_labelled):
        return Interval(None, None, None)
    share_flagged = flagged_total / total

    def combine(f_rate, u_rate):
        return share_flagged * f_rate + (1 - share_flagged) * u_rate

    f_point = flagged_wrong / flagged_labelled if flagged_labelled else 0.0
    u_point = audit_wrong / audit_labelled if audit_labelled else 0.0
    rng = np.random.default_rng(seed)
    f_draws = rng.binomial(flagged_labelled, f_point, draws) / max(flagged_labelled, 1)
    u_draws = rng.binomial(audit_labelled, u_point, draws) / max(audit_labelled, 1)
    low, high = percentile(combine(f_draws, u_draws), [2.5, 97.5])
    return Interval(float(combine(f_point, u_point)), low, high)


@dataclass(frozen=True)
class LiveRates:
    """A live judge's rates since calibration, by the calibration's own definition and interval."""

    catch: Interval
    false_reject: Interval
    labelled: int
    effective_wrong: float
    effective_correct: float


def live_rates(*, rejected: np.ndarray, wrong: np.ndarray, weights: np.ndarray, counts=None) -> LiveRates:
    """Measure a judge's live catch and false-reject rates with `judges.metrics.rates`, weighted.

    `rejected[i]`: the judge rejected labelled live query i (one verdict: its reject
    probability is 0 or 1); `wrong[i]`: its label says wrong; `weights[i]`: 1 / P(a query of
    its stratum got a label). Weighted means with Wilson intervals on the effective
    number of labels — with every weight 1, exactly the report's figures. `counts[i]`, when
    given, is how many labelled queries row i stands for (rows grouped by the database).
    """
    rejected = np.asarray(rejected, dtype=bool)
    figures = metrics.rates(rejected.astype(float), np.asarray(wrong, dtype=bool), weights=weights, counts=counts)
    return LiveRates(
        catch=interval_of(figures["catch_rate"], figures["catch_rate_ci95"]),
        false_reject=interval_of(figures["false_reject_rate"], figures["false_reject_rate_ci95"]),
        labelled=int(rejected.size if counts is None else np.asarray(counts).sum()),
        effective_wrong=figures["effective_wrong"],
        effective_correct=figures["effective_correct"],
    )


def interval_of(rate: float | None, ci95) -> Interval:
    """Return a rate and its 95% interval (the report's pair) as an Interval."""
    if rate is None or ci95 is None:
        return Interval(None, None, None)
    return Interval(rate, ci95[0], ci95[1])


@dataclass(frozen=True)
class Drift:
    drifted: bool
    reason: str


def detect_drift(*, calibration: Interval, live: Interval, effective_n: float, min_effective_n: float = 20) -> Drift:
    """Say whether a live rate has left its calibration interval.

    It drifts when the live rate's own 95% interval lies wholly outside the calibration
    interval — not merely its point estimate, which would wander out on noise alone —
    and there are enough (effective) labels to say so.
    """
    if calibration.estimate is None or live.estimate is None:
        return Drift(False, "not enough data")
    if effective_n < min_effective_n:
        return Drift(False, f"only {effective_n:.0f} effective labels (need {min_effective_n:.0f})")
    if live.overlaps(calibration):
        return Drift(False, "within the calibration interval")
    direction = "above" if live.low > calibration.high else "below"
    return Drift(
        True,
        f"live {live.estimate:.3f} [{live.low:.3f}, {live.high:.3f}] is {direction} calibration "
        f"{calibration.estimate:.3f} [{calibration.low:.3f}, {calibration.high:.3f}]",
    )


def inverse_probability_weights(
    *, flagged: np.ndarray, flagged_share_labelled: float, audit_share: float
) -> np.ndarray:
    """Weight each labelled query by 1 / P(a query of its stratum got labelled)."""
    flagged = np.asarray(flagged, dtype=bool)
    weights = np.empty(flagged.size)
    weights[flagged] = 1 / flagged_share_labelled if flagged_share_labelled > 0 else 0.0
    weights[~flagged] = 1 / audit_share if audit_share > 0 else 0.0
    return weights
