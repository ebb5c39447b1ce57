"""Storage functions for tests and batches. Each takes an open connection.

Timestamps are stored as integer epoch milliseconds.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pagelab.models import (
    BatchItem,
    BatchReport,
    BatchStatus,
    BatchType,
    Build,
    Device,
    EngineEnvironment,
    FlowStepRef,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metrics,
    TestReport,
    TestStatus,
    from_epoch,
    to_epoch_ms,
)

from ._dialect import Connection, is_postgres
from ._page_index import created_range, live_window, seek

__all__ = [
    "LOCAL_ACCOUNT",
    "TEST_COLUMNS",
    "TestQuery",
    "batch_status",
    "create_batch",
    "create_test",
    "create_test_report",
    "delete_expired",
    "fail_unfinished_test",
    "finish_test",
    "get_batch",
    "get_test",
    "list_tests",
    "new_id",
    "now_ms",
    "run_config",
    "run_timing",
    "start_test",
    "test_from_row",
    "test_target",
]

#: The account of tests run by a LocalRunner (the API service uses one account per key).
LOCAL_ACCOUNT = "local"


def now_ms() -> int:
    return to_epoch_ms(datetime.now(UTC))


def new_id(prefix: str) -> str:
    """``lt_…`` / ``lbt_…``: 96 random bits, so ids cannot be guessed across accounts."""
    return f"{prefix}_{secrets.token_hex(12)}"


class _NoStep:
    """A page test's flow columns: all NULL."""

    flow = step = step_index = mode = None


_NO_STEP = _NoStep()

#: The build columns of the tests table, in :func:`_build_values`' order.
_BUILD_COLUMNS = ("build_commit", "build_branch", "build_commit_time", "build_url",
                  "build_pull_request")


def _build_values(build: Build | None) -> tuple[Any, ...]:
    """A test's build columns (all NULL when the build is unknown)."""
    if build is None:
        return (None,) * len(_BUILD_COLUMNS)
    return (build.commit, build.branch,
            to_epoch_ms(build.commit_time) if build.commit_time is not None else None,
            build.build_url, build.pull_request)


def _build_of(row: Any) -> Build | None:
    """The build a stored row names (None for a row without one: every row older than
    migration 5)."""
    if row["build_commit"] is None:
        return None
    return Build(commit=row["build_commit"], branch=row["build_branch"],
                 commit_time=row["build_commit_time"], build_url=row["build_url"],
                 pull_request=row["build_pull_request"])


def _dump_config(config: LighthouseConfig) -> str:
    return config.model_dump_json()


def create_test(
    conn: Connection,
    *,
    url: str,
    device: Device,
    location: Location,
    config: LighthouseConfig,
    retention: timedelta,
    account_id: str = LOCAL_ACCOUNT,
    batch_id: str | None = None,
    position: int = 0,
    created_at: int | None = None,
    flow_step: FlowStepRef | None = None,
    build: Build | None = None,
) -> str:
    """Insert an ``idle`` test; the unmasked config is kept only until it has run.
    ``flow_step``: the user flow step it measures (None: a page test); ``build``: the build
    it measures (None: unknown)."""
    return _insert_test(
        conn, url=url, device=device, location=location, config=config, retention=retention,
        account_id=account_id, batch_id=batch_id, position=position, created_at=created_at,
        flow_step=flow_step, build=build,
    )[0]


def create_test_report(
    conn: Connection,
    *,
    url: str,
    device: Device,
    location: Location,
    config: LighthouseConfig,
    retention: timedelta,
    account_id: str = LOCAL_ACCOUNT,
    build: Build | None = None,
) -> TestReport:
    """:func:`create_test`, returning the new test's report as :func:`get_test` would read
    it, built from what was inserted (no read back)."""
    test_id, masked, created, expires = _insert_test(
        conn, url=url, device=device, location=location, config=config, retention=retention,
        account_id=account_id, build=build,
    )
    return TestReport(
        id=test_id,
        url=url,
        device=device,
        location=location,
        config=masked,
        status=TestStatus.IDLE,
        created_at=from_epoch(created),
        expires_at=from_epoch(expires),
        build=build,
    )


