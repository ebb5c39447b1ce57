"""The quiet window (``PAGELAB_QUIET_WINDOW_MS``): Lighthouse's own waits (1000 ms after the
first paint and after load, and for a quiet network and main thread) against a shorter
window, on the demo pages, interleaved on one warm engine (``_interleaved.py``).

    .venv/bin/python benchmarks/quiet_window.py -n 5 --window 250 --pages fast heavy lean shift
    .venv/bin/python benchmarks/quiet_window.py -n 5 --baseline 250 --window 50

Prints per page the medians (range) of both sides and seconds a run: what the shorter
window saves, and whether it changes what the pages measure (``/shift`` shows its banner
500 ms after load and paint, a layout shift the window must not end before).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _interleaved import Run, compare  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=5, help="runs per side and page (default 5)")
    parser.add_argument("--window", type=int, default=250,
                        help="the shorter side's quiet window, ms (default 250)")
    parser.add_argument("--baseline", type=int, default=None,
                        help="the other side's quiet window, ms (default: Lighthouse's 1000)")
    parser.add_argument("--device", default="desktop")
    parser.add_argument("--pages", nargs="+", default=["fast", "heavy", "lean", "shift"])
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab.demo import DemoServer
    from pagelab.engine import QUIET_WINDOW_VARIABLE, Engine

    def side(window: int | None) -> Run:
        def run(url: str, mark: Callable[[], None]) -> Any:
            os.environ.pop(QUIET_WINDOW_VARIABLE, None)
            if window is not None:
                os.environ[QUIET_WINDOW_VARIABLE] = str(window)
            try:
                return engine.run(url, args.device, on_start=mark)
            finally:
                os.environ.pop(QUIET_WINDOW_VARIABLE, None)
        return run

    default = "Lighthouse's 1000 ms" if args.baseline is None else f"{args.baseline} ms"
    short = f"{args.window} ms"
    print(f"{args.n} runs a side and page, interleaved, device {args.device}, "
          f"{os.cpu_count()} cores")
    with DemoServer() as site, Engine() as engine:
        rows = compare({default: side(args.baseline), short: side(args.window)},
                       {page: site.page_url(page) for page in args.pages}, args.n)
    print(f"\nSeconds a run (median): {default} against {short}")
    for page, results in rows.items():
        slow, fast = (statistics.median(r["seconds"] for r in results[name])
                      for name in (default, short))
        print(f"  {page:<10}{slow:6.2f} s{fast:8.2f} s   {slow / fast:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
