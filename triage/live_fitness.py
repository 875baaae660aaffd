"""A live judge's fitness: its calibrated level, one level lower while the drift monitor finds drift.

Pure functions. The calibrated level is the judges report's `fitness` (`judges.fitness`); when a
catch or false-reject drift alert is found on the audit sample, the live level drops one step
(gate → monitor → explore; explore stays explore), with the reason naming the drift.
"""

from __future__ import annotations

from judges.fitness import LEVELS


def level_below(level: str) -> str:
    """Return the level one step down (explore is the floor)."""
    return LEVELS[max(0, LEVELS.index(level) - 1)]


def live_fitness(calibrated: dict | None, drifted: list[str]) -> dict | None:
    """Return {"level", "reason"} of a live judge from its calibrated fitness and the drifts found.

    `drifted` names the rates found drifting ("catch rate", "false-reject rate"). None when the
    judge has no calibrated fitness (nothing to start from).
    """
    if not calibrated:
        return None
    level = calibrated["level"]
    if not drifted:
        return {"level": level, "reason": f"as calibrated ({level}): no drift found on the audit sample"}
    lower = level_below(level)
    rates = " and ".join(drifted)
    return {
        "level": lower,
        "reason": f"calibrated {level}, now {lower}: live {rates} drifted from calibration on the audit sample",
    }
