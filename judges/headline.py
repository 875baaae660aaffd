"""The dashboard's headline: which judge or ensemble the data supports for the chosen ceiling.

Pure: it reads the points of `judges/report.py` `ensembles_up_to`, whose `pareto` flags are the
one definition of the frontier (`judges/ensembles.py` `pareto_frontier`, under the ceiling).
The answer is the cheapest point on that frontier. It is compared with the frontier point that
catches most: when their catch intervals overlap, the data cannot yet tell them apart, and the
note says about how many more wrong items would have to be labelled for 95% Wilson intervals of
these two catch rates to separate, were the rates to stay as they are.
"""

from judges.metrics import wilson_interval


def _overlap(a, b) -> bool:
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def wrong_items_to_separate(p1: float, p2: float, wrong_now: int, limit: int = 1_000_000) -> int | None:
    """More wrong items needed before 95% Wilson intervals of these two catch rates stop overlapping.

    The rates are taken as they are now; None when they are equal (no number of items separates them).
    The smallest such total is found by doubling, then halving back (the intervals narrow as n grows).
    """
    if p1 == p2:
        return None

    def apart(n: int) -> bool:
        return not _overlap(wilson_interval(p1, n), wilson_interval(p2, n))

    low, high = max(1, int(wrong_now)), max(2, int(wrong_now) * 2)
    while not apart(high):
        if high >= limit:
            return None
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if apart(middle) else (middle, high)
    return max(1, high - int(wrong_now))


def point_title(point: dict) -> str:
    """A judge by its name; an ensemble by its members and rule."""
    members = point.get("members") or []
    return members[0] if point.get("rule") == "single" and members else point.get("description", "")


def _with_simulated(point: dict, simulated) -> dict:
    """The point, with the members whose figures came from the vendor simulator (`simulated_members`)."""
    return {**point, "simulated_members": [m for m in point.get("members") or [] if m in simulated]}


def dashboard_headline(points: list[dict], ceiling: float, *, simulated=frozenset()) -> dict:
    """{"answer": the cheapest frontier point or None, "rival": the best-catching one, "note": str}.

    `simulated` names the judges whose verdicts came from the vendor simulator (wholly or in part):
    each point says which of its members they are, so the headline never passes simulated
    figures off as a vendor model's.
    """
    frontier = sorted(
        (p for p in points if p.get("pareto")), key=lambda p: (p["cost_per_accepted_usd"], -p["catch_rate"])
    )
    if not frontier:
        return {
            "answer": None,
            "rival": None,
            "note": f"No judge or ensemble with a known cost keeps false rejects under {ceiling:.0%}: "
            "raise the ceiling, or measure judges that reject fewer correct items.",
        }
    rival = max(frontier, key=lambda p: p["catch_rate"])
    answer = {**_with_simulated(frontier[0], simulated), "title": point_title(frontier[0])}
    if rival is frontier[0]:
        return {"answer": answer, "rival": None, "note": ""}
    note = ""
    if _overlap(answer.get("catch_rate_ci95"), rival.get("catch_rate_ci95")):
        more = wrong_items_to_separate(answer["catch_rate"], rival["catch_rate"], answer.get("judged_wrong") or 0)
        note = f"Not separable yet from {point_title(rival)}: their catch intervals overlap" + (
            f"; label ~{more} more wrong items to tell them apart." if more else "."
        )
    rival = _with_simulated(rival, simulated)
    return {"answer": answer, "rival": rival, "note": note, "rival_title": point_title(rival)}
