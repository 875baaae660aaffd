"""Chart geometry for the dashboards: figures in, SVG coordinates out (the one chart module's way).

No figure is computed here: every value comes from `judges.report` (with `judges.metrics`
and `judges.ensembles`); these functions only place it. Every coordinate, size and colour the
template draws with comes from here, so `templates/judges/dashboard.html` (and the triage
dashboard's `templates/triage/_estimate_chart.html`, from `estimate_chart`) only write SVG
elements (server-rendered, no JavaScript needed). `judges/trend_chart.py` places the trend
charts the same way.
"""

from __future__ import annotations

import itertools
import math
import textwrap

CHART_WIDTH, CHART_HEIGHT, MARGIN = 640, 300, 48
# The chart colours: wrong/missed in red, everything else in blue.
MISSED_COLOUR, MAIN_COLOUR = "#b42318", "#2450a6"
# Labels sit this far from the axis or grid they name.
LABEL_GAP = 6
# A Pareto point's label (10 px text): characters a line, its line height, the highest first baseline.
POINT_LABEL_CHARS, POINT_LABEL_LINE, POINT_LABEL_TOP = 34, 12, 14
PALETTE = ["#2450a6", "#b42318", "#1f7a4d", "#b54708", "#6941c6", "#0e7090", "#c11574", "#4e5ba6", "#667085"]
UPSET_COLUMNS = 15


def scale(value: float, low: float, high: float, out_low: float, out_high: float) -> float:
    if high <= low:
        return (out_low + out_high) / 2
    return round(out_low + (value - low) / (high - low) * (out_high - out_low), 1)


def heatmap(judges, pairs: list[dict], key: str) -> dict:
    """Return the cells of a judges × judges heatmap of a pair figure (diagonal left blank).

    `judges` are the report's judge columns, `pairs` the report's pairs in combination order.
    """
    n = len(judges)
    values = {}
    for (a, b), pair in zip(itertools.combinations(range(n), 2), pairs, strict=True):
        values[(a, b)] = values[(b, a)] = pair[key]
    top = max([v for v in values.values() if v is not None] or [1.0]) or 1.0
    size, left = 44, 150
    cells = []
    for a in range(n):
        for b in range(n):
            value = values.get((a, b))
            x, y = left + b * size, 10 + a * size
            opacity = 0 if value is None else round(0.12 + 0.88 * value / top, 3)
            cells.append(
                {
                    "x": x,
                    "y": y,
                    "size": size - 2,
                    # The number is centred in the square (the baseline a little below the middle).
                    "text_x": x + (size - 2) // 2,
                    "text_y": y + (size - 2) // 2 + 3,
                    # Dark squares carry white text.
                    "text_light": opacity > 0.55,
                    "value": value,
                    "text": "" if value is None else (f"{value:.2f}" if key == "miss_jaccard" else f"{value:.1f}"),
                    "opacity": opacity,
                    "query": f"judge={judges[a].id}&judge={judges[b].id}" if a != b else "",
                    "title": f"{judges[a].label} × {judges[b].label}",
                    "pair": (judges[a].id, judges[b].id),
                }
            )
    labels = [
        {"x": left - LABEL_GAP, "y": 10 + i * size + size / 2, "text": judge.label} for i, judge in enumerate(judges)
    ]
    columns = [{"x": left + i * size + size / 2, "text": f"{i + 1}"} for i in range(n)]
    return {
        "key": key,
        "title": "Both missed (expected count)" if key == "both_missed" else "Miss-set Jaccard",
        "fill": MISSED_COLOUR if key == "both_missed" else MAIN_COLOUR,
        "cells": cells,
        "labels": labels,
        "columns": columns,
        # Column numbers under the grid match the numbered row labels.
        "column_label_y": 10 + n * size + 14,
        "width": 160 + n * size,
        "height": 30 + n * size,
    }


