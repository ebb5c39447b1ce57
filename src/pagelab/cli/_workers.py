"""``pagelab workers``: the fleet's live workers, from their heartbeats in Redis."""

from __future__ import annotations

import argparse
import os
from typing import Any

from pagelab._exceptions import InvalidInputError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    workers = subparsers.add_parser(
        "workers",
        help="list the fleet's live workers (name, locations, current test)",
        description="Read the workers' signed heartbeats on the broker (docs/scale-out.md).",
    )
    workers.add_argument("--broker", metavar="URL", help="default $PAGELAB_BROKER_URL")
    workers.add_argument("--fleet-secret", metavar="SECRET",
                         help="default $PAGELAB_FLEET_SECRET")
    workers.set_defaults(handler=_workers)


def _workers(args: argparse.Namespace) -> int:
    import json
    import time

    import redis

    from pagelab.fleet import (
        BROKER_ENV,
        WORKER_KEY_PREFIX,
        FleetKeys,
        ForgedMessageError,
        check_broker_url,
        resolve_secret,
    )

    broker = args.broker or os.environ.get(BROKER_ENV, "")
    if not broker:
        raise InvalidInputError(f"--broker: required (or ${BROKER_ENV})")
    keys = FleetKeys(resolve_secret(args.fleet_secret))
    client = redis.Redis.from_url(check_broker_url(broker), socket_timeout=10)
    rows: list[tuple[str, str, str, str]] = []
    for key in sorted(client.scan_iter(match=f"{WORKER_KEY_PREFIX}*", count=100)):
        raw = client.get(key)
        if raw is None:
            continue
        try:
            body = keys.open(json.loads(raw))
        except (ValueError, ForgedMessageError):
            continue
        age = max(0.0, time.time() - int(body.get("sent_at", 0)) / 1000)
        rows.append((str(body.get("worker")), ",".join(body.get("locations", [])),
                     str(body.get("current_test") or "-"), f"{age:.0f} s ago"))
    if not rows:
        print("no live workers")
        return 0
    header = ("NAME", "LOCATIONS", "CURRENT TEST", "SEEN")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    return 0
