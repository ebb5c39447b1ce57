"""Rate-limit buckets every server of a PostgreSQL store shares (one row per caller)."""

from __future__ import annotations

from ._dialect import Connection

__all__ = ["take_rate_token"]


def take_rate_token(conn: Connection, caller: str, limit_per_minute: int) -> tuple[bool, float]:
    """Take one token from ``caller``'s bucket (``limit_per_minute`` tokens, refilled at
    that rate), in one statement on the database's clock, so servers on several machines
    count one budget: ``(allowed, tokens left)``. PostgreSQL only."""
    row = conn.execute(
        "INSERT INTO rate_buckets AS b (caller, tokens, at, allowed) "
        "VALUES (?, ? - 1, extract(epoch FROM clock_timestamp()), TRUE) "
        "ON CONFLICT (caller) DO UPDATE SET "
        " tokens = LEAST(?, b.tokens + (excluded.at - b.at) * ? / 60.0)"
        "  - CASE WHEN LEAST(?, b.tokens + (excluded.at - b.at) * ? / 60.0) >= 1"
        "    THEN 1 ELSE 0 END,"
        " allowed = LEAST(?, b.tokens + (excluded.at - b.at) * ? / 60.0) >= 1,"
        " at = excluded.at "
        "RETURNING allowed, tokens",
        (caller, float(limit_per_minute), *[float(limit_per_minute)] * 6),
    ).fetchone()
    return bool(row["allowed"]), float(row["tokens"])