def upset_chart(judges, patterns: dict[tuple[bool, ...], float]) -> dict:
    """Return an UpSet-style chart of expected miss-pattern sizes (`ensembles.miss_patterns`).

    Bars are the largest UPSET_COLUMNS patterns in which at least one judge misses; the
    chart also carries the expected number missed by at least one judge and caught by all.
    """
    missed = sorted(
        ((pattern, size) for pattern, size in patterns.items() if any(pattern)), key=lambda entry: (-entry[1], entry[0])
    )
    top = missed[:UPSET_COLUMNS]
    n = len(judges)
    column_width, row_height, bar_height, left, bar_width = 34, 22, 140, 150, 22
    peak = max([size for _, size in top] or [1.0]) or 1.0
    columns = []
    for index, (pattern, size) in enumerate(top):
        x = left + index * column_width
        height = round(bar_height * size / peak, 1)
        members = [i for i, flag in enumerate(pattern) if flag]
        columns.append(
            {
                "x": x,
                "bar_width": bar_width,
                # The count, the stem and the dots are centred on the bar.
                "centre_x": x + bar_width // 2,
                "count_y": int(20 + bar_height - height) - 3,
                # 20 px of headroom keeps the count above the tallest bar inside the chart.
                "bar_y": 20 + bar_height - height,
                "bar_height": height,
                "count": size,
                "text": f"{size:.1f}",
                "dots": [{"y": 30 + bar_height + i * row_height, "filled": bool(pattern[i])} for i in range(n)],
                "line": (30 + bar_height + members[0] * row_height, 30 + bar_height + members[-1] * row_height),
                "query": "&".join(f"judge={judges[i].id}" for i in members) + "&exact=1",
                "title": " + ".join(judges[i].label for i in members) + f": {size:.2f} wrong items (expected)",
            }
        )
    labels = [
        {"x": left - 10, "y": 34 + bar_height + i * row_height, "text": judge.label} for i, judge in enumerate(judges)
    ]
    caught_pattern = tuple([False] * n)
    return {
        "columns": columns,
        "labels": labels,
        "dot_radius": 6,
        "fill": MAIN_COLOUR,
        "width": left + max(len(top), 1) * column_width + 10,
        "height": 40 + bar_height + n * row_height,
        "missed_by_any": float(sum(size for _, size in missed)),
        "caught_by_all": float(patterns.get(caught_pattern, 0.0)) if n else 0.0,
        "shown": float(sum(size for _, size in top)),
        "patterns": len(missed),
    }


