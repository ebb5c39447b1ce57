"""``pagelab ttfb``: time to first byte of a URL from each location of a region."""

from __future__ import annotations

import argparse
from typing import Any

from pagelab.catalog import TTFB_REGIONS
from pagelab.models import TTFBResult, TTFBStatus

from ._options import exit_status

__all__ = ["format_ttfb", "register"]


def register(subparsers: Any) -> None:
    ttfb = subparsers.add_parser(
        "ttfb", help="measure TTFB of a URL from a region's locations",
        description="Time to first byte of URL from each location of the region. Exit "
        "status 1 when the probe failed from any location.")
    ttfb.add_argument("url", help="absolute http(s) URL")
    ttfb.add_argument("--region", required=True, metavar="ID",
                      help=f"TTFB region ({', '.join(TTFB_REGIONS)})")
    ttfb.add_argument("--json", action="store_true", help="print the result as JSON")
    ttfb.set_defaults(handler=_ttfb)


def format_ttfb(result: TTFBResult) -> str:
    header = f"{'location':<14}{'status':<9}{'dns':>8}{'tcp':>8}{'tls':>8}{'server':>9}" \
             f"{'ttfb':>9}{'total':>9}  http"
    lines = [f"TTFB of {result.url} from region {result.region} (ms, vantage "
             f"{result.vantage or '?'})", header]
    for loc in result.result:
        if loc.data is not None:
            t = loc.data.timings
            lines.append(
                f"{loc.location_id:<14}{loc.status.value:<9}{t.dns_lookup:>8.1f}"
                f"{t.tcp_connection:>8.1f}{t.tls_handshake:>8.1f}{t.server_processing:>9.1f}"
                f"{t.ttfb:>9.1f}{t.total:>9.1f}  {loc.data.http_version:g} "
                f"{loc.data.http_status}"
            )
        else:
            code = loc.error.code if loc.error else "?"
            lines.append(f"{loc.location_id:<14}{loc.status.value:<9}{code}")
    return "\n".join(lines)


def _ttfb(args: argparse.Namespace) -> int:
    import pagelab

    runner = pagelab.connect()
    try:
        result = runner.ttfb(args.url, args.region)
    finally:
        close = getattr(runner, "close", None)
        if close is not None:
            close()
    print(result.model_dump_json(indent=2) if args.json else format_ttfb(result))
    return exit_status(failed=any(loc.status is TTFBStatus.FAILED for loc in result.result))
