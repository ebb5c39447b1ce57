"""``pagelab worker``: a measuring machine of a fleet (Celery on Redis)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError

from ._database import add_broker_option

__all__ = ["parse_locations", "register"]


def register(subparsers: Any) -> None:
    worker = subparsers.add_parser(
        "worker",
        help="measure tests of a fleet server from this machine (Celery on Redis)",
        description="Consume the queues of LOCATIONS on the broker, run each test on this "
        "machine's engine one at a time, and send the signed outcome and artifacts back to "
        "the server (`pagelab serve --broker`). Needs the broker and the worker's own key "
        "(`pagelab worker-key issue NAME` on the server), never the fleet secret nor the "
        "database. See docs/scale-out.md.",
    )
    add_broker_option(worker, "redis://HOST:PORT/DB or rediss:// (default $PAGELAB_BROKER_URL)")
    worker.add_argument("--key-file", type=Path, metavar="PATH",
                        help="the worker's key, as `pagelab worker-key issue` printed it "
                        "(default $PAGELAB_WORKER_KEY)")
    worker.add_argument("--locations", metavar="IDS",
                        help="comma-separated location ids this machine measures, a part "
                        "of its key's (default: all of the key's): Lighthouse locations "
                        "(GET /v1/locations) and TTFB locations (GET /v1/ttfb-regions)")
    worker.add_argument("--name", help="the key's worker name (checked; the key names it)")
    worker.add_argument("--fleet-secret", help=argparse.SUPPRESS)
    worker.add_argument("--visibility-timeout", type=float, default=None, metavar="S",
                        help="seconds before a task of a lost worker is handed out again "
                        "(default 600; keep it equal on the server)")
    worker.add_argument("--log-level", default="info",
                        choices=("critical", "error", "warning", "info", "debug"))
    worker.set_defaults(handler=_worker)


def _worker(args: argparse.Namespace) -> int:
    import logging

    from pagelab.fleet import (
        DEFAULT_VISIBILITY_TIMEOUT,
        FLEET_SECRET_ENV,
        WORKER_KEY_ENV,
        ForgedMessageError,
        WorkerKeys,
        required_broker,
        run_worker,
    )

    broker = required_broker(args.broker)
    text = _key_text(args, WORKER_KEY_ENV)
    if args.fleet_secret or (os.environ.get(FLEET_SECRET_ENV) and not text):
        raise InvalidInputError(
            "a worker no longer takes the fleet secret: it has its own key. On the server: "
            "`pagelab worker-key issue NAME --locations de,uk`, then give the worker that "
            f"key with --key-file or ${WORKER_KEY_ENV} (docs/scale-out.md)"
        )
    if not text:
        raise InvalidInputError(f"--key-file: required (or ${WORKER_KEY_ENV}); the server "
                                "issues it: `pagelab worker-key issue NAME --locations ...`")
    try:
        keys = WorkerKeys(text)
    except ForgedMessageError as exc:
        raise InvalidInputError(f"--key-file: {exc}") from None
    if args.name and args.name != keys.name:
        raise InvalidInputError(f"--name: the key is {keys.name!r}'s, not {args.name!r}'s")
    locations = (
        parse_locations(args.locations, "--locations") if args.locations else None
    )
    timeout = args.visibility_timeout or DEFAULT_VISIBILITY_TIMEOUT
    if timeout <= 0:
        raise InvalidInputError("--visibility-timeout: must be positive")
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_worker(broker, keys, locations=locations, visibility_timeout=timeout,
               log_level=args.log_level)
    return 0


def _key_text(args: argparse.Namespace, env: str) -> str:
    if args.key_file is not None:
        try:
            return str(args.key_file.read_text()).strip()
        except OSError as exc:
            raise InvalidInputError(f"--key-file: {exc.strerror}: {args.key_file}") from None
    return os.environ.get(env, "").strip()


def parse_locations(text: str, option: str) -> list[str]:
    """Comma-separated location ids (Lighthouse and TTFB ones), each known."""
    from pagelab.catalog import LOCATIONS, TTFB_REGIONS

    locations = [item.strip() for item in text.split(",") if item.strip()]
    known = {str(getattr(loc, "value", loc)) for loc in LOCATIONS} | {
        loc.id for region in TTFB_REGIONS.values() for loc in region.locations
    }
    unknown = [loc for loc in locations if loc not in known]
    if not locations or unknown:
        raise InvalidInputError(
            f"{option}: unknown location(s) {', '.join(unknown) or '(none given)'} "
            "(see GET /v1/locations and GET /v1/ttfb-regions)"
        )
    return locations