def ensemble_scatter(points: list[dict]) -> dict:
    """Place ensembles (`report.ensembles_up_to`) on cost per accepted × catch rate, with the frontier.

    The margins leave room for the widest tick text at both ends, the axis title sits above
    the top tick, and each Pareto point carries its name (the others keep a hover title).
    A point whose cost is unknown (a member without a measured cost) has no place on the
    cost axis: it is listed in `left_off` with its note, never drawn at $0.
    """
    left_off = [
        {"name": point_name(p), "cost_note": p.get("cost_note", "")}
        for p in points
        if p["cost_per_accepted_usd"] is None and p.get("cost_note")
    ]
    shown = [dict(p) for p in points if p["cost_per_accepted_usd"] is not None and p["catch_rate"] is not None]
    if not shown:
        return {"points": [], "frontier": "", "ticks_x": [], "ticks_y": [], "left_off": left_off}
    costs = [p["cost_per_accepted_usd"] for p in shown]
    low, high = min(costs), max(costs)
    left, right, top, bottom = MARGIN + 20, CHART_WIDTH - 56, 34, CHART_HEIGHT - MARGIN
    for p in shown:
        p["cx"] = scale(p["cost_per_accepted_usd"], low, high, left, right)
        p["cy"] = scale(p["catch_rate"], 0, 1, bottom, top)
        p["name"] = point_name(p)
        # Frontier points are drawn larger and red; points over the ceiling grey (by CSS class).
        p["r"] = 6 if p["pareto"] else 4
        p["fill"] = MISSED_COLOUR if p["pareto"] else ("" if p["over_ceiling"] else MAIN_COLOUR)
    frontier = sorted((p for p in shown if p["pareto"]), key=lambda p: p["cost_per_accepted_usd"])
    for p in frontier:
        # Labels go left of points in the right half so they stay inside the chart; a long name
        # is wrapped at its " + ", never cut, and set below its point when above would leave the top.
        p["label_anchor"] = "end" if p["cx"] > (left + right) / 2 else "start"
        p["label_x"] = round(p["cx"] + (-9 if p["label_anchor"] == "end" else 9), 1)
        p["label_lines"] = label_lines(p["name"])
        above = p["cy"] - 8 - POINT_LABEL_LINE * (len(p["label_lines"]) - 1)
        p["label_y"] = round(above if above >= POINT_LABEL_TOP else p["cy"] + 16, 1)
        p["label_line_height"] = POINT_LABEL_LINE
    tick_values, step = nice_ticks(low, high)
    ticks_x = [{"x": scale(v, low, high, left, right), "text": usd_tick(v, step)} for v in tick_values]
    ticks_y = [{"y": scale(v, 0, 1, bottom, top), "text": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)]
    return {
        "points": shown,
        "left_off": left_off,
        "frontier": " ".join(f"{p['cx']},{p['cy']}" for p in frontier),
        "frontier_points": frontier,
        "ticks_x": ticks_x,
        "ticks_y": ticks_y,
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "bottom": bottom,
        "left": left,
        "right": right,
        "axis_top": 20,
        "tick_label_x": left - LABEL_GAP,
        "tick_label_y": bottom + 16,
        # The axis titles sit at the axes' ends, clear of the last tick (the y title above "100%").
        "x_title": {"x": right, "y": bottom + 34},
        "y_title": {"x": left - LABEL_GAP, "y": 14},
    }


def label_lines(name: str, width: int = POINT_LABEL_CHARS) -> list[str]:
    """Wrap a point's name into lines of at most `width` characters, at " + " where it can, else at spaces."""
    parts = name.split(" + ")
    pieces = [
        piece
        for i, part in enumerate(parts)
        for piece in textwrap.wrap(part + (" +" if i < len(parts) - 1 else ""), width, break_on_hyphens=False)
    ]
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def point_name(point: dict) -> str:
    """Name an ensemble point by its members and rule."""
    return f"{' + '.join(point['members'])} ({point['rule']})"


def nice_ticks(low: float, high: float, count: int = 5) -> tuple[list[float], float]:
    """Round tick values (steps of 1, 2 or 5 × 10ⁿ) inside [low, high], and the step; one tick when equal."""
    if not high > low:
        return [low], 0.0
    rough = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(rough))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= rough)
    first = math.ceil(low / step - 1e-9) * step
    values = []
    value = first
    while value <= high + step * 1e-9:
        values.append(round(value, 12))
        value += step
    return values, step


