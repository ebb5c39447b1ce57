"""Benchmark: the regression gate's false alarms and power, against today's fixed threshold.

Simulates comparisons of synthetic runs with the dispersion of the recorded real runs
(``tests/recorded_runs.synthetic_runs``: a smoothed bootstrap of 10 real LCP runs of the
demo's ``/fast``, CV about 8 %, and a lognormal with a CV of 10 %) through
:func:`pagelab.budgets.simulate_gate`, the gate's own rule with vectorised statistics.

Prints, per dispersion and baseline size:

- A/A (no difference): how often the new gate fails, with 5, 10 or 15 new runs and with
  ``runs=auto`` (5 to 15), and how often today's fixed threshold fails on the same runs;
- a true 10 % LCP regression: the gate's power with each fixed number of runs and with
  ``auto`` (and the runs ``auto`` took on average).

Usage: ``python benchmarks/gate.py [--comparisons 1000] [--limit 10] [--power-limit 5]``
(about a minute).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
LCP = "largest_contentful_paint"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=10.0, help="A/A limit, percent")
    parser.add_argument("--power-limit", type=float, default=5.0, help="power limit, percent")
    args = parser.parse_args()
    sys.path[:0] = [str(_ROOT / "src"), str(_ROOT / "tests")]
    import numpy as np

    from pagelab.budgets import look_level, parse_regression_limits, simulate_gate
    from recorded_runs import DISPERSIONS, synthetic_runs

    count = args.comparisons
    aa_limit = parse_regression_limits(f"{LCP}:{args.limit:g}%")[LCP]
    power_limit = parse_regression_limits(f"{LCP}:{args.power_limit:g}%")[LCP]
    print(f"A/A, limit {aa_limit}: share of {count} comparisons failed "
          "(new gate / today's fixed threshold)")
    print(f"{'dispersion':<10} {'baseline':>8} {'n=5':>13} {'n=10':>13} {'n=15':>13} "
          f"{'auto (runs)':>20}  per-look level")
    for dispersion in DISPERSIONS:
        for n_baseline in (5, 10, 20):
            rng = np.random.default_rng(n_baseline)
            base = synthetic_runs(rng, (count, n_baseline), dispersion=dispersion)
            new = synthetic_runs(rng, (count, 15), dispersion=dispersion)
            cells = []
            for runs in (5, 10, 15, None):
                sim = simulate_gate(base, new, LCP, aa_limit, runs=runs)
                text = f"{sim.regression:.3f}/{sim.fixed_threshold:.3f}"
                if runs is None:
                    text += f" ({sim.mean_runs:.1f})"
                cells.append(text)
            print(f"{dispersion:<10} {n_baseline:>8} {cells[0]:>13} {cells[1]:>13} "
                  f"{cells[2]:>13} {cells[3]:>20}  {look_level(0.05, n_baseline, 5, 15):.4f}")
    print()
    print(f"True 10 % LCP regression, limit {power_limit}: power (share failed)")
    print(f"{'dispersion':<10} {'baseline':>8} " + " ".join(f"{n:>5}" for n in range(5, 16))
          + "   auto (mean runs)  fixed n of equal power")
    for dispersion in DISPERSIONS:
        for n_baseline in (10, 20):
            rng = np.random.default_rng(100 + n_baseline)
            base = synthetic_runs(rng, (count, n_baseline), dispersion=dispersion)
            new = synthetic_runs(rng, (count, 15), dispersion=dispersion, shift=1.10)
            power = {n: simulate_gate(base, new, LCP, power_limit, runs=n).regression
                     for n in range(5, 16)}
            auto = simulate_gate(base, new, LCP, power_limit)
            equal = min((n for n, p in power.items() if p >= auto.regression), default=None)
            print(f"{dispersion:<10} {n_baseline:>8} "
                  + " ".join(f"{p:>5.2f}" for p in power.values())
                  + f"   {auto.regression:.2f} ({auto.mean_runs:.1f})"
                  + f"       {equal if equal is not None else '> 15'}")


if __name__ == "__main__":
    main()
