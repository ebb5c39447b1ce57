"""Rate-limit buckets every server of a PostgreSQL store shares (one row per caller)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._pg import PgConnection

__all__ = ["bucket_upsert", "take_rate_token"]


def bucket_upsert(source: str) -> str:
    """The statement taking up to ``%(take)s`` tokens from a bucket, on the database's clock.

    ``source`` is the rest of an ``INSERT ... SELECT`` whose select list is this
    statement's: it names the bucket as ``caller`` and may read other tables (a key's
    account: no row, no token taken). The bucket holds ``%(limit)s`` tokens, refilled at
    that rate per minute. It grants what it has, up to ``%(take)s`` (none below one token)
    and returns ``granted`` and the ``tokens`` left.
    """
    refilled = "LEAST(%(limit)s, b.tokens + (excluded.at - b.at) * %(limit)s / 60.0)"

    def grant(tokens: str) -> str:
        return f"CASE WHEN {tokens} >= 1 THEN LEAST(%(take)s, floor({tokens})) ELSE 0 END"

    return (
        "INSERT INTO rate_buckets AS b (caller, tokens, at, allowed, granted) "
        f"SELECT caller, %(limit)s - {grant('%(limit)s')}, "
        f"extract(epoch FROM clock_timestamp()), %(limit)s >= 1, {grant('%(limit)s')} "
        f"{source} "
        "ON CONFLICT (caller) DO UPDATE SET "
        f"tokens = {refilled} - {grant(refilled)}, allowed = {refilled} >= 1, "
        f"granted = {grant(refilled)}, at = excluded.at "
        "RETURNING granted, tokens"
    )


_TAKE = bucket_upsert("FROM (SELECT %(caller)s AS caller) AS named")


def take_rate_token(conn: PgConnection, caller: str, limit_per_minute: int) -> tuple[bool, float]:
    """Take one token from ``caller``'s bucket (``limit_per_minute`` tokens, refilled at
    that rate), in one statement on the database's clock, so servers on several machines
    count one budget: ``(allowed, tokens left)``. PostgreSQL only."""
    row = conn.raw.execute(
        _TAKE, {"caller": caller, "limit": float(limit_per_minute), "take": 1.0}
    ).fetchone()
    assert row is not None  # an upsert returns its row
    return row["granted"] >= 1, float(row["tokens"])
