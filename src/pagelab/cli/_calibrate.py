"""``pagelab doctor --calibrate``: this machine's noise floor, measured on the demo site.

Runs a light and a heavy demo page ``--runs`` times each, interleaved (:func:`pagelab.measure`,
into a temporary store: calibration runs are not the user's tests), and prints per page and
metric the median, the CV of the runs, and the smallest change of the median the gate can
find at 5, 10 and 20 runs a side: :func:`pagelab.budgets.detectable_shift` (the rank test's
power, at the gate's alpha) times the CV. Then whether the machine was fit to measure
(the fitness rule, ``noisy`` runs): the floor of a busy machine is not its quiet floor.
"""

from __future__ import annotations

import math
import tempfile
from typing import TYPE_CHECKING

from pagelab.models import HEADLINE_METRICS, METRICS, FitnessRule, TestReport, unfit_runs_note

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CALIBRATION_PAGES", "RUN_COUNTS", "calibrate", "noise_floor"]

#: The demo pages measured: a light one and a heavy one (docs/engine.md).
CALIBRATION_PAGES = ("fast", "heavy")
#: Runs a side the smallest detectable change is given for.
RUN_COUNTS = (5, 10, 20)
#: The device measured: Lighthouse's default (mobile, simulated throttling).
_DEVICE = "mobile"


def noise_floor(frame: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per page and headline metric with values: ``page``, ``metric`` (its label),
    ``median`` (formatted), ``cv`` (percent) and, per count of :data:`RUN_COUNTS`, the
    smallest change (percent) ``alpha``'s rank test finds with 80 % power at that many
    runs a side; NaN where the CV is undefined (a median of 0)."""
    import pandas as pd

    from pagelab import stats
    from pagelab.budgets import detectable_shift

    summary = stats.summarize(frame, by="url")
    shifts = {n: detectable_shift(n, n, alpha) for n in RUN_COUNTS}
    rows = []
    for _, cell in summary.iterrows():
        page = "/" + str(cell["url"]).rstrip("/").rsplit("/", 1)[-1]
        for name in HEADLINE_METRICS:
            median = cell.get(name)
            if median is None or pd.isna(median):
                continue
            cv = float(cell[f"{name}_cv"])
            row: dict[str, object] = {"page": page, "metric": METRICS[name].label,
                                      "median": METRICS[name].format(float(median)), "cv": cv}
            for n, shift in shifts.items():
                row[f"{n} runs"] = cv * shift if math.isfinite(cv) else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def _percent(value: object) -> str:
    return "-" if not isinstance(value, float) or math.isnan(value) else f"{value:.1f} %"


def calibrate(runs: int, alpha: float = 0.05) -> int:
    """Measure, print the noise-floor table and the machine's fitness; 1 when a run
    failed."""
    from pagelab import measure, stats
    from pagelab.budgets import DETECTION_POWER
    from pagelab.demo import serve
    from pagelab.runners import LocalRunner

    from ._options import exit_status, runs_failed

    rule = FitnessRule.from_environment()
    total = runs * len(CALIBRATION_PAGES)
    print(f"calibrating: {runs} interleaved runs of {len(CALIBRATION_PAGES)} demo pages "
          f"({', '.join('/' + p for p in CALIBRATION_PAGES)}) on {_DEVICE}", flush=True)
    done = 0

    def progress(report: object) -> None:
        nonlocal done
        done += 1
        if isinstance(report, TestReport):
            noisy = report.environment is not None and report.environment.noisy
            print(f"  run {done} of {total}: {report.url.rsplit('/', 1)[-1]} "
                  f"{report.status.value}{' (noisy)' if noisy else ''}", flush=True)

    with serve() as base_url, tempfile.TemporaryDirectory(prefix="pagelab-calibrate-") as tmp, \
            LocalRunner(tmp) as runner:
        results = measure([f"{base_url}/{page}" for page in CALIBRATION_PAGES],
                          devices=_DEVICE, runs=runs, runner=runner, progress=progress)
    frame = results.frame
    table = noise_floor(frame, alpha)
    counts = [f"{n} runs" for n in RUN_COUNTS]
    if len(table):
        shown = table.rename(columns={"cv": "CV"})
        formatters = {column: _percent for column in ["CV", *counts]}
        print()
        print(shown.to_string(index=False, formatters=formatters))
    print(f"\nsmallest change: of a metric's median, that the gate's rank test finds with "
          f"{DETECTION_POWER:.0%} power at alpha {alpha:g}, with {' / '.join(counts)} a "
          "side, for runs with this CV")
    print(f"fewest runs that can show any change at alpha {alpha:g}: {stats.min_runs(alpha)} "
          "a side")
    noisy = int(frame["noisy"].astype("boolean").fillna(False).sum())
    rule_text = rule.describe()
    if noisy:
        print(f"{unfit_runs_note(noisy, len(frame))} ({rule_text}): this is a busy "
              "machine's floor, not its quiet one")
    else:
        print(f"machine fit in all {len(frame)} runs ({rule_text})")
    return exit_status(failed=runs_failed(frame))