def usd_tick(value: float, step: float = 0.0) -> str:
    """Format a dollar amount for an axis, with only as many decimals as the step needs ($0.0015, not $0.0009293)."""
    if value >= 1 and (step == 0 or step >= 0.01):
        return f"${value:,.2f}"
    decimals = max(2, -math.floor(math.log10(step))) if step > 0 else 4
    return "$" + f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def error_class_chart(report: dict) -> dict:
    """Return a grouped bar chart: per error class, one bar per judge with its 95% whiskers."""
    classes = sorted({slug for judge in report["judges"] for slug in judge["catch_rate_by_error_class"]})
    n = max(len(report["judges"]), 1)
    group_width = max(110, 14 * n + 20)
    bar = (group_width - 20) / n
    bottom, top, left = CHART_HEIGHT - MARGIN, 20, MARGIN + 10
    groups = []
    for g, slug in enumerate(classes):
        bars = []
        for j, judge in enumerate(report["judges"]):
            rate = judge["catch_rate_by_error_class"].get(slug)
            interval = judge["catch_rate_by_error_class_ci95"].get(slug)
            if rate is None:
                continue
            x = left + g * group_width + 10 + j * bar
            bars.append(
                {
                    "x": round(x, 1),
                    "width": round(bar - 2, 1),
                    "y": scale(rate, 0, 1, bottom, top),
                    "height": round(scale(0, 0, 1, bottom, top) - scale(rate, 0, 1, bottom, top), 1),
                    "colour": PALETTE[j % len(PALETTE)],
                    "whisker_x": round(x + (bar - 2) / 2, 1),
                    "whisker_low": scale(interval[0], 0, 1, bottom, top),
                    "whisker_high": scale(interval[1], 0, 1, bottom, top),
                    "title": f"{judge['name']} v{judge['version']} on {slug}: {rate:.0%} "
                    f"[{interval[0]:.0%}–{interval[1]:.0%}]",
                }
            )
        groups.append({"slug": slug, "label_x": left + g * group_width + group_width / 2, "bars": bars})
    ticks = [{"y": scale(v, 0, 1, bottom, top), "text": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)]
    return {
        "groups": groups,
        "ticks": ticks,
        "width": left + max(len(classes), 1) * group_width + 10,
        "height": CHART_HEIGHT,
        "bottom": bottom,
        "left": left,
        "tick_label_x": left - LABEL_GAP,
        "group_label_y": bottom + 16,
        "legend": [
            {"text": f"{j['name']} v{j['version']}", "colour": PALETTE[i % len(PALETTE)]}
            for i, j in enumerate(report["judges"])
        ],
    }


# The triage dashboard's live error-rate estimates over time (one chart per judge).
ESTIMATE_WIDTH, ESTIMATE_HEIGHT, ESTIMATE_PAD = 640, 170, 28
ESTIMATE_SERIES = (("corrected", MAIN_COLOUR, "Corrected (Rogan–Gladen)"), ("audit", "#1f7a4d", "Audit sample"))


def estimate_chart(points) -> dict | None:
    """Place both live error-rate estimates of a judge's snapshots (oldest first), each with its interval.

    `points` have `corrected_error_rate`/`_low`/`_high` and `audit_error_rate`/`_low`/`_high`
    (None where unmeasured). Returns None when no point has a value. The y axis runs from 0 to
    10% above the highest value or bound (at least 5%); the two series sit 2 px either side
    of each snapshot's x so their intervals do not cover each other.
    """
    values = [
        v
        for p in points
        for v in (p.corrected_high, p.audit_high, p.corrected_error_rate, p.audit_error_rate)
        if v is not None
    ]
    if not values:
        return None
    top_value = max(0.05, max(values))
    top = top_value * 1.1
    pad, width, height = ESTIMATE_PAD, ESTIMATE_WIDTH, ESTIMATE_HEIGHT
    last = max(1, len(points) - 1)

    def y(value):
        return scale(value, 0, top, height - pad, pad)

    series = []
    for offset, (name, colour, title) in enumerate(ESTIMATE_SERIES):
        placed, intervals = [], []
        for i, point in enumerate(points):
            value = getattr(point, f"{name}_error_rate")
            if value is None:
                continue
            x = round(pad + (width - 2 * pad) * (i / last) + (offset * 4 - 2), 1)
            low, high = getattr(point, f"{name}_low"), getattr(point, f"{name}_high")
            if low is not None and high is not None:
                intervals.append({"x": x, "y_low": y(low), "y_high": y(high)})
            placed.append({"cx": x, "cy": y(value)})
        series.append(
            {
                "colour": colour,
                "title": title,
                "legend_x": pad + offset * 200,
                "intervals": intervals,
                "points": placed,
                "line": " ".join(f"{p['cx']},{p['cy']}" for p in placed) if len(placed) > 1 else "",
            }
        )
    return {
        "width": width,
        "height": height,
        "axis": {"x1": pad, "x2": width - pad, "y": y(0)},
        "top_label": {"y": y(top_value), "text": f"{top_value:.0%}"},
        "zero_y": y(0),
        "series": series,
    }
