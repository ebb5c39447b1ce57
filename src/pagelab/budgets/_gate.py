"""The regression gate: is a cell's metric worse than its baseline, really and by enough?

A metric *regresses* when two things hold at once:

- the change is **real**: :func:`pagelab.stats.compare` of the baseline's runs and the new
  runs finds it significant at ``level`` (the bootstrap interval of the difference of
  medians excludes zero and the Mann-Whitney p-value is below ``level``), on the worse side;
- the change is **large**: the new median is beyond the ``compare-fail`` limit.

Large but not significant is *inconclusive* ("inconclusive (n=3 vs 5)"): it passes unless
the rule says inconclusive results fail. Run counts that can never give a p-value below
``level`` (:func:`pagelab.stats.too_few_runs`: 4 new runs against a 3-run baseline at 0.05)
can never fail: the result says so instead of the bare counts ("inconclusive (4 vs 3 runs
cannot show a difference at alpha 0.05: at least 4 a side)"). Everything else is *ok*. A
comparison is *decided* when it regressed or when the interval's worse end is within the
limit (clearly inside); the adaptive runs (:mod:`._sequential`) stop measuring a cell once
it is decided.

A baseline written before it kept its runs has only aggregates: such a cell is compared by
the fixed threshold (as before), and the record says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pagelab._cells import CellKey
from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS, unfit_runs_note

from ._evaluate import BudgetResult, cell_label, format_value
from ._models import MAX_RUNS

if TYPE_CHECKING:
    from ._limits import RegressionLimit

__all__ = [
    "DEFAULT_ALPHA",
    "VERDICTS",
    "GateRule",
    "RegressionResult",
    "Verdict",
    "decide",
    "fixed_threshold",
    "format_difference",
    "judge",
    "regression_line",
]

Verdict = Literal["regression", "inconclusive", "ok"]
#: What a regression check concludes, worst first.
VERDICTS: tuple[Verdict, ...] = ("regression", "inconclusive", "ok")
#: The false-alarm rate the gate allows by default (``--pagelab-alpha``).
DEFAULT_ALPHA = 0.05
#: Bootstrap resamples behind each interval (stats.compare's default).
_RESAMPLES = 10_000


@dataclass(frozen=True, slots=True)
class GateRule:
    """How regressions are decided: the false-alarm rate ``alpha``, whether an inconclusive
    result fails, and the adaptive runs' ``min_runs`` / ``max_runs`` (``runs=auto``)."""

    alpha: float = DEFAULT_ALPHA
    inconclusive_fails: bool = False
    min_runs: int = 5
    max_runs: int = 15

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not 0 < self.alpha < 0.5:
            raise InvalidInputError(f"alpha: expected a number between 0 and 0.5, got "
                                    f"{self.alpha!r}")
        if not 2 <= self.min_runs <= self.max_runs <= MAX_RUNS:
            raise InvalidInputError(
                f"runs=auto: need 2 <= minimum <= maximum <= {MAX_RUNS}, got {self.min_runs} and "
                f"{self.max_runs}"
            )


@dataclass(frozen=True, slots=True)
class RegressionResult(BudgetResult):
    """A regression check against a baseline: a :class:`BudgetResult` (``expected`` is the
    worst allowed value, ``actual`` the new median) with the comparison's figures.

    ``difference`` is ``median - baseline_median`` and ``interval`` its bootstrap interval
    at ``1 - level`` (both in the metric's unit); ``p_value`` the two-sided Mann-Whitney
    p-value; ``confidence`` is ``1 -`` the significance level the decision used (``alpha``,
    or the adaptive runs' per-look level). Without the baseline's runs (an older baseline file) the
    statistics are None and ``verdict`` comes from the fixed threshold.
    """

    baseline_median: float | None = None
    median: float | None = None
    difference: float | None = None
    interval: tuple[float, float] | None = None
    p_value: float | None = None
    n: int = 0
    n_baseline: int = 0
    significant: bool | None = None
    verdict: Verdict = "ok"
    confidence: float | None = None
    limit: str = ""
    #: Clearly within the limit (the interval's worse end is inside it).
    inside: bool = False
    #: Why ``n`` against ``n_baseline`` runs can never show a difference at the level
    #: (:func:`pagelab.stats.too_few_runs`); None when they can.
    too_few_runs: str | None = None
    #: ``machine unfit: 3 of 5 runs`` when the new runs called a regression that their
    #: fit runs alone do not (the verdict is then inconclusive); None otherwise.
    unfit: str | None = None

    @property
    def decided(self) -> bool:
        """No more runs can change the answer much: a regression, or clearly inside."""
        return self.verdict == "regression" or self.inside

    def to_dict(self) -> dict[str, Any]:
        # BudgetResult's dict (with status and label) plus the comparison's figures.
        data = BudgetResult.to_dict(self)
        data["interval"] = None if self.interval is None else list(self.interval)
        return data


