"""``pagelab store migrate``: move a SQLite store into a PostgreSQL team store."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.store import DATABASE_URL_ENV

from ._database import database_argument

__all__ = ["register"]


def register(subparsers: Any) -> None:
    store = subparsers.add_parser(
        "store", help="move a store: SQLite to a PostgreSQL team store",
        description="Copy a store into another (docs/deployment.md, \"A team store\").",
    )
    store.set_defaults(handler=lambda args: (store.print_help(), 2)[1])
    actions = store.add_subparsers(dest="store_command", metavar="ACTION")
    migrate = actions.add_parser(
        "migrate", help="copy accounts, keys, tests, batches and artifacts (resumable)",
        description="Copy every account, key, batch, test, credit charge and artifact of a "
        "SQLite store into a PostgreSQL database, chunk by chunk; run it again to resume an "
        "interrupted copy. The source is only read. Every table's count is checked at the "
        "end. Stop the servers of the source first, so nothing is written meanwhile.",
    )
    migrate.add_argument("--from", dest="source", required=True, metavar="URL",
                         help="sqlite:///DIR, the data dir of the store to copy")
    migrate.add_argument("--to", dest="target", metavar="URL", type=database_argument,
                         help=f"postgresql://USER@HOST/DBNAME (default ${DATABASE_URL_ENV}, "
                         "the way to give a URL with a password)")
    migrate.add_argument("--artifacts-dir", metavar="DIR",
                         help="write artifacts to this shared directory instead of the database")
    migrate.set_defaults(handler=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    from pagelab.store import Store, copy_store, parse_database_url

    if parse_database_url(args.source)[0] != "sqlite":
        raise InvalidInputError("--from: give sqlite:///DIR (the store to copy)")
    target_url = args.target or os.environ.get(DATABASE_URL_ENV, "")
    if not target_url or parse_database_url(target_url)[0] != "postgresql":
        raise InvalidInputError(f"--to: give postgresql://USER@HOST/DBNAME, or the URL in "
                                f"${DATABASE_URL_ENV} when it holds a password")
    source = Store(database=args.source)
    if not source.db_path.exists():
        raise InvalidInputError(f"--from: no store at {source.data_dir}")
    target = Store(database=target_url, artifacts_dir=args.artifacts_dir)
    shown: dict[str, int] = {}

    def progress(table: str, copied: int) -> None:
        if copied - shown.get(table, 0) >= 10_000:
            shown[table] = copied
            print(f"pagelab: {table}: {copied:,} rows copied", file=sys.stderr)

    counts = copy_store(source, target, progress=progress)
    for count in counts:
        print(f"{count.table:<15} {count.source:>10,} -> {count.target:>10,}  ok")
    return 0
