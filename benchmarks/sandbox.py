"""Chromium's sandbox and the metrics: the engine as it runs now (sandboxed, as the browser's
unprivileged user when run as root) against the old way (root, ``--no-sandbox``),
interleaved on the demo pages, one warm engine each (``_interleaved.py``).

    .venv/bin/python benchmarks/sandbox.py -n 5 --pages fast heavy

Needs root for the "old way" side (``PAGELAB_BROWSER_USER=root``);
as another user that side is Chromium with ``--no-sandbox`` as the same user.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _interleaved import Run, compare  # noqa: E402

if TYPE_CHECKING:
    from pagelab.engine import Engine


def runs_of(engine: Engine) -> Run:
    return lambda url, mark: engine.run(url, "mobile", on_start=mark)


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
            compare({name: runs_of(engine) for name, engine in sides.items()},
                    {page: site.page_url(page) for page in args.pages}, args.n)
        finally:
            for engine in sides.values():
                engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
