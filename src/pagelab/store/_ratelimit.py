"""Rate-limit buckets every server of a PostgreSQL store shares (one row per caller)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._pg import PgConnection

__all__ = ["bucket_upsert", "take_rate_token"]


def bucket_upsert(source: str) -> str:
    """The statement taking one token from a bucket, on the database's clock.

    ``source`` is the rest of an ``INSERT ... SELECT`` whose select list is this
    statement's: it names the bucket as ``caller`` and may read other tables (a key's
    account: no row, no token taken). The bucket holds ``%(limit)s`` tokens, refilled at
    that rate per minute. Returns ``allowed`` and the ``tokens`` left.
    """
    refilled = "LEAST(%(limit)s, b.tokens + (excluded.at - b.at) * %(limit)s / 60.0)"
    return (
        "INSERT INTO rate_buckets AS b (caller, tokens, at, allowed) "
        f"SELECT caller, %(limit)s - 1, extract(epoch FROM clock_timestamp()), TRUE {source} "
        "ON CONFLICT (caller) DO UPDATE SET "
        f"tokens = {refilled} - CASE WHEN {refilled} >= 1 THEN 1 ELSE 0 END, "
        f"allowed = {refilled} >= 1, at = excluded.at "
        "RETURNING allowed, tokens"
    )


_TAKE = bucket_upsert("FROM (SELECT %(caller)s AS caller) AS named")


def take_rate_token(conn: PgConnection, caller: str, limit_per_minute: int) -> tuple[bool, float]:
    """Take one token from ``caller``'s bucket (``limit_per_minute`` tokens, refilled at
    that rate), in one statement on the database's clock, so servers on several machines
    count one budget: ``(allowed, tokens left)``. PostgreSQL only."""
    row = conn.raw.execute(
        _TAKE, {"caller": caller, "limit": float(limit_per_minute)}
    ).fetchone()
    assert row is not None  # an upsert returns its row
    return bool(row["allowed"]), float(row["tokens"])
