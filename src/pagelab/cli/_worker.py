"""``pagelab worker``: a measuring machine of a fleet (Celery on Redis)."""

from __future__ import annotations

import argparse
import os
import socket
from typing import Any

from pagelab._exceptions import InvalidInputError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    worker = subparsers.add_parser(
        "worker",
        help="measure tests of a fleet server from this machine (Celery on Redis)",
        description="Consume the queues of LOCATIONS on the broker, run each test on this "
        "machine's engine one at a time, and send the signed outcome and artifacts back to "
        "the server (`pagelab serve --broker`). Needs the broker and the fleet secret, "
        "never the database. See docs/scale-out.md.",
    )
    worker.add_argument("--broker", metavar="URL",
                        help="redis://HOST:PORT/DB or rediss:// (default $PAGELAB_BROKER_URL)")
    worker.add_argument("--locations", required=True, metavar="IDS",
                        help="comma-separated location ids this machine measures: "
                        "Lighthouse locations (GET /v1/locations) and TTFB locations "
                        "(GET /v1/ttfb-regions), e.g. de,uk,de-central,uk-south")
    worker.add_argument("--name", default=socket.gethostname(),
                        help="the worker's name, shown as the reports' vantage "
                        "(default: the host name)")
    worker.add_argument("--fleet-secret", metavar="SECRET",
                        help="the shared secret (default $PAGELAB_FLEET_SECRET)")
    worker.add_argument("--visibility-timeout", type=float, default=None, metavar="S",
                        help="seconds before a task of a lost worker is handed out again "
                        "(default 600; keep it equal on the server)")
    worker.add_argument("--log-level", default="info",
                        choices=("critical", "error", "warning", "info", "debug"))
    worker.set_defaults(handler=_worker)


def _worker(args: argparse.Namespace) -> int:
    import logging

    from pagelab.catalog import LOCATIONS, TTFB_REGIONS
    from pagelab.fleet import (
        BROKER_ENV,
        DEFAULT_VISIBILITY_TIMEOUT,
        check_broker_url,
        resolve_secret,
        run_worker,
    )

    broker = args.broker or os.environ.get(BROKER_ENV, "")
    if not broker:
        raise InvalidInputError(f"--broker: required (or ${BROKER_ENV})")
    check_broker_url(broker)
    secret = resolve_secret(args.fleet_secret)
    locations = [item.strip() for item in args.locations.split(",") if item.strip()]
    known = {str(getattr(loc, "value", loc)) for loc in LOCATIONS} | {
        loc.id for region in TTFB_REGIONS.values() for loc in region.locations
    }
    unknown = [loc for loc in locations if loc not in known]
    if not locations or unknown:
        raise InvalidInputError(
            f"--locations: unknown location(s) {', '.join(unknown) or '(none given)'} "
            "(see GET /v1/locations and GET /v1/ttfb-regions)"
        )
    if not args.name or len(args.name) > 64 or any(c.isspace() for c in args.name):
        raise InvalidInputError("--name: 1 to 64 characters without spaces")
    timeout = args.visibility_timeout or DEFAULT_VISIBILITY_TIMEOUT
    if timeout <= 0:
        raise InvalidInputError("--visibility-timeout: must be positive")
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_worker(broker, secret, name=args.name, locations=locations,
               visibility_timeout=timeout, log_level=args.log_level)
    return 0