def _finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def format_difference(metric: str, value: float | None) -> str:
    """``+313 ms``, ``-12 ms``, ``0 ms`` (never ``-0``): a difference in the metric's unit."""
    if value is None or math.isnan(value):
        return format_value(metric, None)
    text = format_value(metric, abs(value))
    if value == 0 or text == format_value(metric, 0.0):
        return format_value(metric, 0.0)
    return ("+" if value > 0 else "-") + text


def decide(
    metric: str,
    baseline_values: Sequence[float | None],
    values: Sequence[float | None],
    limit: RegressionLimit,
    *,
    cell: CellKey,
    level: float | None = None,
    rule: GateRule | None = None,
    report_url: str | None = None,
    noisy: Sequence[bool] | None = None,
) -> RegressionResult:
    """Decide whether ``metric`` regressed from ``baseline_values`` to ``values`` (one
    cell's successful runs, None for a run without a value) beyond ``limit``, testing at
    ``level`` (default ``rule.alpha``) through :func:`pagelab.stats.compare`.

    ``noisy`` (one flag per value: measured on a machine unfit to measure) keeps unfit runs
    from calling a regression alone: a regression is decided again on the fit runs only,
    and when they do not show it the verdict is inconclusive, ``unfit`` saying so
    (``machine unfit: 3 of 5 runs``)."""
    flags = list(noisy or [])
    if any(flags):
        result = decide(metric, baseline_values, values, limit, cell=cell, level=level,
                        rule=rule, report_url=report_url)
        if result.verdict != "regression":
            return result
        fit = [v for v, unfit in zip(values, flags, strict=True) if not unfit]
        if fit and decide(metric, baseline_values, fit, limit, cell=cell, level=level,
                          rule=rule).verdict == "regression":
            return result
        rule = rule or GateRule()
        result = replace(result, verdict="inconclusive", passed=not rule.inconclusive_fails,
                         unfit=unfit_runs_note(sum(flags), len(flags)))
        return replace(result, message=regression_line(result))

    import pandas as pd

    from pagelab import stats

    rule = rule or GateRule()
    level = rule.alpha if level is None else level
    base, new = _finite(baseline_values), _finite(values)
    where = cell_label(cell)
    lower_is_better = METRICS[metric].lower_is_better
    fields: dict[str, Any] = {
        **_cell_fields(cell), "metric": metric,
        "operator": "<=" if lower_is_better else ">=", "values": tuple(new),
        "aggregation": "median", "level": "error", "report_url": report_url, "n": len(new),
        "n_baseline": len(base), "limit": str(limit), "confidence": 1 - level,
    }
    if not base or not new:
        why = (f"the baseline has no {metric}" if not base
               else f"no value in {len(values)} run{'s' if len(values) != 1 else ''}")
        return RegressionResult(
            **fields, expected=math.nan, actual=None, passed=not rule.inconclusive_fails,
            verdict="inconclusive", message=f"{metric} inconclusive: {why} {where}",
        )
    frame = pd.DataFrame({"side": ["baseline"] * len(base) + ["new"] * len(new),
                          metric: base + new})
    row = stats.compare(frame, "side", "baseline", "new", metrics=metric,
                        resamples=_RESAMPLES, seed=0, confidence=1 - level).iloc[0]
    base_median, median = float(row["a_median"]), float(row["b_median"])
    low, high = float(row["ci_low"]), float(row["ci_high"])
    interval = None if math.isnan(low) else (low, high)
    p_value = None if math.isnan(row["p_value"]) else float(row["p_value"])
    allowed = limit.allowed(base_median)
    verdict, significant, inside = judge(
        lower_is_better, base_median, median, allowed, interval, p_value, level)
    # In the gate's order (new runs first, as "n=4 vs 3"), not compare's (baseline first).
    fields["too_few_runs"] = stats.too_few_runs(len(new), len(base), level)
    result = RegressionResult(
        **fields, expected=allowed, actual=median, message="",
        passed=verdict == "ok" or (verdict == "inconclusive" and not rule.inconclusive_fails),
        baseline_median=base_median, median=median, difference=median - base_median,
        interval=interval, p_value=p_value, significant=significant, verdict=verdict,
        inside=inside,
    )
    return replace(result, message=regression_line(result))


