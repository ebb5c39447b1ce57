"""Adaptive runs (``runs=auto``) that keep the false-alarm rate at alpha, and the
simulations that show it.

The method: a **repeated significance test with a constant, calibrated per-look level**
(Pocock's design, calibrated exactly instead of read from a normal-theory table). After the
minimum number of runs the gate looks at the comparison after every added run, up to the
maximum; at every look it tests at the same level ``alpha'`` < ``alpha``, chosen so that the
chance that *any* look finds a significant difference between two samples of one
distribution is at most ``alpha``. Because the Mann-Whitney test depends only on the ranks,
that chance is the same for every continuous distribution of run values: it is computed once
per (alpha, baseline runs, minimum, maximum) by a seeded simulation of random rank orders
(40 000 sequences), and ``alpha'`` is the largest level that keeps it at or under ``alpha``.
A regression also needs its interval on the worse side and its median beyond the limit, so
the gate's false-alarm rate is lower still; ties (tied values give the rank test fewer
possible outcomes) make it more conservative, not less.

:func:`simulate_gate` replays the gate on many synthetic comparisons at once (numpy arrays,
one row per comparison) with the same rule (:func:`._gate.judge`); ``tests/test_gate.py``
checks that it agrees with the gate on :func:`pagelab.stats.compare` and measures the
figures in ``docs/pytest-plugin.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from pagelab.models import METRICS

from ._gate import GateRule, judge

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "SimulatedGate",
    "detectable_shift",
    "look_level",
    "rank_test_power",
    "simulate_gate",
]

#: Sequences simulated to calibrate the per-look level (Monte Carlo error of the resulting
#: false-alarm rate at 0.05: about 0.001).
_CALIBRATION_SEQUENCES = 40_000


def _p_values(base: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Two-sided Mann-Whitney p-values row by row (scipy's choice of exact or normal
    approximation, as :func:`pagelab.stats.compare` makes it for untied values; at any
    run count, as there: counts that cannot go below a level simply never do)."""
    import numpy as np
    from scipy.stats import mannwhitneyu

    return np.asarray(mannwhitneyu(base, new, axis=1, alternative="two-sided").pvalue)


@lru_cache(maxsize=64)
def look_level(alpha: float, n_baseline: int, min_runs: int, max_runs: int) -> float:
    """The per-look significance level of ``runs=auto``: the largest level at which at most
    ``alpha`` of sequences without any difference reach significance at some look (looks
    after ``min_runs``, ``min_runs + 1``, ... ``max_runs`` new runs against
    ``n_baseline`` baseline runs). ``alpha`` itself when only one look can test."""
    import numpy as np

    looks = list(range(min_runs, max_runs + 1))
    if len(looks) <= 1:
        return alpha
    rng = np.random.default_rng(np.random.SeedSequence([n_baseline, min_runs, max_runs]))
    base = rng.random((_CALIBRATION_SEQUENCES, n_baseline))
    new = rng.random((_CALIBRATION_SEQUENCES, max_runs))
    smallest = np.full(_CALIBRATION_SEQUENCES, np.inf)
    for n in looks:
        smallest = np.minimum(smallest, _p_values(base, new[:, :n]))
    # Rejection is p < level: the level may rise to the (k+1)-th smallest minimum, where
    # k = floor(alpha * sequences) sequences reject.
    ordered = np.sort(smallest)
    allowed = int(np.floor(alpha * _CALIBRATION_SEQUENCES))
    return float(min(alpha, ordered[allowed]))


#: Sequences simulated for a power figure (Monte Carlo error at 50 %: about 0.8 points).
_POWER_SEQUENCES = 4_000


@lru_cache(maxsize=256)
def rank_test_power(n_baseline: int, n: int, shift_sd: float, level: float) -> float:
    """The chance that the gate's rank test, at ``level``, finds a true shift of
    ``shift_sd`` standard deviations between ``n_baseline`` and ``n`` normally distributed
    runs (seeded simulation): the power the runs reached. A shift of 0 gives about
    ``level``; an infinite one (runs without spread) 1 when the counts can reach the level
    at all, else 0 (:func:`pagelab.stats.smallest_p_value`)."""
    import math

    import numpy as np

    from pagelab.stats import smallest_p_value

    if math.isinf(shift_sd):
        return 1.0 if smallest_p_value(n_baseline, n) < level else 0.0
    rng = np.random.default_rng(np.random.SeedSequence([n_baseline, n]))
    base = rng.standard_normal((_POWER_SEQUENCES, n_baseline))
    new = rng.standard_normal((_POWER_SEQUENCES, n)) + shift_sd
    return float((_p_values(base, new) < level).mean())


#: The power a change must be found with to count as detectable (the usual 80 %).
DETECTION_POWER = 0.8


