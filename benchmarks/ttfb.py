"""Benchmark: pagelab's TTFB probe against the curl CLI on the same loopback server.

Starts the fixture server of ``tests/fixtures_http.py`` on 127.0.0.1, then runs N probes
of ``/delay/<ms>`` with :func:`pagelab.engine._ttfb.probe` and N with ``curl -w``,
interleaved (the order alternates every round, so neither tool always goes first), and
prints the medians of ttfb, server_processing and total side by side. Both read libcurl's
own timers, so the difference measures the probe's setup, not Python's speed.

Usage: ``python benchmarks/ttfb.py [-n 30] [--delay-ms 200]`` from the repository root.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_FIELDS = ("ttfb", "server_processing", "total")
_CURL_FORMAT = (
    "%{time_namelookup} %{time_connect} %{time_appconnect} "
    "%{time_pretransfer} %{time_starttransfer} %{time_total}"
)


def _curl_probe(curl: str, url: str) -> dict[str, float]:
    """One ``curl`` run; its times are cumulative seconds, converted like the probe's."""
    out = subprocess.run(
        [curl, "-s", "-o", "/dev/null", "--noproxy", "*", "-w", _CURL_FORMAT, url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    _lookup, _connect, _app, pretransfer, starttransfer, total = (
        float(v) * 1000 for v in out.split()
    )
    return {
        "ttfb": starttransfer,
        "server_processing": starttransfer - pretransfer,
        "total": total,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=30, help="probes per tool (default 30)")
    parser.add_argument("--delay-ms", type=int, default=200, help="server delay (default 200)")
    args = parser.parse_args(argv)

    # The fixture server lives with the tests; the package may not be installed.
    sys.path[:0] = [str(_ROOT / "src"), str(_ROOT / "tests")]
    import pycurl

    from fixtures_http import FixtureServer
    from pagelab.engine._ttfb import probe

    curl = shutil.which("curl")
    if curl is None:
        print("curl CLI not found", file=sys.stderr)
        return 2

    ours: dict[str, list[float]] = {f: [] for f in _FIELDS}
    theirs: dict[str, list[float]] = {f: [] for f in _FIELDS}

    def run_ours(url: str) -> None:
        data, error = probe(url)
        if data is None:
            raise SystemExit(f"probe failed: {error}")
        timings = data.timings.model_dump()
        for field in _FIELDS:
            ours[field].append(timings[field])

    def run_curl(url: str) -> None:
        for field, value in _curl_probe(curl, url).items():
            theirs[field].append(value)

    with FixtureServer() as server:
        url = server.url(f"/delay/{args.delay_ms}")
        run_ours(url)  # warm-up: first-call costs (imports, TLS libraries) are not measured
        for values in ours.values():
            values.clear()
        for i in range(args.n):
            first, second = (run_ours, run_curl) if i % 2 == 0 else (run_curl, run_ours)
            first(url)
            second(url)

    version = subprocess.run([curl, "--version"], capture_output=True, text=True).stdout
    print(f"{args.n} probes each of {url} (server delay {args.delay_ms} ms), medians in ms")
    print(f"pagelab: {pycurl.version}")
    print(f"curl:    {version.splitlines()[0]}")
    print(f"{'':<18} {'pagelab':>10} {'curl CLI':>10} {'diff':>8}")
    worst = 0.0
    for field in _FIELDS:
        a, b = statistics.median(ours[field]), statistics.median(theirs[field])
        worst = max(worst, abs(a - b))
        print(f"{field:<18} {a:>10.3f} {b:>10.3f} {a - b:>+8.3f}")
    verdict = "within" if worst <= 2 else "OUTSIDE"
    print(f"largest |diff| {worst:.3f} ms: {verdict} the 2 ms target")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