def _insert_test(
    conn: Connection,
    *,
    url: str,
    device: Device,
    location: Location,
    config: LighthouseConfig,
    retention: timedelta,
    account_id: str,
    batch_id: str | None = None,
    position: int = 0,
    created_at: int | None = None,
    flow_step: FlowStepRef | None = None,
    build: Build | None = None,
) -> tuple[str, LighthouseConfig, int, int]:
    test_id = new_id("lt")
    created = created_at if created_at is not None else now_ms()
    expires = created + int(retention.total_seconds() * 1000)
    masked = config.masked()
    step = flow_step or _NO_STEP
    conn.execute(
        "INSERT INTO tests (id, account_id, batch_id, position, url, device, location, "
        "config_json, run_config_json, status, created_at, expires_at, flow, step, "
        f"step_index, mode, {', '.join(_BUILD_COLUMNS)}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            test_id, account_id, batch_id, position, url, device.value, location.value,
            _dump_config(masked), _dump_config(config), TestStatus.IDLE.value,
            created, expires, step.flow, step.step, step.step_index, step.mode,
            *_build_values(build),
        ),
    )
    return test_id, masked, created, expires


def create_batch(
    conn: Connection,
    *,
    urls: Sequence[str],
    devices: Sequence[Device],
    locations: Sequence[Location],
    batch_type: BatchType,
    config: LighthouseConfig,
    items: Sequence[tuple[str, Device, Location]],
    retention: timedelta,
    account_id: str = LOCAL_ACCOUNT,
    build: Build | None = None,
) -> tuple[str, list[str]]:
    """Insert a batch and its ``idle`` items, each of ``build`` (call inside a
    transaction)."""
    batch_id = new_id("lbt")
    created = now_ms()
    conn.execute(
        "INSERT INTO batches (id, account_id, urls_json, devices_json, locations_json, "
        "batch_type, config_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            batch_id, account_id, json.dumps(list(urls)),
            json.dumps([d.value for d in devices]), json.dumps([loc.value for loc in locations]),
            batch_type.value, _dump_config(config.masked()), created,
            created + int(retention.total_seconds() * 1000),
        ),
    )
    # One executemany for the items: a batch is one short write, not one statement each.
    masked, clear = _dump_config(config.masked()), _dump_config(config)
    expires = created + int(retention.total_seconds() * 1000)
    test_ids = [new_id("lt") for _ in items]
    built = _build_values(build)
    conn.executemany(
        "INSERT INTO tests (id, account_id, batch_id, position, url, device, location, "
        f"config_json, run_config_json, status, created_at, expires_at, "
        f"{', '.join(_BUILD_COLUMNS)}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                test_id, account_id, batch_id, position, url, device.value, location.value,
                masked, clear, TestStatus.IDLE.value, created, expires, *built,
            )
            for position, (test_id, (url, device, location)) in enumerate(
                zip(test_ids, items, strict=True)
            )
        ],
    )
    return batch_id, test_ids


def test_target(conn: Connection, test_id: str) -> tuple[str, Device]:
    """The URL and device a stored test runs on; :class:`KeyError` if there is no such test."""
    row = conn.execute("SELECT url, device FROM tests WHERE id = ?", (test_id,)).fetchone()
    if row is None:
        raise KeyError(test_id)
    return row["url"], Device(row["device"])


def run_config(conn: Connection, test_id: str) -> LighthouseConfig:
    """The unmasked config to run the test with (the masked one once it has run)."""
    row = conn.execute(
        "SELECT run_config_json, config_json FROM tests WHERE id = ?", (test_id,)
    ).fetchone()
    return LighthouseConfig.model_validate_json(row["run_config_json"] or row["config_json"])


def start_test(conn: Connection, test_id: str) -> bool:
    """Mark the test ``active`` as its run starts; False, leaving it as it is, when it is
    final already (its key was revoked while it waited for the engine: failed and refunded,
    so it must not run and be rewritten as a success nobody paid for)."""
    cursor = conn.execute(
        "UPDATE tests SET status = ?, started_at = ? WHERE id = ? AND status IN (?, ?)",
        (TestStatus.ACTIVE.value, now_ms(), test_id, TestStatus.IDLE.value,
         TestStatus.ACTIVE.value),
    )
    return int(cursor.rowcount) == 1


