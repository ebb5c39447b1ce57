"""The secret that signs hosted report links: kept out of the database.

A copy of the database (a backup, a support bundle) must not let anyone forge report
links, so the secret lives in its own file, ``<data dir>/report-links.key`` (0600, one
hex secret per line), or in ``$PAGELAB_REPORT_LINK_SECRET``. The first secret signs new
links; every listed one verifies, so a rotation can keep the previous secret for a while
(``pagelab keys rotate-link-secret``) or drop it at once (``--drop-previous``: every link
handed out so far stops working, which is what a leaked secret calls for).

A PostgreSQL store is the exception: its servers run on several machines and must all
verify every link, so the secrets are kept in the database (``service_secrets``, row
``report-link-keys``), created by the first server, read by every one, never logged.
Whoever can read that database can forge links: guard it as the key hashes.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pagelab._exceptions import StoreError

from ._db import make_private, transaction
from ._dialect import Connection, is_postgres

__all__ = [
    "LINK_SECRET_ENV",
    "LINK_SECRET_FILE",
    "MIN_LINK_SECRET_LENGTH",
    "link_secrets",
    "read_secrets",
    "rotate_link_secret",
    "service_secret",
    "share_link_secrets",
]

LINK_SECRET_ENV = "PAGELAB_REPORT_LINK_SECRET"
LINK_SECRET_FILE = "report-links.key"
_LEGACY_NAME = "report-links"
#: A shorter link secret is refused: 32 hex digits in the file (16 bytes), 32 characters
#: in the environment.
MIN_LINK_SECRET_LENGTH = 32
#: The row of a PostgreSQL store's secrets (comma-separated hex, the signing one first).
_SHARED_NAME = "report-link-keys"


def _write_secrets(path: Path, values: list[str]) -> None:
    make_private(path.parent, directory=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write("".join(f"{value}\n" for value in values))
    os.replace(tmp, path)


def read_secrets(path: Path) -> list[str]:
    try:
        lines = path.read_text().split()
    except FileNotFoundError:
        return []
    try:
        for line in lines:
            bytes.fromhex(line)
    except ValueError:
        raise StoreError(f"{path}: every line must be a hex secret") from None
    if any(len(line) < MIN_LINK_SECRET_LENGTH for line in lines):
        raise StoreError(f"{path}: a secret shorter than {MIN_LINK_SECRET_LENGTH} hex digits "
                         "(`pagelab keys rotate-link-secret` writes a good one)")
    return lines


def link_secrets(data_dir: Path, conn: Connection | None = None) -> list[bytes]:
    """The report-link secrets, the signing one first.

    From ``$PAGELAB_REPORT_LINK_SECRET`` when set (its text, comma-separated for several),
    else from the key file, created on first use. A secret that an older pagelab kept in
    the database (``conn``) is moved to the file, so the links it signed stay valid, and
    deleted from the database.
    """
    configured = os.environ.get(LINK_SECRET_ENV, "")
    if configured.strip():
        parts = [part.strip() for part in configured.split(",") if part.strip()]
        if any(len(part) < MIN_LINK_SECRET_LENGTH for part in parts):
            raise StoreError(f"${LINK_SECRET_ENV}: each secret needs at least "
                             f"{MIN_LINK_SECRET_LENGTH} characters")
        return [part.encode() for part in parts]
    if conn is not None and is_postgres(conn):
        return [bytes.fromhex(value) for value in _shared_secrets(conn)]
    path = data_dir / LINK_SECRET_FILE
    values = read_secrets(path)
    if conn is not None:
        with transaction(conn, immediate=True):
            row = conn.execute(
                "SELECT value FROM service_secrets WHERE name = ?", (_LEGACY_NAME,)
            ).fetchone()
            if row is not None:
                if row["value"] not in values:
                    values.append(row["value"])
                    _write_secrets(path, values)
                conn.execute("DELETE FROM service_secrets WHERE name = ?", (_LEGACY_NAME,))
    if not values:
        values = [secrets.token_hex(32)]
        _write_secrets(path, values)
    make_private(path)
    return [bytes.fromhex(value) for value in values]


def share_link_secrets(conn: Connection, values: list[str]) -> None:
    """Make ``values`` (a SQLite store's secrets, moved to PostgreSQL) the secrets of the
    PostgreSQL store at ``conn`` unless it has its own already."""
    if values:
        conn.execute(
            "INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
            (_SHARED_NAME, ",".join(values)),
        )


def _shared_secrets(conn: Connection) -> list[str]:
    """A PostgreSQL store's secrets, created by the first server that asks."""
    conn.execute(
        "INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
        (_SHARED_NAME, secrets.token_hex(32)),
    )
    row = conn.execute(
        "SELECT value FROM service_secrets WHERE name = ?", (_SHARED_NAME,)
    ).fetchone()
    return [value for value in str(row["value"]).split(",") if value]


def rotate_link_secret(data_dir: Path, *, keep_previous: bool = True,
                       conn: Connection | None = None) -> None:
    """A new signing secret; the previous one keeps verifying unless ``keep_previous`` is
    false. Older ones are dropped. A running server reads the secrets at start: restart
    it (every server, with a PostgreSQL store: ``conn``, where they are kept)."""
    if conn is not None and is_postgres(conn):
        previous = _shared_secrets(conn)[:1] if keep_previous else []
        conn.execute(
            "UPDATE service_secrets SET value = ? WHERE name = ?",
            (",".join([secrets.token_hex(32), *previous]), _SHARED_NAME),
        )
        return
    path = data_dir / LINK_SECRET_FILE
    previous = read_secrets(path)[:1] if keep_previous else []
    _write_secrets(path, [secrets.token_hex(32), *previous])


def service_secret(conn: Connection, name: str) -> bytes:
    """A named secret kept in the database, created (32 random bytes) on first use.

    Not for report links (see :func:`link_secrets`)."""
    conn.execute(
        "INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
        (name, secrets.token_hex(32)),
    )
    row = conn.execute("SELECT value FROM service_secrets WHERE name = ?", (name,)).fetchone()
    return bytes.fromhex(row["value"])
