"""The fitness rule on the real engine (issue 35.2): a run under a CPU hog per core is marked
``noisy``, and ``pagelab doctor --calibrate`` measures this machine's noise floor."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from pagelab.budgets import detectable_shift
from pagelab.engine import Engine

pytestmark = pytest.mark.engine


@contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy-loop processes, stopped (and reaped) on the way out."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def test_a_run_under_a_cpu_hog_per_core_is_noisy(engine: Engine, demo_url: str) -> None:
    # The rule reads the machine as a run starts (CPU pressure over the last 10 s, the
    # 1-minute load): the first run under the hogs fills that window with their contention
    # with Lighthouse's own work, and the second starts into it, as any run does on a
    # machine that stays busy.
    with cpu_hogs(os.cpu_count() or 2):
        engine.run(f"{demo_url}/fast")
        result = engine.run(f"{demo_url}/fast")
    environment = result.environment
    assert environment is not None
    assert environment.noisy is True, environment
    assert environment.unfit_reasons, environment
    print(environment.unfit_reasons, environment.benchmark_index, environment.load_average,
          environment.cpu_pressure)


def test_doctor_calibrate_prints_the_noise_floor() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pagelab", "doctor", "--calibrate", "--runs", "3"],
        capture_output=True, text=True, timeout=900, check=False)
    out = result.stdout
    print(out)
    assert result.returncode == 0, out + result.stderr
    assert "calibrating: 3 interleaved runs of 2 demo pages (/fast, /heavy) on mobile" in out
    assert len(re.findall(r"^  run \d of 6: (fast|heavy) success", out, re.M)) == 6
    header = next(line for line in out.splitlines() if line.lstrip().startswith("page"))
    assert header.split() == ["page", "metric", "median", "CV", "5", "runs", "10", "runs",
                              "20", "runs"]
    rows = {tuple(line.split()[:2]): line for line in map(str.strip, out.splitlines())
            if line.startswith(("/fast ", "/heavy "))}
    assert {("/fast", "LCP"), ("/heavy", "LCP"), ("/heavy", "TBT")} <= set(rows)
    # The smallest changes are the CV times 2.30, 1.41 and 0.95 SD (rank test, 80 % power):
    # shrinking with more runs wherever the runs vary.
    shifts = [detectable_shift(n, n, 0.05) for n in (5, 10, 20)]
    varied = 0
    for line in rows.values():
        percents = [float(p) for p in re.findall(r"([\d.]+) %", line)]
        if len(percents) < 4 or percents[0] < 0.5:
            continue
        cv, at_5, at_10, at_20 = percents
        assert at_5 > at_10 > at_20, line
        # Printed to 0.1 %: the CV's rounding carries into each product.
        for at, shift in zip((at_5, at_10, at_20), shifts, strict=True):
            assert at == pytest.approx(cv * shift, abs=0.05 + 0.05 * shift + 1e-9), line
        varied += 1
    assert varied, out
    assert "smallest change: of a metric's median, that the gate's rank test finds with " \
           "80% power at alpha 0.05" in out
    assert "fewest runs that can show any change at alpha 0.05: 4 a side" in out
    assert re.search(r"^(machine fit in all 6 runs|machine unfit: \d of 6 runs) \(benchmark "
                     r"index >= 1000, load per CPU <= 1, CPU pressure <= 60 %\)", out, re.M), out
