"""Benchmark: change points over a history of builds (issue 37, "Done when"), seeded.

Synthetic series with the dispersion of real runs: each run is its build's level times a
log-normal factor of coefficient of variation 1-10 % (right-skewed, as load times are), 3 or
5 runs a build, 20, 50 or 200 builds.

- ``false alarms``: over 500 A/A histories (no change) per setting, the share reporting any
  change. Target: at most 5 %.
- ``detection``: shifts of 5, 10 and 20 % (up) at one known build (drawn in the middle half
  of the history) or at two (the level steps up, then back down), CV 3 %: the share of series
  where every true change is found at its exact build (targets 80, 95, 99 %), the mean
  position error (in builds, of each true change to the nearest reported one) and the share
  with a change reported where none is.
- ``bound``: the same shifted series placed by an oracle that knows the levels, the noise
  and the number of changes (:func:`bound_cuts`): the most any method can find at the
  exact build on these series.
- ``speed``: :func:`pagelab.stats.change_points` on a wide frame of 10 000 builds x 5 runs
  (one cell, one metric; with and without 3 changes), best of 3. Target: under 2 s.

With ``--otava`` (Otava's venv that ``make setup-test`` makes under the cache dir,
tests/otava_venv.py; or ``--otava PYTHON``, a Python with ``apache-otava`` installed), the
same series also go through Otava's E-divisive with its t-test on the per-build medians
(``otava.analysis.compute_change_points``, window 50, its default p-value threshold
0.001) and the figures are printed side by side.

Usage: ``python benchmarks/change_points.py [--histories 500] [--otava [PYTHON]]`` from the
repository root.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # otava_venv

from otava_venv import otava_changes
from pagelab._change_points import segment
from pagelab.stats import change_points

ALPHA = 0.05
MIN_RUNS = 4
BUILDS = (20, 50, 200)
#: The runs' coefficient of variation where shifts are sought.
CV = 0.03
#: The oracle's name in the tables (:func:`bound_cuts`).
BOUND = "bound"
RUNS = (3, 5)


def series(rng: np.random.Generator, builds: int, runs: int, cv: float,
           steps: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Run values and build positions: level 1000 ms, times ``1 + shift`` from each step's
    build on (a step of 0 returns to 1000), log-normal noise of coefficient ``cv``."""
    level = np.full(builds, 1000.0)
    for build, shift in sorted(steps.items()):
        level[build:] = 1000.0 * (1 + shift)
    sigma = np.sqrt(np.log1p(cv ** 2))
    noise = rng.lognormal(-sigma ** 2 / 2, sigma, size=(builds, runs))
    return (level[:, None] * noise).ravel(), np.repeat(np.arange(builds), runs)


def pagelab_cuts(values: np.ndarray, builds: np.ndarray) -> list[int]:
    return [build for build, _ in segment(values, builds, ALPHA, MIN_RUNS)]


