"""Small verdict tables computed by hand, shared by the metric and ensemble tests."""

import numpy as np

from judges.metrics import ACCEPT as A
from judges.metrics import ERROR as E
from judges.metrics import MISSING as M
from judges.metrics import REJECT as R

# 4 items (0, 1 wrong; 2, 3 correct) × 2 judges × 3 repeats, with errors and a missing draw.
DECISIONS = np.array(
    [
        [[R, R, A], [E, E, E]],  # item 0, wrong: judge 0 rejects 2/3; judge 1 only errors (unjudged)
        [[A, A, A], [R, E, M]],  # item 1, wrong: judge 0 never; judge 1 one reject, one error
        [[R, E, A], [A, A, A]],  # item 2, correct: judge 0 1/2; judge 1 0
        [[A, A, A], [R, A, R]],  # item 3, correct: judge 0 0; judge 1 2/3
    ]
)
IS_WRONG = np.array([True, True, False, False])
ERROR_CLASS = np.array(["join_fanout", "missing_filter", "", ""])
