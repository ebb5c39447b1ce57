"""Storage functions for the measurement fleet (``pagelab serve --broker``): which queued
tests have been handed to the broker and which worker took each, the workers' issued keys
(name, current key generation, locations, revoked or not), and the fleet's ends of a test
(started, finished by a worker, timed out waiting for one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pagelab.models import Device, LighthouseConfig, LighthouseError, TestStatus

from ._dialect import Connection, is_postgres
from ._records import LOCAL_ACCOUNT, finish_test, now_ms

__all__ = [
    "Dispatch",
    "FleetWorkerKey",
    "QueuedTest",
    "claim_dispatched_test",
    "dispatch_of",
    "ensure_fleet_tables",
    "fail_waiting_tests",
    "fleet_worker_key",
    "forget_dispatches",
    "issue_fleet_worker_key",
    "list_fleet_worker_keys",
    "mark_dispatched",
    "revoke_fleet_worker_key",
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


@dataclass(frozen=True, slots=True)
class FleetWorkerKey:
    """A worker the server issued a key to. The key itself is derived from the fleet
    secret, name and generation: the store keeps no key, only which one is current."""

    name: str
    generation: int
    locations: tuple[str, ...]
    issued_at: int
    revoked_at: int | None = None


@dataclass(frozen=True, slots=True)
class Dispatch:
    """A dispatched test: its location and status, and the worker that took it (None
    until a worker says it started, or sends its outcome first)."""

    test_id: str
    location: str
    status: TestStatus
    worker: str | None
    attempt: int


def ensure_fleet_tables(conn: Connection) -> None:
    """The dispatch and worker-key tables, created on first use by a fleet server (not a
    schema migration: a server without ``--broker`` never creates them). A PostgreSQL
    store has them from its migrations (:mod:`._pg_schema`, epoch ms as ``BIGINT``)."""
    if is_postgres(conn):
        return
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fleet_dispatches ("
        "test_id TEXT PRIMARY KEY, queue TEXT NOT NULL, dispatched_at INTEGER NOT NULL, "
        "worker TEXT, attempt INTEGER NOT NULL DEFAULT 0)"
    )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(fleet_dispatches)")}
    if "worker" not in columns:  # a table made by an older pagelab
        conn.execute("ALTER TABLE fleet_dispatches ADD COLUMN worker TEXT")
        conn.execute(
            "ALTER TABLE fleet_dispatches ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0"
        )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fleet_workers ("
        "name TEXT PRIMARY KEY, generation INTEGER NOT NULL, locations TEXT NOT NULL, "
        "issued_at INTEGER NOT NULL, revoked_at INTEGER)"
    )


def _worker_key(row: Any) -> FleetWorkerKey:
    return FleetWorkerKey(
        name=row["name"], generation=row["generation"],
        locations=tuple(loc for loc in row["locations"].split(",") if loc),
        issued_at=row["issued_at"], revoked_at=row["revoked_at"],
    )


def issue_fleet_worker_key(
    conn: Connection, name: str, locations: Sequence[str]
) -> FleetWorkerKey:
    """A new key generation for ``name`` (the previous key, if any, stops working)."""
    conn.execute(
        "INSERT INTO fleet_workers (name, generation, locations, issued_at) "
        "VALUES (?, 1, ?, ?) ON CONFLICT (name) DO UPDATE SET "
        "generation = fleet_workers.generation + 1, locations = excluded.locations, "
        "issued_at = excluded.issued_at, revoked_at = NULL",
        (name, ",".join(locations), now_ms()),
    )
    issued = fleet_worker_key(conn, name)
    assert issued is not None
    return issued


def revoke_fleet_worker_key(conn: Connection, name: str) -> bool:
    """Revoke ``name``'s key; False when it has none (or it was revoked already)."""
    cursor = conn.execute(
        "UPDATE fleet_workers SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
        (now_ms(), name),
    )
    return int(cursor.rowcount) == 1


def fleet_worker_key(
    conn: Connection, name: str, *, revoked: bool = False
) -> FleetWorkerKey | None:
    """``name``'s current key; None when it has none or (unless ``revoked``) it was
    revoked."""
    row = conn.execute("SELECT * FROM fleet_workers WHERE name = ?", (name,)).fetchone()
    if row is None or (row["revoked_at"] is not None and not revoked):
        return None
    return _worker_key(row)


def list_fleet_worker_keys(conn: Connection) -> list[FleetWorkerKey]:
    return [_worker_key(row) for row in conn.execute("SELECT * FROM fleet_workers ORDER BY name")]


def dispatch_of(conn: Connection, test_id: str) -> Dispatch | None:
    """The dispatch of ``test_id``; None when it was never dispatched (or is gone)."""
    row = conn.execute(
        "SELECT t.id, t.location, t.status, d.worker, d.attempt FROM fleet_dispatches d "
        "JOIN tests t ON t.id = d.test_id WHERE d.test_id = ?",
        (test_id,),
    ).fetchone()
    if row is None:
        return None
    return Dispatch(test_id=row["id"], location=row["location"],
                    status=TestStatus(row["status"]), worker=row["worker"],
                    attempt=row["attempt"])


def claim_dispatched_test(
    conn: Connection, test_id: str, worker: str, attempt: int
) -> bool:
    """Bind the test to ``worker``: when no worker has it yet, or when this is a later
    delivery (a higher attempt: the previous worker was lost). False otherwise."""
    cursor = conn.execute(
        "UPDATE fleet_dispatches SET worker = ?, attempt = ? WHERE test_id = ? "
        "AND (worker IS NULL OR worker = ? OR attempt < ?)",
        (worker, attempt, test_id, worker, attempt),
    )
    return int(cursor.rowcount) == 1


def undispatched_tests(conn: Connection, limit: int = 100) -> list[QueuedTest]:
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


def mark_dispatched(conn: Connection, test_id: str, queue: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO fleet_dispatches (test_id, queue, dispatched_at) VALUES (?, ?, ?)",
        (test_id, queue, now_ms()),
    )


def status_of_test(conn: Connection, test_id: str) -> TestStatus | None:
    """The test's status; None when the store does not have it (expired, or never)."""
    row = conn.execute("SELECT status FROM tests WHERE id = ?", (test_id,)).fetchone()
    return TestStatus(row["status"]) if row is not None else None


def start_dispatched_test(conn: Connection, test_id: str, *, started_at: int) -> bool:
    """``idle`` -> ``active`` when a worker says it started; False if it is not idle."""
    cursor = conn.execute(
        "UPDATE tests SET status = ?, started_at = ? WHERE id = ? AND status = ?",
        (TestStatus.ACTIVE.value, started_at, test_id, TestStatus.IDLE.value),
    )
    return int(cursor.rowcount) == 1


def fail_waiting_tests(
    conn: Connection, *, idle_before: int, active_before: int,
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


def forget_dispatches(conn: Connection) -> None:
    """Drop the dispatch rows of deleted (expired) tests."""
    conn.execute(
        "DELETE FROM fleet_dispatches WHERE test_id NOT IN (SELECT id FROM tests)"
    )
