"""Benchmark: ``pagelab serve`` against a bare FastAPI app, driven by wrk, in one run.

Seeds a store per server (``benchmarks/_seed_store.py``, with each server's own schema): a
key with one finished test, and an account with ``--list-tests`` (1M) stored tests. Starts
``pagelab serve --no-worker`` on a free loopback port, the bare app of
``benchmarks/_bare_app.py`` (one uvicorn process, async endpoints doing the same essential
work) on another and, with ``--baseline REV``, the ``pagelab serve`` of that git revision
(``git archive``, nothing checked out) on a third, so before and after are measured side by
side. Then drives them with wrk, interleaved (every scenario runs on every server before
the next; the order alternates each round):

* GET a finished test at c=1 and c=32; POST a test at c=8;
* list page 1 and page 10 000 (per_page 10) of the 1M-test account (c=1, pagelab only);

and reports the idle RSS of each server, req/s, p50/p99 (medians over the rounds), the
ratios to the bare app, the CPU time per request of each pagelab server and of the
PostgreSQL backends serving it (read with psutil: PostgreSQL on this machine), the
issue's targets, and whether the credits charged equal the tests created. Loopback only;
takes about ``rounds x 13 x duration`` seconds plus seeding.

With ``--database postgresql://…`` (an empty database) a ``pagelab serve`` on that team
store is measured beside the SQLite one, and its reads are checked against them.

Usage: ``python benchmarks/api.py [--duration 5] [--rounds 2] [--list-tests 1000000]
[--baseline REV] [--database postgresql://…]`` from the repository root. Needs wrk:
``apt-get install -y wrk`` (Debian/Ubuntu) or ``brew install wrk``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

_ROOT = Path(__file__).resolve().parent.parent
_HERE = Path(__file__).resolve().parent
_SEED_CREDITS = 10_000_000
_POST_BODY = '{"url": "http://127.0.0.1:9/fast", "device": "desktop", "location": "us"}'

_DONE_LUA = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKRESULT %d %d %.0f %.0f %d %d %d %d %d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


@dataclass
class Server:
    """One server under test."""

    name: str
    kind: str  # "pagelab" or "bare"
    src: Path
    data_dir: Path
    port: int = 0
    ids: dict[str, Any] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    idle_rss_mb: float = 0.0
    #: A PostgreSQL team store (None: SQLite in data_dir).
    database: str | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    connections: int
    path: str  # formatted with the server's ids
    key: str  # which seeded key
    kinds: tuple[str, ...] = ("pagelab", "bare")


_SCENARIOS = (
    Scenario("GET a finished test, c=1", "GET", 1, "/v1/lighthouse-tests/{test_id}", "key"),
    Scenario("GET a finished test, c=32", "GET", 32, "/v1/lighthouse-tests/{test_id}", "key"),
    Scenario("POST a test, c=8", "POST", 8, "/v1/lighthouse-tests", "key"),
    Scenario("list page 1, c=1", "GET", 1, "/v1/lighthouse-tests?page=1&per_page=10",
             "list_key", ("pagelab",)),
    Scenario("list page 10000, c=1", "GET", 1,
             "/v1/lighthouse-tests?page=10000&per_page=10", "list_key", ("pagelab",)),
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(src)
    return env


def _seed(server: Server, list_tests: int) -> None:
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, str(_HERE / "_seed_store.py"), str(server.data_dir), str(list_tests),
         *([server.database] if server.database else [])],
        env=_env(server.src), check=True, capture_output=True, text=True, timeout=900,
    ).stdout
    server.ids = json.loads(out.strip().splitlines()[-1])
    print(f"  seeded {server.name}: {list_tests:,} list tests in "
          f"{time.monotonic() - started:.0f} s", flush=True)


def _start(server: Server) -> None:
    server.port = _free_port()
    if server.kind == "bare":
        command = [sys.executable, str(_HERE / "_bare_app.py"),
                   str(server.data_dir / "pagelab.sqlite3"), str(server.port)]
    else:
        command = [sys.executable, "-m", "pagelab", "serve", "--no-worker",
                   "--port", str(server.port), "--data-dir", str(server.data_dir),
                   "--rate-limit", "100000000", "--allow-private-targets",
                   "--log-level", "warning"]
    # The team store's URL (its password) in the environment: `serve` refuses it in argv.
    env = {**_env(server.src),
           **({"PAGELAB_DATABASE_URL": server.database} if server.database else {})}
    server.process = subprocess.Popen(command, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        server.base + f"/v1/lighthouse-tests/{server.ids['test_id']}",
        headers={"X-API-KEY": server.ids["key"]},
    )
    deadline = time.monotonic() + 60
    while True:
        if server.process.poll() is not None:
            stderr = server.process.stderr.read().decode() if server.process.stderr else ""
            raise SystemExit(f"{server.name} exited at start:\n{stderr}")
        try:
            with opener.open(request, timeout=5) as response:
                response.read()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"{server.name} did not answer within 60 s") from None
            time.sleep(0.2)
    for _ in range(20):  # warm up: imports, first queries, the pool
        with opener.open(request, timeout=5) as response:
            response.read()
    time.sleep(1.0)
    server.idle_rss_mb = psutil.Process(server.process.pid).memory_info().rss / 2**20


def _stop(server: Server) -> None:
    if server.process is not None and server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@dataclass(frozen=True)
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    #: CPU time per request (us) of the server process, and of the PostgreSQL backends
    #: serving it (0 on SQLite, or when PostgreSQL runs on another machine).
    cpu_us: float = 0.0
    db_cpu_us: float = 0.0


def _cpu_seconds(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def _backend_cpu(server: Server) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend connected for ``server`` (found by
    its ``application_name``; the backends must run on this machine to be read)."""
    if not server.database:
        return {}
    import psycopg

    with psycopg.connect(server.database, autocommit=True) as conn:
        pids = [row[0] for row in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'pagelab' AND pid <> pg_backend_pid()")]
    return {pid: _cpu_seconds(pid) for pid in pids}


def _wrk(wrk: str, server: Server, scenario: Scenario, duration: int, scripts: Path) -> Run:
    assert server.process is not None
    cpu_before, backends_before = _cpu_seconds(server.process.pid), _backend_cpu(server)
    run = _wrk_only(wrk, server, scenario, duration, scripts)
    cpu = _cpu_seconds(server.process.pid) - cpu_before
    db_cpu = sum(seconds - backends_before.get(pid, 0.0)
                 for pid, seconds in _backend_cpu(server).items())
    requests = max(1.0, run.rps * duration)
    return Run(run.rps, run.p50_ms, run.p99_ms, run.errors, cpu / requests * 1e6,
               db_cpu / requests * 1e6)


def _wrk_only(wrk: str, server: Server, scenario: Scenario, duration: int,
              scripts: Path) -> Run:
    script = scripts / ("post.lua" if scenario.method == "POST" else "get.lua")
    threads = 1 if scenario.connections == 1 else 2
    out = subprocess.run(
        [wrk, f"-t{threads}", f"-c{scenario.connections}", f"-d{duration}s", "--timeout", "5s",
         "-H", f"X-API-KEY: {server.ids[scenario.key]}", "-s", str(script),
         server.base + scenario.path.format(**server.ids)],
        check=True, capture_output=True, text=True, timeout=duration + 60,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRKRESULT"))
    requests, duration_us, p50, p99, *errors = (int(float(v)) for v in line.split()[1:])
    return Run(requests / (duration_us / 1e6), p50 / 1000, p99 / 1000, sum(errors))


def _credit_check(server: Server) -> str:
    if server.database:
        from pagelab.store import Store

        with Store(server.data_dir, database=server.database).connection() as pg:
            return _credits_line(server, pg)
    conn = sqlite3.connect(f"file:{server.data_dir / 'pagelab.sqlite3'}?mode=ro", uri=True)
    try:
        return _credits_line(server, conn)
    finally:
        conn.close()


def _credits_line(server: Server, conn: Any) -> str:
    left = sum(conn.execute(
        "SELECT lighthouse_credits, lighthouse_paid_credits FROM accounts WHERE id = ?",
        (server.ids["account_id"],),
    ).fetchone())
    created = conn.execute(
        "SELECT count(*) FROM tests WHERE account_id = ? AND status = 'idle'",
        (server.ids["account_id"],),
    ).fetchone()[0]
    charged = _SEED_CREDITS - left
    verdict = "equal" if charged == created else "DIFFERENT"
    return f"{server.name}: {charged:,} credits charged, {created:,} tests created: {verdict}"


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(_ROOT), "archive", rev, "src"],
                             check=True, capture_output=True, timeout=120).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=120)
    return into / "src"


