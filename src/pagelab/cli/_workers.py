"""``pagelab workers``: the fleet's live workers, from their heartbeats in Redis."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    import time

    import redis

    from pagelab.fleet import FleetKeys, fleet_settings, live_workers, required_broker
    from pagelab.store import Store, ensure_fleet_tables, fleet_worker_key, transaction

    fleet = fleet_settings(required_broker(args.broker), secret_file=args.fleet_secret_file)
    store = Store(args.data_dir, database=database_url(args))
    with store.connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)

    def worker_key(name: str) -> Any:
        with store.connection() as conn:
            return fleet_worker_key(conn, name)

    client = redis.Redis.from_url(fleet.broker_url, socket_timeout=10)
    rows = [
        (str(worker["name"]), ",".join(worker["locations"]),
         str(worker["current_test"] or "-"),
         f"{max(0.0, time.time() - int(worker['last_seen'] or 0) / 1000):.0f} s ago")
        for worker in live_workers(client, FleetKeys(fleet.secret), worker_key)
    ]
    if not rows:
        print("no live workers")
        return 0
    header = ("NAME", "LOCATIONS", "CURRENT TEST", "SEEN")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    return 0
