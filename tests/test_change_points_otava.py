"""pagelab.stats.change_points agrees with Apache Otava on clear series (issue 37, point 3).

The same seeded histories go to both: pagelab gets every run (the wide frame), Otava what it
reads, one value per build (the build's median), through its own E-divisive with its t-test
(``otava.analysis.compute_change_points``, its default window and p-value threshold) in the
venv that tests/otava_venv.py makes once per machine (``make setup-test``). Clear series: 20
to 50 builds of 5 runs, a CV of 3 %, one step of 20 % (up or down) in the middle half, or
none. Where they differ by design (5 % steps, levels that return within a few builds, long
histories) is measured side by side in docs/history.md, not asserted here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from otava_venv import otava_changes
from pagelab.stats import change_points

RUNS = 5
CV = 0.03
SERIES = 12


def runs_of(rng: np.random.Generator, levels: np.ndarray) -> np.ndarray:
    """``RUNS`` runs a build, log-normal around each build's level with coefficient
    ``CV`` (right-skewed, as load times are): builds x runs."""
    sigma = np.sqrt(np.log1p(CV ** 2))
    return levels[:, None] * rng.lognormal(-sigma ** 2 / 2, sigma, (len(levels), RUNS))


def frame_of(values: np.ndarray) -> pd.DataFrame:
    """The wide frame's shape: a row per run, a commit per build, builds a minute apart."""
    builds, runs = values.shape
    start = pd.Timestamp("2026-01-01", tz="UTC")
    return pd.DataFrame({
        "url": "https://example.test/", "status": "success",
        "commit": [f"build-{b:02d}" for b in range(builds) for _ in range(runs)],
        "created_at": [start + pd.Timedelta(minutes=b, seconds=r)
                       for b in range(builds) for r in range(runs)],
        "largest_contentful_paint": values.ravel(),
    })


def pagelab_builds(values: np.ndarray) -> list[int]:
    found = change_points(frame_of(values), metric="LCP")
    return [int(str(commit).removeprefix("build-")) for commit in found["commit"]]


def cases(shift: float, seed: int) -> tuple[list[np.ndarray], list[list[int]]]:
    """``SERIES`` histories of 20-50 builds; with a ``shift``, one step in the middle half."""
    rng = np.random.default_rng(seed)
    histories, truths = [], []
    for _ in range(SERIES):
        builds = int(rng.integers(20, 51))
        levels = np.full(builds, 1000.0)
        truth: list[int] = []
        if shift:
            step = int(rng.integers(builds // 4, 3 * builds // 4 + 1))
            levels[step:] *= 1 + shift
            truth = [step]
        histories.append(runs_of(rng, levels))
        truths.append(truth)
    return histories, truths


@pytest.mark.timeout(600)  # the first use makes Otava's venv (pip, about half a minute)
@pytest.mark.parametrize(("shift", "seed"), [(0.20, 1), (-0.20, 2), (0.0, 3)],
                         ids=["20% slower", "20% faster", "no change"])
def test_pagelab_and_otava_find_the_same_build(shift: float, seed: int) -> None:
    histories, truths = cases(shift, seed)
    medians = [np.median(values, axis=1).tolist() for values in histories]
    otava = otava_changes(medians)
    ours = [pagelab_builds(values) for values in histories]
    assert otava == truths
    assert ours == truths
