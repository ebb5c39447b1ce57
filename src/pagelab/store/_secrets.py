"""Server-side secrets kept in the store (for example the key that signs report links)."""

from __future__ import annotations

import secrets
import sqlite3

__all__ = ["service_secret"]


def service_secret(conn: sqlite3.Connection, name: str) -> bytes:
    """The secret called ``name``, created (32 random bytes) on first use.

    Kept in the database so it survives restarts: links handed out stay valid.
    """
    conn.execute(
        "INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
        (name, secrets.token_hex(32)),
    )
    row = conn.execute("SELECT value FROM service_secrets WHERE name = ?", (name,)).fetchone()
    return bytes.fromhex(row["value"])
