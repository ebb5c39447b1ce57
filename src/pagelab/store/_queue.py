"""Storage functions for the API service's queue of tests."""

from __future__ import annotations

import sqlite3

from pagelab.models import TestStatus

from ._records import LOCAL_ACCOUNT, now_ms

__all__ = ["next_queued_test", "queue_counts", "requeue_interrupted"]

# Tests of the local account belong to the LocalRunner that created them, which runs them
# in its own process: the service never picks them up.


def next_queued_test(conn: sqlite3.Connection) -> str | None:
    """The oldest ``idle`` API test that has not expired (first come, first served)."""
    row = conn.execute(
        "SELECT id FROM tests WHERE status = ? AND account_id != ? AND expires_at > ? "
        "ORDER BY created_at, rowid LIMIT 1",
        (TestStatus.IDLE.value, LOCAL_ACCOUNT, now_ms()),
    ).fetchone()
    return row["id"] if row is not None else None


def requeue_interrupted(conn: sqlite3.Connection) -> list[str]:
    """Put API tests left ``active`` by a stopped or killed server back in the queue.

    Only for the process that owns the queue, before it starts running tests. Their
    unmasked config is still stored (it is dropped when a test finishes), so they run as
    first requested.
    """
    ids = [
        row["id"]
        for row in conn.execute(
            "SELECT id FROM tests WHERE status = ? AND account_id != ?",
            (TestStatus.ACTIVE.value, LOCAL_ACCOUNT),
        )
    ]
    conn.executemany(
        "UPDATE tests SET status = ?, started_at = NULL WHERE id = ?",
        [(TestStatus.IDLE.value, test_id) for test_id in ids],
    )
    return ids


def queue_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """How many API tests are ``idle`` and ``active``."""
    counts = {TestStatus.IDLE.value: 0, TestStatus.ACTIVE.value: 0}
    for row in conn.execute(
        "SELECT status, COUNT(*) AS n FROM tests WHERE status IN (?, ?) AND account_id != ? "
        "GROUP BY status",
        (TestStatus.IDLE.value, TestStatus.ACTIVE.value, LOCAL_ACCOUNT),
    ):
        counts[row["status"]] = row["n"]
    return counts
