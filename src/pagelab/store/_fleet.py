"""Storage functions for the measurement fleet (``pagelab serve --broker``): which queued
tests have been handed to the broker, and the fleet's ends of a test (started, finished
by a worker, timed out waiting for one)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from pagelab.models import Device, LighthouseConfig, LighthouseError, TestStatus

from ._records import LOCAL_ACCOUNT, finish_test, now_ms

__all__ = [
    "QueuedTest",
    "ensure_fleet_tables",
    "fail_waiting_tests",
    "forget_dispatches",
    "mark_dispatched",
    "start_dispatched_test",
    "status_of_test",
    "undispatched_tests",
]


@dataclass(frozen=True, slots=True)
class QueuedTest:
    """An ``idle`` API test not yet handed to the broker, with its unmasked config."""

    id: str
    url: str
    device: Device
    location: str
    config: LighthouseConfig
    created_at: int


def ensure_fleet_tables(conn: sqlite3.Connection) -> None:
    """The dispatch table, created on first use by a fleet server (not a schema
    migration: a server without ``--broker`` never creates it)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fleet_dispatches ("
        "test_id TEXT PRIMARY KEY, queue TEXT NOT NULL, dispatched_at INTEGER NOT NULL)"
    )


def undispatched_tests(conn: sqlite3.Connection, limit: int = 100) -> list[QueuedTest]:
    """``idle`` unexpired API tests with no dispatch row, oldest first."""
    rows = conn.execute(
        "SELECT t.id, t.url, t.device, t.location, t.run_config_json, t.config_json, "
        "t.created_at FROM tests t LEFT JOIN fleet_dispatches d ON d.test_id = t.id "
        "WHERE t.status = ? AND t.account_id != ? AND t.expires_at > ? AND d.test_id IS NULL "
        "ORDER BY t.created_at, t.rowid LIMIT ?",
        (TestStatus.IDLE.value, LOCAL_ACCOUNT, now_ms(), limit),
    ).fetchall()
    return [
        QueuedTest(
            id=row["id"], url=row["url"], device=Device(row["device"]), location=row["location"],
            config=LighthouseConfig.model_validate_json(
                row["run_config_json"] or row["config_json"]
            ),
            created_at=row["created_at"],
        )
        for row in rows
    ]


def mark_dispatched(conn: sqlite3.Connection, test_id: str, queue: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO fleet_dispatches (test_id, queue, dispatched_at) VALUES (?, ?, ?)",
        (test_id, queue, now_ms()),
    )


def status_of_test(conn: sqlite3.Connection, test_id: str) -> TestStatus | None:
    """The test's status; None when the store does not have it (expired, or never)."""
    row = conn.execute("SELECT status FROM tests WHERE id = ?", (test_id,)).fetchone()
    return TestStatus(row["status"]) if row is not None else None


def start_dispatched_test(conn: sqlite3.Connection, test_id: str, *, started_at: int) -> bool:
    """``idle`` -> ``active`` when a worker says it started; False if it is not idle."""
    cursor = conn.execute(
        "UPDATE tests SET status = ?, started_at = ? WHERE id = ? AND status = ?",
        (TestStatus.ACTIVE.value, started_at, test_id, TestStatus.IDLE.value),
    )
    return cursor.rowcount == 1


def fail_waiting_tests(
    conn: sqlite3.Connection, *, idle_before: int, active_before: int,
    idle_error: LighthouseError, active_error: LighthouseError,
) -> list[str]:
    """Fail (as engine failures, so refunded) the API tests that waited too long: ``idle``
    ones created before ``idle_before`` (no worker took them) and ``active`` ones started
    before ``active_before`` (their worker was lost and none took them up again)."""
    failed: list[str] = []
    for status, before, column, error in (
        (TestStatus.IDLE, idle_before, "created_at", idle_error),
        (TestStatus.ACTIVE, active_before, "started_at", active_error),
    ):
        ids = [
            row["id"]
            for row in conn.execute(
                f"SELECT id FROM tests WHERE status = ? AND account_id != ? AND {column} < ?",
                (status.value, LOCAL_ACCOUNT, before),
            )
        ]
        for test_id in ids:
            finish_test(
                conn, test_id, status=TestStatus.FAILED, lighthouse_version=None, metrics=None,
                error=error, vantage=None, environment=None, engine_failure=True,
            )
        failed += ids
    return failed


def forget_dispatches(conn: sqlite3.Connection) -> None:
    """Drop the dispatch rows of deleted (expired) tests."""
    conn.execute(
        "DELETE FROM fleet_dispatches WHERE test_id NOT IN (SELECT id FROM tests)"
    )
