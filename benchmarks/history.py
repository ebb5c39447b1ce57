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

With ``--api`` the same history is also read through the HTTP API (an ``ApiRunner``) from a
``pagelab serve`` on SQLite and, with ``--database postgresql://…`` (an empty database), from
one on that team store: each seeded alike, under an account of its own, and read in the same
interleaved rounds. (``--database`` alone implies ``--api``.) The team store is analyzed after
seeding, as autovacuum does within a minute of a bulk load (and ``pagelab store migrate`` at
once): before that, PostgreSQL plans each page as a scan and sort of the account's whole
history.

Usage: ``python benchmarks/history.py [--builds 5000] [--runs 5] [--rounds 3]
[--baseline REV] [--api] [--database postgresql://…]`` from the repository root.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
HEAVY, FAST = "http://demo.test/heavy", "http://demo.test/fast"

_SEED = """
import json, sys, numpy as np
from pathlib import Path
from pagelab.models import Build, Device, LighthouseConfig, Location, Metrics, TestStatus
from pagelab.store import Store, create_account, create_test, finish_test, now_ms, transaction
builds, runs, data = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
# For a server: a database URL ('' for SQLite in data) and an account of its own.
served, database = len(sys.argv) > 6, (sys.argv[6] if len(sys.argv) > 6 else '') or None
store = Store(data, database=database)
rng = np.random.default_rng(0)
start = now_ms() - builds * runs * 2 * 1000 - 60_000
key, owner = None, {}
with store.connection() as conn, transaction(conn):
    if served:
        account, key = create_account(conn, lighthouse_credits=0, ttfb_credits=0)
        owner = {"account_id": account.id}
    for b in range(builds):
        build = Build(commit=f"{b:040x}", branch="main")
        for r in range(runs):
            for k, (url, level) in enumerate(((sys.argv[4], 1000.0), (sys.argv[5], 3000.0))):
                level *= 1.2 if k == 1 and b >= builds // 2 else 1.0
                test = create_test(conn, url=url, device=Device.MOBILE, location=Location.US,
                                   config=LighthouseConfig(), retention=store.retention,
                                   created_at=start + ((b * runs + r) * 2 + k) * 1000,
                                   build=build, **owner)
                lcp = level * rng.lognormal(0, 0.03)
                finish_test(conn, test, status=TestStatus.SUCCESS, lighthouse_version="13",
                            metrics=Metrics(largest_contentful_paint=lcp,
                                            first_contentful_paint=lcp / 2),
                            error=None, vantage="local", environment=None)
if store.is_postgres:  # what autovacuum does within a minute, and store migrate at once
    with store.connection() as conn:
        conn.execute("ANALYZE")
print(json.dumps({"key": key}))
"""

_READ = """
import json, sys, time
import pagelab
data, url, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
# A server's base URL and key, or the LocalRunner's data dir.
served = len(sys.argv) > 4
with (pagelab.ApiRunner(data, sys.argv[4]) if served else pagelab.LocalRunner(data)) as runner:
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serve(src: Path, data: Path, database: str | None) -> Iterator[str]:
    """``pagelab serve`` (no worker, no rate limit) of ``src`` on a free port: its base URL."""
    port = _free_port()
    # The team store's URL (its password) in the environment: `serve` refuses it in argv.
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin",
           **({"PAGELAB_DATABASE_URL": database} if database else {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "pagelab", "serve", "--no-worker", "--port", str(port),
         "--data-dir", str(data), "--rate-limit", "100000000", "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                stderr = process.stderr.read().decode() if process.stderr else ""
                raise SystemExit(f"pagelab serve exited at start:\n{stderr}")
            try:
                with opener.open(f"{base}/healthz", timeout=5) as response:
                    response.read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("pagelab serve did not answer within 60 s") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


#: How each reader reads: in process from the store, or through a server.
LOCAL, SQLITE_API, POSTGRES_API = "LocalRunner", "API, SQLite", "API, PostgreSQL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--builds", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5, help="runs a build of each page")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    parser.add_argument("--api", action="store_true",
                        help="also read through pagelab serve on SQLite")
    parser.add_argument("--database", metavar="URL",
                        help="also read through pagelab serve on this (empty) PostgreSQL "
                             "database")
    args = parser.parse_args()
    readers = [LOCAL, *([SQLITE_API] if args.api or args.database else []),
               *([POSTGRES_API] if args.database else [])]
    with tempfile.TemporaryDirectory(prefix="pagelab-history-") as tmp, \
            contextlib.ExitStack() as servers:
        root = Path(tmp)
        sources = {"this checkout": _ROOT / "src"}
        if args.baseline:
            (root / "baseline").mkdir()
            sources[f"pagelab@{args.baseline}"] = _extract(args.baseline, root / "baseline")
        limit = args.builds * args.runs
        # Where each (source, reader) reads: the LocalRunner's data dir, or a server's base
        # URL and key. One store per reader, seeded by this checkout (a baseline's server
        # reads the same store; a server migrates an older schema at start).
        stores: dict[str, tuple[Path, str | None]] = {
            LOCAL: (root / "store", None), SQLITE_API: (root / "served", ""),
            POSTGRES_API: (root / "served-pg", args.database)}
        keys: dict[str, str | None] = {}
        for reader in readers:
            data, database = stores[reader]
            started = time.perf_counter()
            seeded = _python(_ROOT / "src", _SEED, args.builds, args.runs, data, FAST, HEAVY,
                             *([] if database is None else [database]))
            keys[reader] = json.loads(seeded.strip().splitlines()[-1])["key"]
            print(f"{reader}: {args.builds} builds x {args.runs} runs x 2 pages, "
                  f"{2 * limit} tests stored in {time.perf_counter() - started:.1f} s")
        where: dict[tuple[str, str], list[object]] = {}
        for name, src in sources.items():
            for reader in readers:
                data, database = stores[reader]
                if reader == LOCAL:
                    where[name, reader] = [data]
                else:
                    base = servers.enter_context(_serve(src, data, database or None))
                    where[name, reader] = [base, keys[reader]]
        print(f"reading {limit} tests of /heavy, {args.rounds} rounds")
        truth = f"{args.builds // 2:040x}"
        timings: dict[tuple[str, str], list[dict[str, object]]] = {k: [] for k in where}
        for round_ in range(args.rounds):
            order = list(where) if round_ % 2 == 0 else list(where)[::-1]
            for name, reader in order:
                timings[name, reader].append(json.loads(_python(
                    sources[name], _READ, where[name, reader][0], HEAVY, limit,
                    *where[name, reader][1:])))
        reads: dict[tuple[str, str], float] = {}
        for (name, reader), rows in timings.items():
            reads[name, reader] = read = statistics.median(float(str(r["read"])) for r in rows)
            found = statistics.median(float(str(r["changes"])) for r in rows)
            right = all(r["commits"] == [truth] and r["runs"] == limit for r in rows)
            print(f"  {name:<24} {reader:<16} read {read:7.2f} s   changes {found:5.2f} s   "
                  f"{'the one true change found' if right else 'WRONG: ' + str(rows[0])}")
        for reader in readers:
            if args.baseline:
                new, old = (reads[name, reader] for name in sources)
                print(f"  {reader}: this checkout's read takes {new / old:.2f}x the time of "
                      "the baseline's")
        if POSTGRES_API in readers:
            ratio = reads["this checkout", POSTGRES_API] / reads["this checkout", SQLITE_API]
            print(f"  this checkout: a read through the API takes {ratio:.2f}x the time on "
                  "PostgreSQL that it takes on SQLite")


if __name__ == "__main__":
    main()
