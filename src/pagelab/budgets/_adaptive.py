"""``runs=auto``: measure each cell until its checks are decided, one interleaved run at a
time, between the rule's minimum and maximum.

A cell is decided when, against a baseline with regression limits, every limited metric
regressed or lies clearly inside its limit (:attr:`RegressionResult.decided`, each look at
the per-look level of :func:`look_level`, which keeps the false-alarm rate at alpha), and
the bootstrap interval of each budgeted metric's median lies wholly on one side of its
budget (the only condition without a baseline). Runs are added in rounds, one run to every
undecided cell per round, so drift over time spreads over the cells as in
:func:`pagelab.measure`.

``auto`` never stops below the runs that can decide (:meth:`AutoRuns.deciding_rule`): the
fewest new runs whose rank test can go below the per-look level against each baseline
cell's runs, and, for runs that become a baseline, the fewest that can show a difference
at alpha against as many runs (:func:`pagelab.stats.min_runs`). A range below that is
raised, and the notes say so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pagelab._cells import CellKey, cell_key, cell_keys, cell_label

from ._baseline import compare_baseline
from ._gate import GateRule
from ._models import MAX_RUNS
from ._sequential import look_level, rank_test_power

if TYPE_CHECKING:
    import pandas as pd

    from ._baseline import Baseline
    from ._limits import RegressionLimit
    from ._models import Check

__all__ = ["AutoRuns", "median_interval", "parse_auto_runs"]

Cell = CellKey
#: Measures ``runs`` runs of each given cell (:data:`pagelab.frames.CELL` values) and returns
#: their wide frame.
Measure = Callable[[Sequence[Cell], int], "pd.DataFrame"]


def parse_auto_runs(text: str, rule: GateRule | None = None) -> GateRule | None:
    """``auto`` or ``auto:MIN-MAX`` as the rule's run range; None when ``text`` is not auto
    (a number of runs). Raises InvalidInputError for a malformed range."""
    from pagelab._exceptions import InvalidInputError

    rule = rule or GateRule()
    value = text.strip().lower()
    if value == "auto":
        return rule
    if not value.startswith("auto:"):
        return None
    low, sep, high = value.removeprefix("auto:").partition("-")
    if not (sep and low.isdigit() and high.isdigit()):
        raise InvalidInputError(f"runs: expected auto or auto:MIN-MAX (e.g. auto:5-15), got "
                                f"{text!r}")
    return replace(rule, min_runs=int(low), max_runs=int(high))


def median_interval(values: Sequence[float], confidence: float) -> tuple[float, float]:
    """The percentile bootstrap interval of the median of ``values`` (seeded, the resampler
    of :func:`pagelab.stats.compare`)."""
    import numpy as np

    from pagelab._bootstrap import bootstrap_median_ranks

    ordered = np.sort(np.asarray(values, dtype=float))
    lo, hi = bootstrap_median_ranks(len(ordered), 10_000, np.random.default_rng(0))
    medians = (ordered[lo] + ordered[hi]) / 2
    tail = (1 - confidence) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return float(low), float(high)


@dataclass
class AutoRuns:
    """Adaptive runs for a set of cells: call :meth:`run` with a measuring function."""

    rule: GateRule
    baseline: Baseline | None = None
    limits: Mapping[str, RegressionLimit] = field(default_factory=dict)
    checks: Sequence[Check] = ()
    #: The runs become a baseline: never fewer than a comparison with as many runs needs.
    keeps_baseline: bool = False
    #: Per cell: the runs it took and why it stopped, for the summary.
    stops: dict[Cell, str] = field(default_factory=dict)
    #: Why the run range was raised (or could not be), for the summary.
    raised: list[str] = field(default_factory=list)

    def _baseline_runs(self, cells: Sequence[Cell]) -> Iterator[int]:
        """Each measured cell's baseline runs per limited metric (cells with runs only)."""
        if self.baseline is None:
            return
        for cell in cells:
            url, device, location, connection = cell[:4]
            base = self.baseline.cell(str(url), str(device), str(location),
                                      None if connection is None else str(connection))
            if base is None or not base.has_runs:
                continue
            for name in self.limits:
                count = sum(v is not None for v in base.values.get(name, []))
                if count:
                    yield count

    def deciding_rule(self, cells: Sequence[Cell]) -> GateRule:
        """The rule, its range raised where it is too low to decide: at least the new runs
        whose rank test can go below the per-look level (:func:`look_level`) against each
        cell's baseline runs, and with :attr:`keeps_baseline` the runs that can show a
        difference at alpha against as many. Notes why in :attr:`raised`."""
        from pagelab.stats import min_runs

        rule = self.rule
        floor, why = rule.min_runs, ""
        if self.keeps_baseline and min_runs(rule.alpha) > floor:
            floor = min_runs(rule.alpha)
            why = (f"a baseline of fewer than {floor} runs cannot show a difference at alpha "
                   f"{rule.alpha:.2g} against as many")
        for n_base in sorted(set(self._baseline_runs(cells))):
            while True:  # a higher minimum means fewer looks: a level as high or higher
                level = look_level(rule.alpha, n_base, floor, max(rule.max_runs, floor))
                need = min_runs(level, against=n_base)
                if need <= floor:
                    break
                if need > MAX_RUNS:
                    self.raised.append(
                        f"runs=auto: against a baseline of {n_base} runs no count up to "
                        f"{MAX_RUNS} can show a difference at alpha {level:.2g}; save the "
                        "baseline again with more runs")
                    break
                floor = need
                why = (f"against a baseline of {n_base} runs, fewer than {need} cannot show a "
                       f"difference at alpha {level:.2g}")
        if floor == rule.min_runs:
            return rule
        raised = replace(rule, min_runs=floor, max_runs=max(rule.max_runs, floor))
        self.raised.append(f"runs=auto:{rule.min_runs}-{rule.max_runs} raised to "
                           f"auto:{raised.min_runs}-{raised.max_runs}: {why}")
        return raised

    def _power(self, cell: Cell, taken: int) -> str:
        """``; power 37 % for a true largest_contentful_paint:10% (CV 10 %)``: per limited
        metric with baseline runs, the chance that the gate's rank test at the per-look
        level finds a true shift the size of the limit with ``taken`` new runs, at the
        spread (CV) of the baseline's runs. Empty without a baseline."""
        import math
        import statistics

        url, device, location, connection = cell[:4]
        base = None if self.baseline is None else self.baseline.cell(
            str(url), str(device), str(location), None if connection is None else str(connection))
        if base is None or not base.has_runs or not taken:
            return ""
        parts = []
        for name, limit in self.limits.items():
            values = [v for v in base.values.get(name, []) if v is not None]
            if len(values) < 2:
                continue
            median, spread = statistics.median(values), statistics.stdev(values)
            shift = abs(limit.allowed(median) - median)
            level = look_level(self.rule.alpha, len(values), self.rule.min_runs,
                               self.rule.max_runs)
            power = rank_test_power(len(values), taken,
                                    shift / spread if spread else math.inf, level)
            mean = statistics.fmean(values)
            cv = f"{spread / abs(mean) * 100:.0f} %" if mean else "n/a"
            parts.append(f"power {power * 100:.0f} % for a true {limit} (CV {cv})")
        return "".join(f"; {part}" for part in parts)

    def _decided(self, cell: Cell, rows: pd.DataFrame) -> bool:
        """Every regression check against the baseline regressed or is clearly inside its
        limit, and every budget is clearly met or missed."""
        if self.baseline is not None and self.limits:
            comparison = compare_baseline(self.baseline, rows, self.limits, rule=self.rule,
                                          adaptive=True)
            if not all(result.decided for result in comparison.results):
                return False
        ok = rows[rows["status"].astype(str) == "success"] if "status" in rows else rows
        url, device, location = (str(v) for v in cell[:3])
        for check in self.checks:
            if not check.matches(url, device, location) or check.metric not in ok.columns:
                continue
            values = [float(v) for v in ok[check.metric].dropna().tolist()]
            if len(values) < 2:
                return False
            low, high = median_interval(values, 1 - self.rule.alpha)
            if low <= check.limit <= high:
                return False
        return True

    def run(self, measure: Measure, cells: Sequence[Cell]) -> pd.DataFrame:
        """Measure ``cells`` ``min_runs`` times, then one more run per undecided cell per
        round until every cell is decided or has ``max_runs`` runs; the wide frame of every
        run (``run`` numbered per cell in measuring order)."""
        import pandas as pd

        cells = [cell_key(cell) for cell in cells]  # a page's four values: its whole key
        self.rule = self.deciding_rule(cells)
        frame = _numbered(measure(cells, self.rule.min_runs), {})
        # Runs asked for per cell: the loop ends at the maximum even if a cell's runs came
        # back under another key.
        asked = dict.fromkeys(cells, self.rule.min_runs)
        undecided = list(cells)
        while True:
            counts = _counts(frame)
            still: list[Cell] = []
            for cell in undecided:
                taken = counts.get(cell, 0)
                if taken and self._decided(cell, _rows(frame, cell)):
                    self.stops[cell] = f"decided after {taken} runs{self._power(cell, taken)}"
                elif max(taken, asked[cell]) >= self.rule.max_runs:
                    self.stops[cell] = (f"undecided at the maximum, {taken} runs"
                                        f"{self._power(cell, taken)}")
                else:
                    still.append(cell)
            if not still:
                return frame
            undecided = still
            for cell in still:
                asked[cell] += 1
            more = _numbered(measure(undecided, 1), counts)
            frame = pd.concat([frame, more], ignore_index=True)

    def notes(self) -> list[str]:
        """Why the range was raised, then ``runs=auto: mobile/us https://… decided after 7
        runs``, one per cell."""
        return [*self.raised,
                *(f"runs=auto: {cell_label(cell)} {why}" for cell, why in self.stops.items())]


def _counts(frame: pd.DataFrame) -> dict[Cell, int]:
    counts: dict[Cell, int] = {}
    for cell in cell_keys(frame):
        counts[cell] = counts.get(cell, 0) + 1
    return counts


def _rows(frame: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    return frame[[key == cell for key in cell_keys(frame)]]


def _numbered(frame: pd.DataFrame, before: Mapping[Cell, int]) -> pd.DataFrame:
    """``run`` continued from the runs each cell already has (0-based, in measuring order)."""
    import pandas as pd

    frame = frame.reset_index(drop=True)
    seen: dict[Cell, int] = dict(before)
    numbers: list[int] = []
    for cell in cell_keys(frame):
        numbers.append(seen.get(cell, 0))
        seen[cell] = seen.get(cell, 0) + 1
    frame["run"] = pd.array(numbers, dtype="Int64")
    return frame
