"""``pagelab worker-key``: the fleet workers' own keys, issued by the server and revocable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError, NotFoundError

from ._database import add_database_option, database_url

if TYPE_CHECKING:
    from pagelab.store import Store

__all__ = ["register"]


def register(subparsers: Any) -> None:
    keys = subparsers.add_parser(
        "worker-key",
        help="issue, list and revoke the keys of fleet workers (`pagelab worker`)",
        description="Each worker signs what it sends with its own key, derived from the "
        "fleet secret, for the locations it serves. Issuing a key again for a name replaces "
        "the old one; revoking it makes the server refuse that worker's messages at once. "
        "Run on the server (needs its data dir and the fleet secret). docs/scale-out.md",
    )
    keys.set_defaults(handler=lambda args: (keys.print_help(), 2)[1])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="store directory (default $PAGELAB_DATA_DIR or the user data dir)")
    add_database_option(common)
    common.add_argument("--fleet-secret-file", type=Path, metavar="PATH",
                        help="file holding the fleet secret (default $PAGELAB_FLEET_SECRET)")
    actions = keys.add_subparsers(dest="worker_key_command", metavar="ACTION")

    issue = actions.add_parser("issue", parents=[common],
                               help="print a new key for a worker (replaces its old one)")
    issue.add_argument("name", help="the worker's name, shown as the reports' vantage")
    issue.add_argument("--locations", required=True, metavar="IDS",
                       help="comma-separated location ids the worker may measure, e.g. "
                       "de,uk,de-central")
    issue.set_defaults(handler=_issue)

    revoke = actions.add_parser("revoke", parents=[common], help="revoke a worker's key")
    revoke.add_argument("name")
    revoke.set_defaults(handler=_revoke)

    listing = actions.add_parser("list", parents=[common], help="list issued worker keys")
    listing.set_defaults(handler=_list)


def _store(args: argparse.Namespace) -> Store:
    """The server's store: --database (or $PAGELAB_DATABASE_URL), else the data dir's."""
    from pagelab.store import Store

    return Store(args.data_dir, database=database_url(args))


def _issue(args: argparse.Namespace) -> int:
    from pagelab.fleet import FleetKeys, resolve_secret
    from pagelab.store import (
        ensure_fleet_tables,
        issue_fleet_worker_key,
        transaction,
    )

    from ._worker import parse_locations

    name = args.name
    if not name or len(name) > 64 or any(c.isspace() or c in ",/" for c in name):
        raise InvalidInputError("name: 1 to 64 characters without spaces, commas or slashes")
    locations = parse_locations(args.locations, "--locations")
    keys = FleetKeys(resolve_secret(file=args.fleet_secret_file))
    with _store(args).connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)
        issued = issue_fleet_worker_key(conn, name, locations)
    print(keys.credential(issued))
    print(f"pagelab: key {issued.generation} of worker {name} for {','.join(locations)} "
          "(any older key of it stops working now); give it to the worker with --key-file "
          "or $PAGELAB_WORKER_KEY", file=sys.stderr)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from pagelab.store import ensure_fleet_tables, revoke_fleet_worker_key, transaction

    with _store(args).connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)
        revoked = revoke_fleet_worker_key(conn, args.name)
    if not revoked:
        raise NotFoundError(f"worker {args.name!r} has no key to revoke")
    print(f"pagelab: revoked the key of worker {args.name}; the server refuses its messages "
          "from now on", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    from pagelab.store import ensure_fleet_tables, list_fleet_worker_keys, transaction

    with _store(args).connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)
        issued = list_fleet_worker_keys(conn)
    if not issued:
        print("no worker keys: issue one with `pagelab worker-key issue NAME --locations ...`")
    for key in issued:
        state = "revoked" if key.revoked_at is not None else "active"
        print(f"{key.name}  key {key.generation}  {','.join(key.locations)}  {state}")
    return 0
