"""``pagelab workers``: the fleet's live workers, from their heartbeats in Redis."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError

from ._database import add_broker_option, add_database_option, database_url

__all__ = ["register"]


def register(subparsers: Any) -> None:
    workers = subparsers.add_parser(
        "workers",
        help="list the fleet's live workers (name, locations, current test)",
        description="Read the workers' signed heartbeats on the broker (docs/scale-out.md).",
    )
    add_broker_option(workers, "default $PAGELAB_BROKER_URL")
    workers.add_argument("--fleet-secret-file", type=Path, metavar="PATH",
                         help="file holding the fleet secret (default $PAGELAB_FLEET_SECRET)")
    workers.add_argument("--data-dir", type=Path, metavar="DIR",
                         help="the server's store, which knows the issued worker keys "
                         "(default $PAGELAB_DATA_DIR or the user data dir)")
    add_database_option(workers)
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
    from pagelab.store import Store, ensure_fleet_tables, fleet_worker_key, transaction

    broker = args.broker or os.environ.get(BROKER_ENV, "")
    if not broker:
        raise InvalidInputError(f"--broker: required (or ${BROKER_ENV})")
    keys = FleetKeys(resolve_secret(file=args.fleet_secret_file))
    store = Store(args.data_dir, database=database_url(args))
    with store.connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)
    client = redis.Redis.from_url(check_broker_url(broker), socket_timeout=10)
    rows: list[tuple[str, str, str, str]] = []
    for key in sorted(client.scan_iter(match=f"{WORKER_KEY_PREFIX}*", count=100)):
        raw = client.get(key)
        if raw is None:
            continue
        try:
            with store.connection() as conn:
                body, _ = keys.open_from_worker(
                    json.loads(raw), lambda name: fleet_worker_key(conn, name),
                    max_age_s=60,
                )
        except (ValueError, ForgedMessageError):  # unsigned, revoked or stale: not live
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