def one_step(builds: int) -> range:
    """Where a single step is drawn: the middle half of the history."""
    return range(builds // 4, 3 * builds // 4 + 1)


def first_step(builds: int) -> range:
    """Where the step up of an up-then-back is drawn."""
    return range(builds // 4, builds // 2)


def second_step(builds: int, first: int) -> range:
    """Where the step back is drawn: at least 2 builds (a tenth of the history) after the
    step up, at most three quarters in (the higher level is never a single build)."""
    return range(first + max(2, builds // 10), 3 * builds // 4 + 1)


def bound_cuts(case: dict[str, object]) -> list[int]:
    """The most likely builds of the case's changes for an oracle that knows what no method
    knows: the two levels, the noise (normal on the runs' logs), how many changes there
    are and where they are drawn (:func:`one_step`, :func:`first_step`, :func:`second_step`).
    Its choice is the most probable one given the runs, so no method finds the exact
    builds in more of the series: the upper bound of ``exact``."""
    builds, runs, shift = case["builds"], case["runs"], case["shift"]
    values, truth = case["values"], case["truth"]
    assert isinstance(builds, int)
    assert isinstance(runs, int)
    assert isinstance(shift, float)
    assert isinstance(values, np.ndarray)
    assert isinstance(truth, list)
    sigma = np.sqrt(np.log1p(CV ** 2))
    logs = np.log(values).reshape(builds, runs)
    low, high = np.log(1000.0), np.log(1000.0 * (1 + shift))
    # Each build's log-likelihood gain from being on the higher level, summed from build 0.
    gain = (((logs - low) ** 2 - (logs - high) ** 2).sum(axis=1)) / (2 * sigma ** 2)
    total = np.concatenate([[0.0], np.cumsum(gain)])
    if len(truth) == 1:
        places = np.array(one_step(builds))
        return [int(places[np.argmax(total[builds] - total[places])])]
    best, cuts = -np.inf, truth
    for first in first_step(builds):
        seconds = np.array(second_step(builds, first))
        # The prior: the second step uniform over its range given the first.
        score = total[seconds] - total[first] - np.log(seconds.size)
        k = int(np.argmax(score))
        if score[k] > best:
            best, cuts = float(score[k]), [first, int(seconds[k])]
    return cuts


def scenarios(histories: int) -> list[dict[str, object]]:
    """Every series of the benchmark, seeded: A/A at CV 1-10 %, shifts at CV 3 %."""
    rng = np.random.default_rng(37)
    out: list[dict[str, object]] = []
    for cv in (0.01, 0.03, 0.05, 0.10):
        for runs in RUNS:
            for builds in BUILDS:
                for _ in range(histories):
                    values, positions = series(rng, builds, runs, cv, {})
                    out.append({"kind": "A/A", "cv": cv, "runs": runs, "builds": builds,
                                "shift": 0.0, "truth": [], "values": values,
                                "positions": positions})
    for shift in (0.05, 0.10, 0.20):
        for count in (1, 2):
            for runs in RUNS:
                for builds in BUILDS:
                    for _ in range(histories):
                        if count == 1:
                            single = one_step(builds)
                            truth = [int(rng.integers(single.start, single.stop))]
                            steps = {truth[0]: shift}
                        else:
                            up = first_step(builds)
                            first = int(rng.integers(up.start, up.stop))
                            back = second_step(builds, first)
                            second = int(rng.integers(back.start, back.stop))
                            truth, steps = [first, second], {first: shift, second: 0.0}
                        values, positions = series(rng, builds, runs, CV, steps)
                        out.append({"kind": f"{count} step{'s' if count > 1 else ''}",
                                    "cv": CV, "runs": runs, "builds": builds,
                                    "shift": shift, "truth": truth, "values": values,
                                    "positions": positions})
    return out


def otava_cuts(cases: list[dict[str, object]], python: str | None) -> list[list[int]]:
    """Otava's change points of each case, on the per-build medians, in a child process of
    its own venv (tests/otava_venv.py: ``python``, or the one made under the cache dir)."""
    medians = []
    for case in cases:
        values, positions = case["values"], case["positions"]
        assert isinstance(values, np.ndarray)
        assert isinstance(positions, np.ndarray)
        medians.append(pd.Series(values).groupby(positions).median().tolist())
    return otava_changes(medians, python=Path(python) if python else None)


def _mean_found(errors: list[float]) -> float:
    """The mean position error of the true changes found (NaN: none found)."""
    found = [e for e in errors if not np.isnan(e)]
    return float(np.mean(found)) if found else np.nan


def table(cases: list[dict[str, object]], found: list[list[int]]) -> pd.DataFrame:
    rows = []
    for case, cuts in zip(cases, found, strict=True):
        truth = case["truth"]
        assert isinstance(truth, list)
        exact = all(t in cuts for t in truth)
        errors = [min((abs(c - t) for c in cuts), default=np.nan) for t in truth]
        false = any(all(abs(c - t) > 0 for t in truth) for c in cuts) if truth else bool(cuts)
        rows.append({"kind": case["kind"], "cv": case["cv"], "shift": case["shift"],
                     "runs": case["runs"], "builds": case["builds"], "any": bool(cuts),
                     "exact": exact, "error": _mean_found(errors),
                     "missed": any(np.isnan(e) for e in errors), "false": false})
    return pd.DataFrame(rows)


def report(results: dict[str, pd.DataFrame]) -> None:
    names = [name for name in results if name != BOUND]
    aa = {name: results[name][results[name]["kind"] == "A/A"] for name in names}
    print("False alarms: share of A/A histories reporting any change (target <= 5 %)")
    grid = pd.concat({name: frame.groupby(["cv", "runs", "builds"])["any"].mean() * 100
                      for name, frame in aa.items()}, axis=1)
    print(grid.round(1).to_string())
    print("overall:", ", ".join(f"{n} {aa[n]['any'].mean() * 100:.1f} %" for n in names))
    print()
    print("Detection at CV 3 %: exact build found (% of series; targets 80/95/99 % for "
          "5/10/20 %), mean position error (builds), series with a false change (%)")
    shifted = {name: frame[frame["kind"] != "A/A"] for name, frame in results.items()}
    parts = {}
    for name, frame in shifted.items():
        grouped = frame.groupby(["kind", "shift", "runs", "builds"])
        parts[name] = pd.DataFrame({"exact %": grouped["exact"].mean() * 100} if name == BOUND
                                   else {"exact %": grouped["exact"].mean() * 100,
                                         "error": grouped["error"].mean(),
                                         "false %": grouped["false"].mean() * 100})
    print(pd.concat(parts, axis=1).round(2).to_string())
    print()
    by_shift = pd.concat({name: frame.groupby("shift")["exact"].mean() * 100
                          for name, frame in shifted.items()}, axis=1)
    print("exact build found, all settings pooled (%):")
    print(by_shift.round(1).to_string())


def speed(repeats: int) -> None:
    rng = np.random.default_rng(1)
    for label, steps in (("no change", {}), ("3 changes", {2500: 0.1, 5000: 0.0, 7500: 0.2})):
        values, positions = series(rng, 10_000, 5, CV, steps)
        start = pd.Timestamp("2026-01-01", tz="UTC")
        frame = pd.DataFrame({
            "url": "https://example.test/", "status": "success",
            "commit": [f"c{p:05d}" for p in positions],
            "created_at": start + pd.to_timedelta(positions * 60 + np.tile(range(5), 10_000),
                                                  unit="s"),
            "largest_contentful_paint": values,
        })
        timings = []
        for _ in range(repeats):
            began = time.perf_counter()
            changes = change_points(frame, metric="largest_contentful_paint")
            timings.append(time.perf_counter() - began)
        print(f"speed, 10 000 builds x 5 runs, {label}: best {min(timings):.3f} s, median "
              f"{float(np.median(timings)):.3f} s (target < 2 s); changes at "
              f"{changes['commit'].tolist()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--otava", nargs="?", const="", default=None, metavar="PYTHON",
                        help="Otava side by side: its venv under the cache dir (made when "
                             "missing), or PYTHON, a Python with apache-otava installed")
    args = parser.parse_args()
    cases = scenarios(args.histories)
    began = time.perf_counter()
    results = {"pagelab": table(cases, [pagelab_cuts(c["values"], c["positions"])  # type: ignore[arg-type]
                                        for c in cases])}
    print(f"{len(cases)} series, pagelab in {time.perf_counter() - began:.1f} s\n")
    results[BOUND] = table(cases, [bound_cuts(c) if c["truth"] else [] for c in cases])
    if args.otava is not None:
        began = time.perf_counter()
        results["otava"] = table(cases, otava_cuts(cases, args.otava))
        print(f"otava in {time.perf_counter() - began:.1f} s\n")
    report(results)
    print()
    speed(args.repeats)


if __name__ == "__main__":
    main()