def judge(
    lower_is_better: bool,
    base_median: float,
    median: float,
    allowed: float,
    interval: tuple[float, float] | None,
    p_value: float | None,
    level: float,
) -> tuple[Verdict, bool, bool]:
    """The rule itself: (verdict, significant, clearly inside) from the comparison's
    figures. Significant: p below ``level`` and the interval excludes zero; a regression is
    significant on the worse side **and** beyond ``allowed``; beyond but not significant is
    inconclusive."""
    significant = p_value is not None and interval is not None and p_value < level and (
        interval[0] > 0 or interval[1] < 0)
    worse_side = interval is not None and (
        interval[0] > 0 if lower_is_better else interval[1] < 0)
    beyond = median > allowed if lower_is_better else median < allowed
    inside = interval is not None and (
        base_median + interval[1] <= allowed if lower_is_better
        else base_median + interval[0] >= allowed)
    verdict: Verdict = ("regression" if significant and worse_side and beyond
                        else "inconclusive" if beyond else "ok")
    return verdict, significant, inside


def fixed_threshold(
    metric: str,
    base_median: float,
    values: Sequence[float | None],
    limit: RegressionLimit,
    *,
    cell: CellKey,
    n_baseline: int,
    report_url: str | None = None,
) -> RegressionResult:
    """The gate of a baseline without runs: the new median against the limit alone."""
    new = _finite(values)
    lower_is_better = METRICS[metric].lower_is_better
    allowed = limit.allowed(base_median)
    median = float(_median(new)) if new else None
    beyond = median is None or (median > allowed if lower_is_better else median < allowed)
    result = RegressionResult(
        **_cell_fields(cell), metric=metric,
        operator="<=" if lower_is_better else ">=", values=tuple(new), aggregation="median",
        level="error", report_url=report_url, n=len(new), n_baseline=n_baseline,
        limit=str(limit), expected=allowed, actual=median, message="", passed=not beyond,
        baseline_median=base_median, median=median,
        difference=None if median is None else median - base_median,
        verdict="regression" if beyond else "ok",
    )
    return replace(result, message=regression_line(result))


def _cell_fields(cell: CellKey) -> dict[str, Any]:
    url, device, location, connection = cell[:4]
    return {"url": str(url), "device": str(device), "location": str(location),
            "connection": connection}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def regression_line(result: RegressionResult) -> str:
    """The failure line: both medians, the difference with its interval, p and run counts,
    the limit and the cell (the report link last)::

        largest_contentful_paint regression: median 968 ms vs baseline 655 ms, +313 ms
        (95% interval +280 ms to +340 ms), p=0.0003, n=7 vs 5, limit
        largest_contentful_paint:10% (at most 721 ms) mobile/us http://…/ report: file:///…
    """
    r = result
    name = r.metric
    where = cell_label((r.url, r.device, r.location, r.connection))
    head = f"{name} {r.verdict}"
    if r.unfit:
        head += f" ({r.unfit})"
    elif r.too_few_runs:
        head += f" ({r.too_few_runs})"
    elif r.verdict == "inconclusive":
        head += f" (n={r.n} vs {r.n_baseline})"
    if r.median is None or r.baseline_median is None:
        return f"{head}: no value {where}"
    parts = [f"median {format_value(name, r.median)} vs baseline "
             f"{format_value(name, r.baseline_median)}"]
    if r.difference is not None:
        diff = format_difference(name, r.difference)
        if r.interval is not None:
            low, high = (format_difference(name, end) for end in r.interval)
            diff += f" ({_percent(r.confidence or 0.95)} interval {low} to {high})"
        parts.append(diff)
    if r.significant is None:
        parts.append(f"n={r.n} vs {r.n_baseline} (baseline without runs: fixed threshold "
                     "only)")
    else:
        parts.append("p n/a" if r.p_value is None else f"p={_p(r.p_value)}")
        if (r.verdict != "inconclusive" or r.unfit) and not r.too_few_runs:
            # else they lead the line
            parts.append(f"n={r.n} vs {r.n_baseline}")
    limit_text = f"limit {r.limit} ({'at most' if r.operator == '<=' else 'at least'} " \
                 f"{format_value(name, r.expected)})"
    line = f"{head}: {', '.join(parts)}, {limit_text} {where}"
    if r.report_url:
        line += f" report: {r.report_url}"
    return line


def _p(value: float) -> str:
    return f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def _percent(confidence: float) -> str:
    return f"{confidence * 100:.3g}%"
