"""Geometry of the dashboard's trend charts: a rate per judge per run, on a time axis.

A sibling of `judges.charts` (same scale, margins and labels): figures in, SVG coordinates
out. The figures come from `judges.dashboard_trends.judge_trends_get`.
"""

from __future__ import annotations

from judges.charts import CHART_HEIGHT, CHART_WIDTH, LABEL_GAP, MARGIN, scale

# Run labels under the axis closer than this (px) to the previous one are left out; the
# points keep their own titles and the table below the chart names every run.
MIN_TICK_GAP = 56
TREND_METRICS = {"catch_rate": "Catch rate", "false_reject_rate": "False-reject rate"}


def trend_chart(series: list[dict], *, metric: str) -> dict:
    """Place each judge's `metric` per run: x is the run's time, y the rate (0–100%).

    `series` is `judge_trends_get`'s list; points without a value (the judge judged no item
    of the stratum in that run) are left out. A series with two or more points gets a line
    through them in time order; a series with one point is only that point.
    """
    left, right, top, bottom = MARGIN + 20, CHART_WIDTH - 40, 24, CHART_HEIGHT - MARGIN - 14
    times = sorted({point["at"] for entry in series for point in entry["points"]})
    low = times[0].timestamp() if times else 0.0
    high = times[-1].timestamp() if times else 0.0
    lines = []
    for entry in series:
        placed = []
        for point in sorted(entry["points"], key=lambda p: (p["at"], p["run"])):
            value = point[metric]
            if value is None:
                continue
            placed.append(
                {
                    **point,
                    "value": value,
                    "cx": scale(point["at"].timestamp(), low, high, left, right),
                    "cy": scale(value, 0, 1, bottom, top),
                    "title": f"{point['judge']} · {point['run_label']} (run {point['run']}, "
                    f"{point['at']:%Y-%m-%d %H:%M}): {TREND_METRICS[metric].lower()} {value:.0%}",
                }
            )
        lines.append(
            {
                "name": entry["name"],
                "colour": entry["colour"],
                "points": placed,
                "polyline": " ".join(f"{p['cx']},{p['cy']}" for p in placed) if len(placed) > 1 else "",
            }
        )
    return {
        "metric": metric,
        "title": TREND_METRICS[metric],
        "lines": lines,
        "ticks_x": run_ticks(series, low=low, high=high, left=left, right=right),
        "ticks_y": [{"y": scale(v, 0, 1, bottom, top), "text": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)],
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "tick_label_x": left - LABEL_GAP,
        "run_label_y": bottom + 16,
        "date_label_y": bottom + 30,
    }


def run_ticks(series: list[dict], *, low: float, high: float, left: float, right: float) -> list[dict]:
    """Return one tick per run at its time, labelled "run N" and its date, skipping crowded labels."""
    runs = {}
    for entry in series:
        for point in entry["points"]:
            runs.setdefault(point["run"], point["at"])
    ticks, last_labelled = [], None
    for run, at in sorted(runs.items(), key=lambda item: (item[1], item[0])):
        x = scale(at.timestamp(), low, high, left, right)
        labelled = last_labelled is None or x - last_labelled >= MIN_TICK_GAP
        if labelled:
            last_labelled = x
        ticks.append(
            {"x": x, "run": run, "text": f"run {run}" if labelled else "", "date": f"{at:%Y-%m-%d}" if labelled else ""}
        )
    return ticks