@lru_cache(maxsize=64)
def detectable_shift(n_baseline: int, n: int, level: float,
                     power: float = DETECTION_POWER) -> float:
    """The smallest true shift, in standard deviations of the runs, that the gate's rank
    test at ``level`` finds with at least ``power`` between ``n_baseline`` and ``n`` runs
    (bisection over :func:`rank_test_power`, to 0.01 SD); infinite when those counts can
    never reach the level (:func:`pagelab.stats.smallest_p_value`). Times a metric's CV,
    it is the smallest change (in percent) that many runs can show."""
    import math

    if rank_test_power(n_baseline, n, math.inf, level) < power:
        return math.inf
    low, high = 0.0, 1.0
    while rank_test_power(n_baseline, n, high, level) < power:
        low, high = high, high * 2
    while high - low > 0.01:
        middle = round((low + high) / 2, 4)  # rounded: a few cached points, not new ones
        low, high = (low, middle) if rank_test_power(
            n_baseline, n, middle, level) >= power else (middle, high)
    return high


@dataclass(frozen=True, slots=True, eq=False)
class SimulatedGate:
    """What the gate concluded on each simulated comparison, and how often (fractions)."""

    #: Per comparison: "regression", "inconclusive" or "ok".
    verdicts: np.ndarray
    #: Per comparison: the new runs it took.
    runs: np.ndarray
    #: Per comparison: today's fixed threshold failed (the new median beyond the limit,
    #: whatever the noise), on the same runs.
    fixed_failed: np.ndarray
    max_runs: int

    @property
    def comparisons(self) -> int:
        return len(self.verdicts)

    @property
    def regression(self) -> float:
        """How often the gate failed (with the default ``inconclusive=pass``)."""
        return float((self.verdicts == "regression").mean())

    @property
    def inconclusive(self) -> float:
        return float((self.verdicts == "inconclusive").mean())

    @property
    def mean_runs(self) -> float:
        return float(self.runs.mean())

    @property
    def fixed_threshold(self) -> float:
        """How often today's fixed threshold failed."""
        return float(self.fixed_failed.mean())

    @property
    def stopped_early(self) -> float:
        """How often ``auto`` stopped before the maximum."""
        return float((self.runs < self.max_runs).mean())


def _intervals(
    base: np.ndarray, new: np.ndarray, confidence: float, resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of the difference of medians, row by row (the
    resampler of :func:`pagelab.stats.compare`)."""
    import numpy as np

    from pagelab._bootstrap import bootstrap_median_ranks

    medians = []
    for values in (base, new):
        ordered = np.sort(values, axis=1)
        lo, hi = bootstrap_median_ranks(values.shape[1], resamples, rng)
        medians.append((ordered[:, lo] + ordered[:, hi]) / 2)
    diffs = medians[1] - medians[0]
    tail = (1 - confidence) / 2
    low, high = np.quantile(diffs, [tail, 1 - tail], axis=1)
    return low, high


def simulate_gate(
    base: np.ndarray,
    new: np.ndarray,
    metric: str,
    limit: object,
    *,
    rule: GateRule | None = None,
    runs: int | None = None,
    resamples: int = 2_000,
    seed: int = 0,
) -> SimulatedGate:
    """The gate on ``len(base)`` comparisons at once: row ``i`` of ``base`` (baseline runs)
    against row ``i`` of ``new`` (new runs, in the order they would be measured).

    ``runs`` a number: a fixed number of new runs (the first ``runs`` columns) tested at
    ``rule.alpha``. ``runs`` None: ``runs=auto``: ``rule.min_runs`` runs, then one more at
    a time until decided or ``rule.max_runs`` (``new`` needs that many columns), each look
    at :func:`look_level`. ``limit`` is a :class:`RegressionLimit` on ``metric``.
    """
    import numpy as np

    rule = rule or GateRule()
    rng = np.random.default_rng(seed)
    count, n_baseline = base.shape
    lower_is_better = METRICS[metric].lower_is_better
    base_median = np.median(base, axis=1)
    allowed = np.array([limit.allowed(float(m)) for m in base_median])  # type: ignore[attr-defined]
    if runs is not None:
        looks, level = [runs], rule.alpha
    else:
        looks = list(range(rule.min_runs, rule.max_runs + 1))
        level = look_level(rule.alpha, n_baseline, rule.min_runs, rule.max_runs)
    verdicts = np.full(count, "", dtype=object)
    used = np.zeros(count, dtype=np.int64)
    open_rows = np.arange(count)
    for n in looks:
        rows = open_rows
        medians = np.median(new[rows, :n], axis=1)
        p_values = _p_values(base[rows], new[rows, :n])
        low, high = _intervals(base[rows], new[rows, :n], 1 - level, resamples, rng)
        last = n == looks[-1]
        still_open = []
        for i, row in enumerate(rows):
            p = None if np.isnan(p_values[i]) else float(p_values[i])
            verdict, _, inside = judge(lower_is_better, float(base_median[row]),
                                       float(medians[i]), float(allowed[row]),
                                       (float(low[i]), float(high[i])), p, level)
            if last or verdict == "regression" or inside:
                verdicts[row], used[row] = verdict, n
            else:
                still_open.append(row)
        open_rows = np.array(still_open, dtype=np.intp)
        if not open_rows.size:
            break
    # Today's gate on the same runs: the median of as many runs as the gate took.
    final_medians = np.array([np.median(new[row, :used[row]]) for row in range(count)])
    fixed = final_medians > allowed if lower_is_better else final_medians < allowed
    return SimulatedGate(verdicts.astype(str), used, fixed, looks[-1])