def finish_test(
    conn: Connection,
    test_id: str,
    *,
    status: TestStatus,
    lighthouse_version: str | None,
    metrics: Metrics | None,
    error: LighthouseError | None,
    vantage: str | None,
    environment: EngineEnvironment | None,
    engine_failure: bool = False,
    started_at: int | None = None,
    finished_at: int | None = None,
) -> None:
    """Record the outcome and forget the unmasked config.

    ``started_at`` / ``finished_at`` (epoch ms) are when the engine really ran it.
    """
    conn.execute(
        "UPDATE tests SET status = ?, lighthouse_version = ?, metrics_json = ?, error_code = ?, "
        "error_message = ?, vantage = ?, environment_json = ?, engine_failure = ?, "
        "started_at = COALESCE(?, started_at), finished_at = ?, run_config_json = NULL "
        "WHERE id = ?",
        (
            status.value, lighthouse_version,
            metrics.model_dump_json() if metrics else None,
            error.code if error else None, error.message if error else None, vantage,
            environment.model_dump_json() if environment else None, int(engine_failure),
            started_at, finished_at if finished_at is not None else now_ms(), test_id,
        ),
    )


def fail_unfinished_test(
    conn: Connection, test_id: str, error: LighthouseError, *, vantage: str | None
) -> bool:
    """Fail a test the engine could not finish, as an engine failure (refundable).

    A test that is already final (or gone) is left as it is; returns whether it was failed.
    """
    row = conn.execute("SELECT status FROM tests WHERE id = ?", (test_id,)).fetchone()
    if row is None or TestStatus(row["status"]).is_final:
        return False
    finish_test(
        conn, test_id, status=TestStatus.FAILED, lighthouse_version=None, metrics=None,
        error=error, vantage=vantage, environment=None, engine_failure=True,
    )
    return True


@dataclass(frozen=True, slots=True)
class TestQuery:
    """The list endpoint's paging and created_at filters (epoch ms)."""

    __test__ = False

    page: int = 1
    per_page: int = 10
    created_at_gt: int | None = None
    created_at_gte: int | None = None
    created_at_lt: int | None = None
    created_at_lte: int | None = None
    #: Only the tests of this branch / commit (None: any; a test without a build never
    #: matches a given one).
    branch: str | None = None
    commit: str | None = None

    @property
    def by_build(self) -> bool:
        return self.branch is not None or self.commit is not None


#: The columns a :class:`TestReport` is read from (:func:`test_from_row`).
TEST_COLUMNS = (
    "id, batch_id, url, device, location, config_json, status, lighthouse_version, "
    "metrics_json, error_code, error_message, vantage, environment_json, created_at, "
    "expires_at, started_at, finished_at, flow, step, step_index, mode, "
    + ", ".join(_BUILD_COLUMNS)
)


def test_from_row(row: Any, report_url: str | None) -> TestReport:
    return TestReport(
        id=row["id"],
        url=row["url"],
        device=row["device"],
        location=row["location"],
        config=LighthouseConfig.model_validate_json(row["config_json"]),
        status=row["status"],
        lighthouse_version=row["lighthouse_version"],
        metrics=Metrics.model_validate_json(row["metrics_json"]) if row["metrics_json"] else None,
        report_url=report_url if row["status"] == TestStatus.SUCCESS else None,
        created_at=from_epoch(row["created_at"]),
        expires_at=from_epoch(row["expires_at"]),
        error=(
            LighthouseError(code=row["error_code"], message=row["error_message"] or "")
            if row["status"] == TestStatus.FAILED and row["error_code"]
            else None
        ),
        vantage=row["vantage"],
        environment=(
            EngineEnvironment.model_validate_json(row["environment_json"])
            if row["environment_json"]
            else None
        ),
        batch_id=row["batch_id"],
        flow_step=(
            FlowStepRef(flow=row["flow"], step=row["step"], step_index=row["step_index"],
                        mode=row["mode"])
            if row["flow"] is not None
            else None
        ),
        build=_build_of(row),
    )


