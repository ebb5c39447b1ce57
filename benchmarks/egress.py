"""The egress proxy and the metrics: guarded runs (every connection of the browser through
the engine's SOCKS5 proxy, which resolves, checks and pins) against unguarded runs (no
proxy), interleaved on the demo pages, one warm engine each.

    .venv/bin/python benchmarks/egress.py -n 5 --pages fast heavy --throttling simulated applied

The guarded side's policy re-opens loopback (``127.0.0.0/8``), so the demo pages load; the
proxy is on exactly as in a server that allows them. ``--throttling applied`` runs Chromium's
own (DevTools) throttling, which delays requests above the network stack the proxy sits in,
``simulated`` is Lighthouse's default. Prints medians, ranges and seconds a run (counted from
the moment the engine lock is held); see docs/security.md, "Egress proxy", for the figures.
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
    from pagelab.engine import Engine, TargetPolicy
    from pagelab.models import LighthouseConfig


def runs_of(engine: Engine, config: LighthouseConfig, policy: TargetPolicy | None) -> Run:
    return lambda url, mark: engine.run(url, "mobile", config, on_start=mark,
                                        target_policy=policy)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=5, help="runs per side and page (default 5)")
    parser.add_argument("--pages", nargs="+", default=["fast", "heavy"])
    parser.add_argument("--throttling", nargs="+", default=["simulated"],
                        choices=["simulated", "applied"])
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine, TargetPolicy, parse_networks
    from pagelab.models import LighthouseConfig, ThrottlingMethod

    policy = TargetPolicy(allowed=parse_networks(["127.0.0.0/8"]))
    with DemoServer() as site, Engine() as proxied, Engine() as direct:
        print(f"{args.n} runs a side and page, interleaved, device mobile, "
              f"{os.cpu_count()} cores")
        for throttling in args.throttling:
            config = LighthouseConfig(throttling_method=ThrottlingMethod(throttling))
            sides = {"proxy": runs_of(proxied, config, policy),
                     "no proxy": runs_of(direct, config, None)}
            urls = {page: site.page_url(page) for page in args.pages}
            print(f"\n== throttling {throttling}")
            compare(sides, urls, args.n)
            egress = proxied._processes.egress
            assert egress is not None, "the guarded side ran without the proxy"
            print(f"  (the proxy relayed {egress.connections} connections so far)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
