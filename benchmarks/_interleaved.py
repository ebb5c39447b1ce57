"""Two warm engines compared on the demo pages, run by run, interleaved (not a benchmark by
itself: ``sandbox.py`` and ``egress.py`` use it).

Each side is a callable making one run of a URL. Every page is first run once, untimed, on
each side (the demo site draws some of its images on the first request: without this, the
side that ran a page first paid for it, e.g. +240 ms server response time in its LHR); then
the order alternates every round so that neither side always runs first. Seconds a run are
counted from the moment the engine lock is held (another job's runs on the machine do not
count). Prints per page and metric the medians of both sides, their difference and each
side's range (min-max): the run-to-run variation a difference is to be judged against.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

METRICS = ("first_contentful_paint", "largest_contentful_paint", "speed_index",
           "total_blocking_time", "cumulative_layout_shift", "performance_score")
#: Decimals shown of each value (0 unless named).
_PLACES = {"seconds": 2, "cumulative_layout_shift": 3}

#: ``(url, on_start) -> RunResult``: one run of a side.
Run = Callable[[str, Callable[[], None]], Any]


def compare(sides: Mapping[str, Run], urls: Mapping[str, str], n: int) -> dict[str, Any]:
    """Run every page ``n`` times a side, interleaved; print and return the rows."""
    names = list(sides)
    assert len(names) == 2, "two sides"
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    for url in urls.values():
        for name in names:
            sides[name](url, lambda: None)
    for page, url in urls.items():
        results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for index in range(n):
            for name in names if index % 2 == 0 else reversed(names):
                started: list[float] = []

                def mark(into: list[float] = started) -> None:
                    into.append(time.monotonic())

                result = sides[name](url, mark)
                seconds = time.monotonic() - started[0]
                if result.status != "success" or result.metrics is None:
                    raise RuntimeError(f"{name} run of {page} failed: {result.error}")
                # A metric the run did not measure (a quiet window of 0 ends before the
                # first paint) is NaN, and printed as missing.
                row = {m: _value(getattr(result.metrics, m)) for m in METRICS}
                row["seconds"] = seconds
                results[name].append(row)
        rows[page] = results
        _print_page(page, names, results)
    return rows


def _value(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _spread(values: list[float]) -> tuple[float, float, float]:
    """Median, min and max of the values measured (NaN for all three when none was)."""
    measured = [v for v in values if not math.isnan(v)]
    if not measured:
        return math.nan, math.nan, math.nan
    return statistics.median(measured), min(measured), max(measured)


def _cell(cell: tuple[float, float, float], places: int) -> str:
    median, low, high = cell
    if math.isnan(median):
        return "missing"
    return f"{median:9.{places or 1}f} ({low:.{places}f}-{high:.{places}f})"


def _print_page(
    page: str, names: Sequence[str], results: dict[str, list[dict[str, float]]]
) -> None:
    a, b = names
    print(f"\nPage {page}: medians (range)")
    print(f"  {'':<26}{a:>24}{b:>24}{'diff':>9}")
    for metric in (*METRICS, "seconds"):
        places = _PLACES.get(metric, 0)
        cells = [_spread([r[metric] for r in results[name]]) for name in names]
        (ma, *_), (mb, *_) = cells
        measured = mb and not math.isnan(ma) and not math.isnan(mb)
        diff = f"{(ma - mb) / mb * 100:+7.1f} %" if measured else "      -"
        text = [_cell(cell, places) for cell in cells]
        print(f"  {metric:<26}{text[0]:>24}{text[1]:>24}{diff:>9}")
