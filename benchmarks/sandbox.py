"""Chromium's sandbox and the metrics: the engine as it runs now (sandboxed, as the browser's
unprivileged user when run as root) against the old way (root, ``--no-sandbox``),
interleaved on the demo pages, one warm engine each.

    .venv/bin/python benchmarks/sandbox.py -n 5 --pages fast heavy

Seconds a run are counted from the moment the engine lock is held (another job's runs on
the machine do not count). Needs root for the "old way" side (``PAGELAB_BROWSER_USER=root``);
as another user that side is Chromium with ``--no-sandbox`` as the same user.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
_METRICS = ("first_contentful_paint", "largest_contentful_paint", "speed_index",
            "total_blocking_time", "performance_score")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=5, help="runs per side and page (default 5)")
    parser.add_argument("--pages", nargs="+", default=["fast", "heavy"])
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine

    root = os.geteuid() == 0
    with DemoServer() as site:
        sandboxed = Engine()
        # The old way: as root, Chromium as root with --no-sandbox; else --no-sandbox.
        old = Engine() if root else Engine(chromium_flags=("--no-sandbox",))
        sides: dict[str, Engine] = {"sandboxed": sandboxed, "no-sandbox": old}
        try:
            for name, engine in sides.items():  # warm-ups; the browser user is chosen here
                if name == "no-sandbox" and root:
                    os.environ["PAGELAB_BROWSER_USER"] = "root"
                try:
                    engine.run(site.page_url(args.pages[0]), "mobile")
                finally:
                    os.environ.pop("PAGELAB_BROWSER_USER", None)
            for name, engine in sides.items():
                browser = engine._processes.browser
                status = browser.sandbox if browser else None
                print(f"{name:<10} Chromium as {status.user if status else '?'}, "
                      f"sandbox {'on' if status and status.sandboxed else 'off'}")
            print(f"{args.n} runs a side and page, interleaved, device mobile, "
                  f"{os.cpu_count()} cores")
            for page in args.pages:
                url = site.page_url(page)
                results: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
                for index in range(args.n):
                    order = list(sides) if index % 2 == 0 else list(reversed(sides))
                    for name in order:
                        started: list[float] = []

                        def mark(into: list[float] = started) -> None:
                            into.append(time.monotonic())

                        result = sides[name].run(url, "mobile", on_start=mark)
                        seconds = time.monotonic() - started[0]
                        if result.status != "success" or result.metrics is None:
                            raise RuntimeError(f"{name} run failed: {result.error}")
                        row = {m: getattr(result.metrics, m) for m in _METRICS}
                        row["seconds"] = seconds
                        results[name].append(row)
                print(f"\nPage {page}: medians")
                print(f"  {'':<26}{'sandboxed':>12}{'no-sandbox':>12}{'diff':>9}")
                for metric in (*_METRICS, "seconds"):
                    a = statistics.median(r[metric] for r in results["sandboxed"])
                    b = statistics.median(r[metric] for r in results["no-sandbox"])
                    diff = f"{(a - b) / b * 100:+7.1f} %" if b else "      -"
                    print(f"  {metric:<26}{a:12.1f}{b:12.1f}{diff:>9}")
        finally:
            for engine in sides.values():
                engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
