"""Benchmark: reading a long history (``pagelab.history``) and finding its change points.

Seeds one SQLite store (a ``LocalRunner``'s) with ``--builds`` builds of branch ``main``, each
with ``--runs`` finished tests of two pages (``/fast`` unchanged, ``/heavy`` 20 % slower from
the middle build on), one test a second. Then, in fresh processes and interleaved (``--rounds``
rounds, the order alternating), reads ``/heavy``'s whole history with
``pagelab.history(url, branch="main", limit=builds x runs)`` and runs ``Results.changes()`` on
it, with this checkout's ``src`` and, with ``--baseline REV``, that git revision's (``git
archive``, nothing checked out). Prints the medians of the read and of ``changes``, and
checks that each found the one true change point.

The history's reader asks its runner for pages of 100 tests (``runner.list``, the API's
page size) and keeps those of the url, so a history of N tests of a page among M stored reads
M tests. A process that imports pagelab pays its imports once (excluded: the timing starts
after a first, small read).

Usage: ``python benchmarks/history.py [--builds 5000] [--runs 5] [--rounds 3]
[--baseline REV]`` from the repository root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
HEAVY, FAST = "http://demo.test/heavy", "http://demo.test/fast"

_SEED = """
import sys, numpy as np
from pathlib import Path
from pagelab.models import Build, Device, LighthouseConfig, Location, Metrics, TestStatus
from pagelab.store import Store, create_test, finish_test, now_ms, transaction
builds, runs, data = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
store = Store(data)
rng = np.random.default_rng(0)
start = now_ms() - builds * runs * 2 * 1000 - 60_000
with store.connection() as conn, transaction(conn):
    for b in range(builds):
        build = Build(commit=f"{b:040x}", branch="main")
        for r in range(runs):
            for k, (url, level) in enumerate(((sys.argv[4], 1000.0), (sys.argv[5], 3000.0))):
                level *= 1.2 if k == 1 and b >= builds // 2 else 1.0
                test = create_test(conn, url=url, device=Device.MOBILE, location=Location.US,
                                   config=LighthouseConfig(), retention=store.retention,
                                   created_at=start + ((b * runs + r) * 2 + k) * 1000,
                                   build=build)
                lcp = level * rng.lognormal(0, 0.03)
                finish_test(conn, test, status=TestStatus.SUCCESS, lighthouse_version="13",
                            metrics=Metrics(largest_contentful_paint=lcp,
                                            first_contentful_paint=lcp / 2),
                            error=None, vantage="local", environment=None)
"""

_READ = """
import json, sys, time
import pagelab
data, url, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
with pagelab.LocalRunner(data) as runner:
    pagelab.history(url, branch="main", runner=runner, limit=10).changes()  # imports, warm
    start = time.perf_counter()
    results = pagelab.history(url, branch="main", runner=runner, limit=limit)
    read = time.perf_counter() - start
    start = time.perf_counter()
    changes = results.changes(metrics=["largest_contentful_paint"])
    found = time.perf_counter() - start
print(json.dumps({"read": read, "changes": found, "runs": len(results.frame),
                  "commits": [str(c) for c in changes["commit"]]}))
"""


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(_ROOT), "archive", rev, "src"],
                             check=True, capture_output=True, timeout=120).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=120)
    return into / "src"


def _python(src: Path, code: str, *args: object) -> str:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--builds", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5, help="runs a build of each page")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pagelab-history-") as tmp:
        root = Path(tmp)
        sources = {"this checkout": _ROOT / "src"}
        if args.baseline:
            (root / "baseline").mkdir()
            sources[f"pagelab@{args.baseline}"] = _extract(args.baseline, root / "baseline")
        data = root / "store"
        started = time.perf_counter()
        _python(_ROOT / "src", _SEED, args.builds, args.runs, data, FAST, HEAVY)
        limit = args.builds * args.runs
        print(f"{args.builds} builds x {args.runs} runs x 2 pages: {2 * limit} tests stored "
              f"in {time.perf_counter() - started:.1f} s; reading {limit} of /heavy, "
              f"{args.rounds} rounds")
        truth = f"{args.builds // 2:040x}"
        timings: dict[str, list[dict[str, object]]] = {name: [] for name in sources}
        for round_ in range(args.rounds):
            order = list(sources) if round_ % 2 == 0 else list(sources)[::-1]
            for name in order:
                timings[name].append(json.loads(_python(sources[name], _READ, data, HEAVY,
                                                        limit)))
        for name, rows in timings.items():
            read = statistics.median(float(str(r["read"])) for r in rows)
            found = statistics.median(float(str(r["changes"])) for r in rows)
            right = all(r["commits"] == [truth] and r["runs"] == limit for r in rows)
            print(f"  {name:<24} read {read:7.2f} s   changes {found:5.2f} s   "
                  f"{'the one true change found' if right else 'WRONG: ' + str(rows[0])}")
        if args.baseline:
            new, old = (statistics.median(float(str(r["read"])) for r in timings[name])
                        for name in sources)
            print(f"  read: this checkout takes {new / old:.2f}x the time of the baseline")


if __name__ == "__main__":
    main()
