"""Options that take a connection URL: ``--database`` (``pagelab serve``, ``keys``,
``worker-key``, ``workers``), ``--broker`` and ``store migrate --to``.

A URL holding a password is refused on the command line: every local user, Chromium's
sandbox user included, reads a process's arguments in ``/proc/PID/cmdline`` (and ``ps``).
The environment (``$PAGELAB_DATABASE_URL``, ``$PAGELAB_BROKER_URL``, e.g. from a systemd
``EnvironmentFile``) is the way to give one; docs/security.md, "Credentials".
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from pagelab._url_secrets import url_has_password
from pagelab.fleet import BROKER_ENV
from pagelab.store import DATABASE_URL_ENV

__all__ = [
    "add_broker_option",
    "add_database_option",
    "database_argument",
    "database_url",
    "without_password",
]

#: Where else a PostgreSQL password may live: libpq reads it there for a URL without one.
_PGPASS_HINT = " (or keep the password in ~/.pgpass)"


def without_password(env: str, hint: str = "") -> Callable[[str], str]:
    """An argparse ``type``: the URL as given, or an error naming ``$env`` (never echoing
    the URL) when it holds a password."""

    def check(text: str) -> str:
        if url_has_password(text):
            raise argparse.ArgumentTypeError(
                "a password on the command line is visible to every local user (ps, "
                f"/proc/PID/cmdline): give this URL in ${env} instead{hint}; "
                "docs/security.md, \"Credentials\""
            )
        return text

    return check


#: The ``type`` of every option taking a PostgreSQL URL.
database_argument = without_password(DATABASE_URL_ENV, _PGPASS_HINT)


def add_database_option(parser: Any) -> None:
    parser.add_argument(
        "--database", metavar="URL", type=database_argument,
        help="sqlite:///DIR (the default: the SQLite store in DIR, as --data-dir) or "
        "postgresql://USER@HOST/DBNAME, a team store several servers share "
        f"(default ${DATABASE_URL_ENV}; docs/deployment.md). A URL with a password is "
        f"refused here (any local user reads the command line): give it in ${DATABASE_URL_ENV}",
    )


def database_url(args: argparse.Namespace) -> str | None:
    """``--database``, else ``$PAGELAB_DATABASE_URL``, else None (SQLite in the data dir)."""
    return getattr(args, "database", None) or os.environ.get(DATABASE_URL_ENV) or None


def add_broker_option(parser: Any, help: str) -> None:
    """``--broker URL`` (``$PAGELAB_BROKER_URL`` by default); a password refused."""
    parser.add_argument("--broker", metavar="URL", type=without_password(BROKER_ENV),
                        help=f"{help}. A URL with a password is refused here: give it in "
                        f"${BROKER_ENV}")
