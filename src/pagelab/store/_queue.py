"""Storage functions for the API service's queue of tests."""

from __future__ import annotations

from pagelab.models import TestStatus

from ._dialect import Connection, is_postgres
from ._records import LOCAL_ACCOUNT, now_ms

__all__ = [
    "claim_queued_test",
    "next_queued_test",
    "queue_counts",
    "renew_lease",
    "requeue_interrupted",
]

# Tests of the local account belong to the LocalRunner that created them, which runs them
# in its own process: the service never picks them up.


def next_queued_test(conn: Connection) -> str | None:
    """The oldest ``idle`` API test that has not expired (first come, first served)."""
    row = conn.execute(
        "SELECT id FROM tests WHERE status = ? AND account_id != ? AND expires_at > ? "
        "ORDER BY created_at, rowid LIMIT 1",
        (TestStatus.IDLE.value, LOCAL_ACCOUNT, now_ms()),
    ).fetchone()
    return row["id"] if row is not None else None


def requeue_interrupted(conn: Connection) -> list[str]:
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


def queue_counts(conn: Connection) -> dict[str, int]:
    """How many API tests are ``idle`` and ``active``."""
    counts = {TestStatus.IDLE.value: 0, TestStatus.ACTIVE.value: 0}
    for row in conn.execute(
        "SELECT status, COUNT(*) AS n FROM tests WHERE status IN (?, ?) AND account_id != ? "
        "GROUP BY status",
        (TestStatus.IDLE.value, TestStatus.ACTIVE.value, LOCAL_ACCOUNT),
    ):
        counts[row["status"]] = row["n"]
    return counts


def claim_queued_test(conn: Connection, *, owner: str, lease_ms: int) -> str | None:
    """The next test this server's worker runs, claimed.

    SQLite: :func:`next_queued_test` (one server owns the queue of a data dir, under a
    file lock). PostgreSQL, where every server's worker takes from one queue: the oldest
    ``idle`` test, or an ``active`` one whose lease ran out (its server died mid-run), is
    marked ``active`` and leased to ``owner`` for ``lease_ms`` in one statement; ``FOR
    UPDATE SKIP LOCKED`` lets two servers claim at once without waiting on, or taking,
    each other's row. The owner renews the lease while it runs (:func:`renew_lease`).
    """
    if not is_postgres(conn):
        return next_queued_test(conn)
    now = now_ms()
    row = conn.execute(
        "UPDATE tests SET status = ?, started_at = ?, lease_owner = ?, lease_expires_at = ? "
        "WHERE id = ("
        " SELECT id FROM tests WHERE account_id != ? AND expires_at > ? AND ("
        "  status = ? OR (status = ? AND lease_expires_at < ?))"
        " ORDER BY created_at, rowid LIMIT 1 FOR UPDATE SKIP LOCKED"
        ") RETURNING id",
        (TestStatus.ACTIVE.value, now, owner, now + lease_ms, LOCAL_ACCOUNT, now,
         TestStatus.IDLE.value, TestStatus.ACTIVE.value, now),
    ).fetchone()
    return row["id"] if row is not None else None


def renew_lease(conn: Connection, test_id: str, *, owner: str, lease_ms: int) -> bool:
    """Extend ``owner``'s lease of a running test (PostgreSQL); False when it is no longer
    ``owner``'s (another server reclaimed it) or no longer running. Always True on SQLite,
    which has no leases."""
    if not is_postgres(conn):
        return True
    cursor = conn.execute(
        "UPDATE tests SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND status = ?",
        (now_ms() + lease_ms, test_id, owner, TestStatus.ACTIVE.value),
    )
    return bool(cursor.rowcount == 1)