def get_test(
    conn: Connection,
    test_id: str,
    *,
    account_id: str = LOCAL_ACCOUNT,
    now: int | None = None,
    report_url: Any = None,
) -> TestReport | None:
    """The test, or None when it is unknown, expired or another account's.

    ``report_url`` is a callable ``(test_id) -> str | None`` giving the hosted report's
    address (a file URL locally, an http URL in the service).
    """
    row = conn.execute(
        f"SELECT {TEST_COLUMNS} FROM tests WHERE id = ? AND account_id = ? AND expires_at > ?",
        (test_id, account_id, now if now is not None else now_ms()),
    ).fetchone()
    if row is None:
        return None
    return test_from_row(row, report_url(row["id"]) if report_url else None)


def run_timing(conn: Connection, test_id: str) -> tuple[int | None, int | None]:
    """When the engine started and finished the test (epoch ms)."""
    row = conn.execute(
        "SELECT started_at, finished_at FROM tests WHERE id = ?", (test_id,)
    ).fetchone()
    return (row["started_at"], row["finished_at"]) if row else (None, None)


#: Expired rows not yet deleted (the sweep runs every 10 minutes) past which
#: :func:`list_tests` filters row by row instead of correcting its window.
_EXPIRED_CORRECTION_LIMIT = 1000
#: Pages that start before this many rows are read in one statement, row by row: a few
#: hundred rows read cost less than the four more statements of the window (round trips,
#: on PostgreSQL).
_ONE_STATEMENT_BELOW = 200


def list_tests(
    conn: Connection,
    query: TestQuery,
    *,
    account_id: str = LOCAL_ACCOUNT,
    now: int | None = None,
    report_url: Any = None,
) -> list[TestReport]:
    """A page of the account's tests, newest first (ties in creation order, newest first).

    The first pages (offsets under ``_ONE_STATEMENT_BELOW``) are one statement. A deeper
    page reads ids first: its row ids come from the ``(account_id, created_at)`` index
    alone (rowid is its last column, so it is covering and already in the list's order),
    then only the page's rows are read. A deep page still steps over ``(page - 1) *
    per_page`` index entries, but never over table rows, so page 10 000 of a 1M-test
    account costs a few milliseconds. Expired rows the sweep has not deleted yet are not
    in that index's order of things: they are looked up by expiry (few), and the window
    read from the index is widened by their number and corrected for the ones that rank
    before each row; past ``_EXPIRED_CORRECTION_LIMIT`` of them the page is read row by
    row, as the first pages are.
    """
    cutoff = now if now is not None else now_ms()
    clauses = ["account_id = ?"]
    params: list[Any] = [account_id]
    for value, op in (
        (query.created_at_gt, ">"),
        (query.created_at_gte, ">="),
        (query.created_at_lt, "<"),
        (query.created_at_lte, "<="),
    ):
        if value is not None:
            clauses.append(f"created_at {op} ?")
            params.append(value)
    for column, wanted in (("build_branch", query.branch), ("build_commit", query.commit)):
        if wanted is not None:
            clauses.append(f"{column} = ?")
            params.append(wanted)
    where = " AND ".join(clauses)
    offset = (query.page - 1) * query.per_page
    # The per-minute counts that let a deep page seek count every test of the account, not
    # a branch's: a page of one build is read row by row.
    if offset < _ONE_STATEMENT_BELOW or query.by_build:
        rows = _row_by_row(conn, where, params, cutoff, query.per_page, offset)
    else:
        rows = _ids_first(conn, query, account_id, where, params, cutoff, offset)
    return [test_from_row(row, report_url(row["id"]) if report_url else None) for row in rows]


def _row_by_row(conn: Connection, where: str, params: list[Any], cutoff: int, per_page: int,
                offset: int) -> list[Any]:
    """The page's rows, read in one statement that steps over the unexpired rows before
    it on the table."""
    return list(conn.execute(
        f"SELECT rowid, {TEST_COLUMNS} FROM tests INDEXED BY tests_account_created "
        f"WHERE {where} AND expires_at > ? "
        "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
        [*params, cutoff, per_page, offset],
    ))


