"""An item's majority outcome per judge and the confusion matrix against gold: pure numpy.

The dashboard's confusion tables (`judges.dashboard_trends`) count these; the tie rule is
`judges.metrics.majority_rejects`.
"""

from __future__ import annotations

import numpy as np

from judges.metrics import VerdictCounts, majority_rejects

# An item's outcome for one judge, as the confusion matrix counts it.
OUTCOME_REJECT, OUTCOME_ACCEPT, OUTCOME_ERROR, OUTCOME_NONE = 0, 1, 2, -1
OUTCOMES = ("reject", "accept", "error")


def majority_outcomes(counts: VerdictCounts, column: int) -> np.ndarray:
    """Return each item's majority decision for one judge column: reject, accept, error or none.

    Reject and accept follow the tie rule (`majority_rejects`) over the answered verdicts;
    an item whose every verdict is an error is "error" (the checker failed, it did not
    decide); an item without any verdict is OUTCOME_NONE and is counted nowhere.
    """
    rejects = counts.rejects[:, column]
    answered = rejects + counts.accepts[:, column]
    outcomes = np.full(len(rejects), OUTCOME_NONE, dtype=np.int8)
    outcomes[(answered == 0) & (counts.errors[:, column] > 0)] = OUTCOME_ERROR
    outcomes[answered > 0] = OUTCOME_ACCEPT
    outcomes[(answered > 0) & majority_rejects(rejects, answered)] = OUTCOME_REJECT
    return outcomes


def confusion_matrix(outcomes: np.ndarray, is_wrong: np.ndarray) -> np.ndarray:
    """Return the 2×3 table of items: rows gold wrong, correct; columns reject, accept, error."""
    outcomes = np.asarray(outcomes)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    return np.array(
        [[int(((outcomes == code) & gold).sum()) for code in range(len(OUTCOMES))] for gold in (is_wrong, ~is_wrong)]
    )
