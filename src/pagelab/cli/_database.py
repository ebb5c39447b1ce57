"""``--database URL``: which store ``pagelab serve`` and ``pagelab keys`` use."""

from __future__ import annotations

import argparse
import os
from typing import Any

from pagelab.store import DATABASE_URL_ENV

__all__ = ["add_database_option", "database_url"]


def add_database_option(parser: Any) -> None:
    parser.add_argument(
        "--database", metavar="URL",
        help="sqlite:///DIR (the default: the SQLite store in DIR, as --data-dir) or "
        "postgresql://USER:PASSWORD@HOST/DBNAME, a team store several servers share "
        f"(default ${DATABASE_URL_ENV}; docs/deployment.md)",
    )


def database_url(args: argparse.Namespace) -> str | None:
    """``--database``, else ``$PAGELAB_DATABASE_URL``, else None (SQLite in the data dir)."""
    return getattr(args, "database", None) or os.environ.get(DATABASE_URL_ENV) or None