def _fmt(values: list[Run]) -> Run:
    return Run(
        statistics.median(r.rps for r in values),
        statistics.median(r.p50_ms for r in values),
        statistics.median(r.p99_ms for r in values),
        sum(r.errors for r in values),
        statistics.median(r.cpu_us for r in values),
        statistics.median(r.db_cpu_us for r in values),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (2)")
    parser.add_argument("--list-tests", type=int, default=1_000_000,
                        help="tests stored in the list account (1000000)")
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure pagelab serve at this git revision (before/after)")
    parser.add_argument("--database", metavar="URL",
                        help="also measure pagelab serve on this (empty) PostgreSQL database")
    args = parser.parse_args(argv)

    wrk = shutil.which("wrk")
    if wrk is None:
        print("wrk not found: install it with `apt-get install -y wrk` (Debian/Ubuntu) "
              "or `brew install wrk` (macOS)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="pagelab-bench-api-") as tmp:
        root = Path(tmp)
        scripts = root / "lua"
        scripts.mkdir()
        (scripts / "get.lua").write_text(_DONE_LUA)
        (scripts / "post.lua").write_text(
            'wrk.method = "POST"\n'
            f"wrk.body = {json.dumps(_POST_BODY)}\n"
            'wrk.headers["Content-Type"] = "application/json"\n' + _DONE_LUA
        )
        servers: list[Server] = []
        if args.baseline:
            (root / "baseline").mkdir()
            servers.append(Server(f"pagelab@{args.baseline}", "pagelab",
                                  _extract(args.baseline, root / "baseline"), root / "d-base"))
        servers.append(Server("pagelab", "pagelab", _ROOT / "src", root / "d-pagelab"))
        if args.database:
            servers.append(Server("pagelab postgresql", "pagelab", _ROOT / "src", root / "d-pg",
                                  database=args.database))
        servers.append(Server("bare app", "bare", _ROOT / "src", root / "d-bare"))
        print("seeding the stores", flush=True)
        for server in servers:
            _seed(server, args.list_tests if server.kind == "pagelab" else 0)
        results: dict[tuple[str, str], list[Run]] = {}
        try:
            for server in servers:
                _start(server)
            for round_index in range(args.rounds):
                print(f"round {round_index + 1}/{args.rounds}", flush=True)
                for scenario in _SCENARIOS:
                    order = [s for s in servers if s.kind in scenario.kinds]
                    if round_index % 2:
                        order.reverse()
                    for server in order:
                        run = _wrk(wrk, server, scenario, args.duration, scripts)
                        results.setdefault((scenario.name, server.name), []).append(run)
            credit_lines = [_credit_check(s) for s in servers if s.kind == "pagelab"]
        finally:
            for server in servers:
                _stop(server)

    bare = next(s for s in servers if s.kind == "bare")
    print(f"\nwrk, {args.rounds} interleaved rounds x {args.duration} s, medians; "
          f"2 wrk threads at c>1; {os.cpu_count()} CPUs shared with wrk; lists of an account "
          f"with {args.list_tests:,} tests, per_page 10")
    header = ["what"]
    for server in servers:
        header += [f"{server.name} req/s", "p50 ms", "p99 ms"]
    header += [f"{s.name} / bare" for s in servers if s.kind == "pagelab"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for scenario in _SCENARIOS:
        cells = [scenario.name]
        summary: dict[str, Run] = {}
        for server in servers:
            runs = results.get((scenario.name, server.name))
            if runs is None:
                cells += ["", "", ""]
                continue
            summary[server.name] = run = _fmt(runs)
            errors = f" ({run.errors} errors)" if run.errors else ""
            cells += [f"{run.rps:,.0f}{errors}", f"{run.p50_ms:.1f}", f"{run.p99_ms:.1f}"]
        for server in servers:
            if server.kind == "pagelab":
                ours, theirs = summary.get(server.name), summary.get(bare.name)
                cells.append(f"{ours.rps / theirs.rps:.2f}" if ours and theirs else "")
        print("| " + " | ".join(cells) + " |")
    rss = ["idle RSS (MB)"]
    for server in servers:
        rss += [f"{server.idle_rss_mb:.0f}", "", ""]
    rss += [""] * sum(s.kind == "pagelab" for s in servers)
    print("| " + " | ".join(rss) + " |")
    print("\nCPU time per request (us, medians): each pagelab server process, and the "
          "PostgreSQL backends serving it")
    measured = [s for s in servers if s.kind == "pagelab"]
    print("| what | " + " | ".join(
        f"{s.name} server" + (f" | {s.name} database" if s.database else "")
        for s in measured) + " |")
    print("|---|" + "---|" * sum(2 if s.database else 1 for s in measured))
    for scenario in _SCENARIOS:
        cells = [scenario.name]
        for server in measured:
            run = _fmt(results[(scenario.name, server.name)])
            cells.append(f"{run.cpu_us:,.0f}")
            if server.database:
                cells.append(f"{run.db_cpu_us:,.0f}")
        print("| " + " | ".join(cells) + " |")
    print()
    for line in credit_lines:
        print(line)

    ours_name = "pagelab"

    def get(name: str, server: str) -> Run:
        return _fmt(results[(name, server)])

    checks = [
        ("GET c=1 >= 0.5x bare (aim 0.7x)",
         get(_SCENARIOS[0].name, ours_name).rps / get(_SCENARIOS[0].name, bare.name).rps >= 0.5),
        ("GET c=32 >= 0.5x bare (aim 0.7x)",
         get(_SCENARIOS[1].name, ours_name).rps / get(_SCENARIOS[1].name, bare.name).rps >= 0.5),
        ("GET c=32 p99 < 60 ms", get(_SCENARIOS[1].name, ours_name).p99_ms < 60),
        ("POST c=8 >= 0.5x bare",
         get(_SCENARIOS[2].name, ours_name).rps / get(_SCENARIOS[2].name, bare.name).rps >= 0.5),
        ("POST c=8 p99 < 100 ms", get(_SCENARIOS[2].name, ours_name).p99_ms < 100),
        ("list page 1 p50 < 10 ms", get(_SCENARIOS[3].name, ours_name).p50_ms < 10),
        ("list page 10000 p50 < 10 ms", get(_SCENARIOS[4].name, ours_name).p50_ms < 10),
        ("idle RSS < 80 MB",
         next(s for s in servers if s.name == ours_name).idle_rss_mb < 80),
        ("credits charged == tests created", all(x.endswith(": equal") for x in credit_lines)),
    ]
    if args.database:
        for index, what in ((0, "GET c=1"), (1, "GET c=32")):
            name = _SCENARIOS[index].name
            checks.append((f"postgresql {what} >= 0.5x SQLite's (issue 26)",
                           get(name, "pagelab postgresql").rps / get(name, ours_name).rps >= 0.5))
    print("\ntargets (issue 11, 26), for pagelab:")
    for label, ok in checks:
        print(f"  {'met    ' if ok else 'NOT MET'}  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