def _ids_first(conn: Connection, query: TestQuery, account_id: str, where: str,
               params: list[Any], cutoff: int, offset: int) -> list[Any]:
    """The page's rows, their ids read off the index first (see :func:`list_tests`)."""
    # One read snapshot for the statements below (WAL: it blocks no writer).
    own_transaction = not conn.in_transaction
    if own_transaction:
        conn.execute("BEGIN")
    try:
        expired = conn.execute(
            f"SELECT created_at, rowid FROM tests INDEXED BY tests_expires "
            f"WHERE expires_at <= ? AND {where} LIMIT ?",
            [cutoff, *params, _EXPIRED_CORRECTION_LIMIT + 1],
        ).fetchall()
        if len(expired) > _EXPIRED_CORRECTION_LIMIT:
            return _row_by_row(conn, where, params, cutoff, query.per_page, offset)
        bounds = created_range(query.created_at_gt, query.created_at_gte,
                               query.created_at_lt, query.created_at_lte)
        page_ids = live_window(
            conn, where, params, offset, query.per_page, expired,
            seek(conn, account_id, bounds, offset),
        )
        if not page_ids:
            return []
        marks = ", ".join("?" * len(page_ids))
        rows = {
            row["rowid"]: row for row in conn.execute(
                f"SELECT rowid, {TEST_COLUMNS} FROM tests WHERE rowid IN ({marks})",
                page_ids,
            )
        }
        return [rows[rowid] for rowid in page_ids]
    finally:
        if own_transaction:
            conn.execute("COMMIT")


def batch_status(item_statuses: Sequence[TestStatus]) -> BatchStatus:
    """``idle`` until an item starts, ``completed`` when all are final, else ``active``."""
    if all(status.is_final for status in item_statuses):
        return BatchStatus.COMPLETED
    if all(status == TestStatus.IDLE for status in item_statuses):
        return BatchStatus.IDLE
    return BatchStatus.ACTIVE


def get_batch(
    conn: Connection,
    batch_id: str,
    *,
    account_id: str = LOCAL_ACCOUNT,
    now: int | None = None,
    report_url: Any = None,
    batch_report_url: str | None = None,
) -> BatchReport | None:
    """The batch with its items in order, or None (unknown, expired, another account's)."""
    row = conn.execute(
        "SELECT * FROM batches WHERE id = ? AND account_id = ? AND expires_at > ?",
        (batch_id, account_id, now if now is not None else now_ms()),
    ).fetchone()
    if row is None:
        return None
    tests = [
        test_from_row(item, report_url(item["id"]) if report_url else None)
        for item in conn.execute(
            f"SELECT {TEST_COLUMNS} FROM tests WHERE batch_id = ? ORDER BY position", (batch_id,)
        )
    ]
    versions = [t.lighthouse_version for t in tests if t.lighthouse_version]
    return BatchReport(
        id=row["id"],
        urls=json.loads(row["urls_json"]),
        devices=json.loads(row["devices_json"]),
        locations=json.loads(row["locations_json"]),
        batch_type=row["batch_type"],
        config=LighthouseConfig.model_validate_json(row["config_json"]),
        status=batch_status([t.status for t in tests]),
        lighthouse_version=versions[0] if versions else None,
        report_url=batch_report_url,
        created_at=from_epoch(row["created_at"]),
        expires_at=from_epoch(row["expires_at"]),
        reports=[
            BatchItem(
                id=t.id, url=t.url, device=t.device, location=t.location, status=t.status,
                metrics=t.metrics, report_url=t.report_url, error=t.error,
                lighthouse_version=t.lighthouse_version, created_at=t.created_at,
                vantage=t.vantage, environment=t.environment, build=t.build,
            )
            for t in tests
        ],
    )


def delete_expired(conn: Connection, now: int | None = None) -> list[str]:
    """Delete expired tests and batches; returns the deleted test ids (for their files)."""
    cutoff = now if now is not None else now_ms()
    ids = [
        row["id"] for row in conn.execute("SELECT id FROM tests WHERE expires_at <= ?", (cutoff,))
    ]
    conn.execute("DELETE FROM tests WHERE expires_at <= ?", (cutoff,))
    conn.execute("DELETE FROM batches WHERE expires_at <= ?", (cutoff,))
    if ids:
        # The triggers count deletions down; the list's seek skips empty counts, but they
        # need not stay.
        conn.execute("DELETE FROM test_counts_minute WHERE n <= 0")
        conn.execute("DELETE FROM test_counts_day WHERE n <= 0")
    if is_postgres(conn):
        # A bucket idle for a minute has refilled: the same as no bucket.
        conn.execute("DELETE FROM rate_buckets "
                     "WHERE at < extract(epoch FROM clock_timestamp()) - 60")
    return ids
