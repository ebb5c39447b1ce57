"""The local store on a real SQLite file: WAL, migrations, transactions, accounts, expiry."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest

from pagelab import StoreError
from pagelab.models import (
    BatchType,
    Device,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metrics,
    TestStatus,
)
from pagelab.store import (
    SCHEMA_VERSION,
    Store,
    TestQuery,
    create_batch,
    create_test,
    delete_expired,
    finish_test,
    get_batch,
    get_test,
    list_tests,
    run_config,
    start_test,
    transaction,
)

DAY = timedelta(days=1)


def _create(conn: sqlite3.Connection, url: str = "https://a.test/", **kwargs: object) -> str:
    return create_test(conn, url=url, device=Device.MOBILE, location=Location.US,
                       config=LighthouseConfig(), retention=DAY, **kwargs)  # type: ignore[arg-type]


def test_store_is_wal_and_migrated(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.connection() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    # Opening again applies nothing and keeps data.
    with store.connection() as conn, transaction(conn):
        test_id = _create(conn)
    with Store(tmp_path).connection() as conn:
        assert get_test(conn, test_id) is not None


def _open_store(data_dir: Path) -> int:
    with Store(data_dir).connection() as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def test_processes_opening_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    # Without the set-up lock, about one round in six lost the race for the switch to WAL
    # with "database is locked" (two `pagelab run` at once on a fresh machine).
    with ProcessPoolExecutor(6) as pool:
        for round_ in range(15):
            dirs = [tmp_path / str(round_)] * 6
            assert list(pool.map(_open_store, dirs)) == [SCHEMA_VERSION] * 6


def test_newer_schema_is_refused_not_overwritten(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.connection() as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        store.connect()


def test_failed_write_changes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.connection() as conn:
        def crash_mid_transaction() -> None:
            with transaction(conn):
                _create(conn)
                raise RuntimeError("crash mid-transaction")

        with pytest.raises(RuntimeError):
            crash_mid_transaction()
        assert list_tests(conn, TestQuery()) == []


def test_lifecycle_forgets_the_unmasked_config(tmp_path: Path) -> None:
    store = Store(tmp_path)
    secret = LighthouseConfig(auth_password="canary-pw", cookies=["sid=canary-cookie"])
    with store.connection() as conn:
        with transaction(conn):
            test_id = create_test(conn, url="https://a.test/", device=Device.DESKTOP,
                                  location=Location.DE, config=secret, retention=DAY)
        assert run_config(conn, test_id).auth_password == "canary-pw"
        assert get_test(conn, test_id).config.auth_password == "***"  # type: ignore[union-attr]
        with transaction(conn):
            start_test(conn, test_id)
        assert get_test(conn, test_id).status == TestStatus.ACTIVE  # type: ignore[union-attr]
        with transaction(conn):
            finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13.5.0",
                        metrics=Metrics(performance_score=90), error=None, vantage="local",
                        environment=None)
        report = get_test(conn, test_id, report_url=lambda i: f"file:///{i}")
    assert report is not None
    assert report.status == TestStatus.SUCCESS
    assert report.report_url == f"file:///{test_id}"
    assert report.metrics == Metrics(performance_score=90)
    raw = (tmp_path / "pagelab.sqlite3").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("pagelab.sqlite3*")
    )
    assert b"canary-pw" not in raw
    assert b"canary-cookie" not in raw


def test_error_only_when_failed(tmp_path: Path) -> None:
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            test_id = _create(conn)
            finish_test(conn, test_id, status=TestStatus.FAILED, lighthouse_version=None,
                        metrics=None, error=LighthouseError(code="NO_FCP", message="no paint"),
                        vantage="local", environment=None)
        report = get_test(conn, test_id, report_url=lambda i: "file:///x")
    assert report is not None
    assert report.error == LighthouseError(code="NO_FCP", message="no paint")
    assert report.report_url is None


def test_list_is_newest_first_paged_and_filtered(tmp_path: Path) -> None:
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            ids = [_create(conn, created_at=1_000 * (i + 1)) for i in range(5)]
        newest = [r.id for r in list_tests(conn, TestQuery(per_page=2), now=10_000)]
        assert newest == [ids[4], ids[3]]
        third = list_tests(conn, TestQuery(page=3, per_page=2), now=10_000)
        assert [r.id for r in third] == [ids[0]]
        assert list_tests(conn, TestQuery(page=4, per_page=2), now=10_000) == []
        assert len(list_tests(conn, TestQuery(created_at_gt=2_000), now=10_000)) == 3
        assert len(list_tests(conn, TestQuery(created_at_gte=2_000), now=10_000)) == 4
        assert len(list_tests(conn, TestQuery(created_at_lt=2_000), now=10_000)) == 1
        assert len(list_tests(conn, TestQuery(created_at_lte=2_000), now=10_000)) == 2


@pytest.mark.parametrize("expired_share", [0.0, 0.3, 1.0])
def test_list_pages_equal_the_plain_query_with_ties_and_unswept_expired_rows(
    tmp_path: Path, expired_share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids-first paging (window corrected for expired rows the sweep has not deleted, or
    the row-by-row fallback past its limit) and the first pages' one statement answer
    exactly what the plain OFFSET query over unexpired rows does, ties in created_at
    included."""
    import random

    from pagelab.store import _records

    rng = random.Random(7)
    now = 100_000
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            for _ in range(120):
                test_id = _create(conn, created_at=1_000 * rng.randint(1, 40))
                expires = now - 1 if rng.random() < expired_share else now + 1
                conn.execute("UPDATE tests SET expires_at = ? WHERE id = ?", (expires, test_id))
            _create(conn, account_id="acct_other", created_at=5_000)
        # 0: every page ids first; 3: more expired rows than the correction takes; the
        # defaults: the first pages in one statement.
        for limit, one_statement_below in ((1000, 0), (3, 0), (1000, 200)):
            monkeypatch.setattr(_records, "_EXPIRED_CORRECTION_LIMIT", limit)
            monkeypatch.setattr(_records, "_ONE_STATEMENT_BELOW", one_statement_below)
            for per_page in (1, 7, 10):
                for page in range(1, 122 // per_page + 2):
                    for bounds in ({}, {"created_at_gte": 10_000, "created_at_lt": 30_000}):
                        query = TestQuery(page=page, per_page=per_page, **bounds)
                        expected = [row[0] for row in conn.execute(
                            "SELECT id FROM tests WHERE account_id = 'local' AND expires_at > ? "
                            "AND created_at >= ? AND created_at < ? "
                            "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
                            (now, bounds.get("created_at_gte", 0),
                             bounds.get("created_at_lt", 10**12), per_page,
                             (page - 1) * per_page),
                        )]
                        got = [r.id for r in list_tests(conn, query, now=now)]
                        assert got == expected, (limit, one_statement_below, per_page,
                                                 page, bounds)


def test_accounts_are_isolated(tmp_path: Path) -> None:
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            mine = _create(conn, account_id="acct_a")
        assert get_test(conn, mine, account_id="acct_b") is None
        assert list_tests(conn, TestQuery(), account_id="acct_b") == []
        assert get_test(conn, mine, account_id="acct_a") is not None


def test_batches_keep_item_order_and_derive_status(tmp_path: Path) -> None:
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            batch_id, test_ids = create_batch(
                conn, urls=["https://a.test/"], devices=[Device.MOBILE, Device.DESKTOP],
                locations=[Location.US], batch_type=BatchType.MULTIPLE_DEVICES,
                config=LighthouseConfig(),
                items=[("https://a.test/", Device.MOBILE, Location.US),
                       ("https://a.test/", Device.DESKTOP, Location.US)],
                retention=DAY,
            )
        batch = get_batch(conn, batch_id)
        assert batch is not None
        assert batch.status == "idle"
        assert [item.id for item in batch.reports] == test_ids
        with transaction(conn):
            start_test(conn, test_ids[0])
        assert get_batch(conn, batch_id).status == "active"  # type: ignore[union-attr]
        with transaction(conn):
            for test_id in test_ids:
                finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13.5.0",
                            metrics=None, error=None, vantage="local", environment=None)
        batch = get_batch(conn, batch_id)
        assert batch is not None
        assert batch.status == "completed"
        assert batch.lighthouse_version == "13.5.0"


def test_expired_tests_are_hidden_and_deleted(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.connection() as conn:
        with transaction(conn):
            test_id = _create(conn, created_at=1_000)
            store.artifacts.write(conn, test_id, "html-report", b"<html></html>")
        assert get_test(conn, test_id) is None  # expired a day after 1970
        with transaction(conn):
            assert delete_expired(conn) == [test_id]
        store.artifacts.remove(test_id)
        assert store.artifacts.read(conn, test_id, "html-report") is None
    assert not (tmp_path / "artifacts" / test_id).exists()


def test_artifacts_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.connection() as conn:
        with transaction(conn):
            test_id = _create(conn)
            store.artifacts.write(conn, test_id, "lighthouse-json", b'{"a": 1}')
        assert store.artifacts.read(conn, test_id, "lighthouse-json") == b'{"a": 1}'
        assert store.artifacts.read(conn, test_id, "video") is None
        assert store.artifacts.names(conn, test_id) == ["lighthouse-json"]
    assert not list((tmp_path / "artifacts" / test_id).glob(".tmp-*"))


def test_connection_pool_reuses_its_connections_and_queues_writers(tmp_path: Path) -> None:
    """16 threads on a pool of 4: never more than 4 connections opened (all reused, no
    connection per borrow), every borrower served, and writes under the pool's write lock
    never collide (the sum is exact, no "database is locked")."""
    import threading

    from pagelab.store import ConnectionPool

    pool = ConnectionPool(Store(tmp_path), size=4, warm=1)
    with pool.connection() as conn, pool.write(conn):
        conn.execute("CREATE TABLE counter (n INTEGER)")
        conn.execute("INSERT INTO counter VALUES (0)")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                with pool.connection() as conn, pool.write(conn):
                    (n,) = conn.execute("SELECT n FROM counter").fetchone()
                    conn.execute("UPDATE counter SET n = ?", (n + 1,))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert pool.opened <= 4
    with pool.connection() as conn:
        assert conn.execute("SELECT n FROM counter").fetchone()[0] == 16 * 50
        own = pool.thread_connection()
        assert own is pool.thread_connection()
        assert own is not conn
        assert own.execute("SELECT n FROM counter").fetchone()[0] == 16 * 50
    pool.close()
    assert pool.opened == 0
    with pytest.raises(StoreError):
        pool.acquire()


def test_try_write_never_waits(tmp_path: Path) -> None:
    """``try_write`` gives a transaction only when the process's write lock and SQLite's
    are both free, and otherwise None at once (nothing written, nothing waited); it
    commits on success and rolls back on an error."""
    import threading
    import time

    from pagelab.store import ConnectionPool

    pool = ConnectionPool(Store(tmp_path), size=2)
    with pool.connection() as setup, pool.write(setup):
        setup.execute("CREATE TABLE t (n INTEGER)")
    with pool.try_write() as conn:
        assert conn is not None
        conn.execute("INSERT INTO t VALUES (1)")

    def fail_inside() -> None:
        with pool.try_write() as conn:
            assert conn is not None
            conn.execute("INSERT INTO t VALUES (2)")
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        fail_inside()
    # The process's write lock taken by another thread.
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with pool.connection() as other, pool.write(other):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    # Had it waited for the lock, it would have got it once the holder let go: not None.
    with pool.try_write() as conn:
        assert conn is None
    release.set()
    holder.join()

    def fastest_try_write() -> tuple[float, bool]:
        """The fastest of 20 (the least disturbed by other load); whether it got a write."""
        timings, got = [], False
        for _ in range(20):
            started = time.perf_counter()
            with pool.try_write() as conn:
                got = conn is not None
            timings.append(time.perf_counter() - started)
        return min(timings), got

    free, got = fastest_try_write()
    assert got
    # SQLite's write lock taken by another process (here: a connection outside the pool).
    # It is held throughout, so waiting would also end in None: what shows that nothing
    # waited is the time, against the free case measured just before (a busy timeout
    # waits milliseconds to seconds; a refused BEGIN costs less than a committed one).
    outsider = sqlite3.connect(tmp_path / "pagelab.sqlite3", isolation_level=None)
    outsider.execute("BEGIN IMMEDIATE")
    locked, got = fastest_try_write()
    assert not got
    print(f"try_write: {free * 1e6:.0f} us free, {locked * 1e6:.0f} us refused")
    assert locked < 10 * free, (free, locked)
    outsider.execute("ROLLBACK")
    outsider.close()
    with pool.try_write() as conn:
        assert conn is not None
        conn.execute("INSERT INTO t VALUES (3)")
    with pool.connection() as reader:
        assert [n for (n,) in reader.execute("SELECT n FROM t ORDER BY n")] == [1, 3]
    pool.close()


def test_opening_a_connection_keeps_the_process_locks_of_the_open_ones(tmp_path: Path) -> None:
    """A second connection opened in this process must not drop the first one's POSIX
    locks: else another process closing its last connection believes it is the last user,
    deletes the WAL and shared memory, and this process's connections fail (disk I/O)."""
    import subprocess
    import sys

    store = Store(tmp_path)
    with store.connection() as first, store.connection():
        first.execute("CREATE TABLE t (x INTEGER)")
        script = (
            "import sys; from pagelab.store import Store; "
            "c = Store(sys.argv[1]).connect(); c.execute('INSERT INTO t VALUES (1)'); c.close()"
        )
        subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
        assert (tmp_path / "pagelab.sqlite3-wal").exists()
        assert first.execute("SELECT count(*) FROM t").fetchone()[0] == 1


def _counts_match_the_tests(conn: sqlite3.Connection) -> None:
    for table, unit in (("test_counts_minute", 60_000), ("test_counts_day", 86_400_000)):
        kept = {(a, b): n for a, b, n in conn.execute(f"SELECT * FROM {table}") if n}
        summed: dict[tuple[str, int], int] = {}
        for account, created in conn.execute("SELECT account_id, created_at FROM tests"):
            key = (account, created // unit)
            summed[key] = summed.get(key, 0) + 1
        assert kept == summed, table


@pytest.mark.parametrize("expired_share", [0.0, 0.3])
def test_deep_pages_found_from_the_counts_equal_the_plain_query(
    tmp_path: Path, expired_share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seek (per-day and per-minute counts kept by triggers, then the index within one
    minute) answers exactly what the plain OFFSET query does: tests spread over days and
    minutes, ties, bounds that cut a minute or a day, expired rows, other accounts,
    deletions by the sweep and by a batch's cascade, and a test moved in time."""
    import random

    from pagelab.store import _page_index, _records

    monkeypatch.setattr(_page_index, "_SEEK_FROM", 0)  # seek even on page 1
    monkeypatch.setattr(_records, "_ONE_STATEMENT_BELOW", 0)
    rng = random.Random(11)
    minute, day = 60_000, 86_400_000
    now = 10 * day
    with Store(tmp_path).connection() as conn:
        with transaction(conn):
            for _ in range(300):
                created = rng.choice([
                    rng.randint(0, 4 * day),  # spread over days
                    day + minute * rng.randint(0, 30) + rng.randint(0, 3),  # dense minutes
                    2 * day - 1,  # a day's last ms, many ties
                ])
                expires = now - 1 if rng.random() < expired_share else now + day
                test_id = _create(conn, created_at=created,
                                  account_id=rng.choice(["local", "local", "acct_other"]))
                conn.execute("UPDATE tests SET expires_at = ? WHERE id = ?", (expires, test_id))
            create_batch(
                conn, urls=["https://a.test/"], devices=[Device.MOBILE], locations=[Location.US],
                batch_type=BatchType.MULTIPLE_LOCATIONS, config=LighthouseConfig(),
                items=[("https://a.test/", Device.MOBILE, Location.US)] * 5, retention=DAY,
            )
            moved = _create(conn, created_at=3 * day)
            conn.execute("UPDATE tests SET created_at = ? WHERE id = ?", (day + 5, moved))
        _counts_match_the_tests(conn)

        def check(label: str, cutoff: int) -> None:
            total = conn.execute(
                "SELECT COUNT(*) FROM tests WHERE account_id = 'local'").fetchone()[0]
            for bounds in (
                {},
                {"created_at_lt": 2 * day},
                {"created_at_lte": day + 7 * minute + 1, "created_at_gt": 17},
                {"created_at_gte": day + 3, "created_at_lt": 3 * day + 5 * minute},
                {"created_at_gte": 2 * day - 1, "created_at_lte": 2 * day - 1},
                {"created_at_gt": 5 * day},
                {"created_at_gt": day + 1, "created_at_lt": day + 3},  # inside one minute
                {"created_at_gt": day, "created_at_lt": day},  # empty
            ):
                for per_page in (1, 7, 100):
                    for page in range(1, total // per_page + 3):
                        query = TestQuery(page=page, per_page=per_page, **bounds)
                        expected = [row[0] for row in conn.execute(
                            "SELECT id FROM tests WHERE account_id = 'local' AND expires_at > ? "
                            "AND created_at > ? AND created_at >= ? AND created_at < ? "
                            "AND created_at <= ? "
                            "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
                            (cutoff, bounds.get("created_at_gt", -1),
                             bounds.get("created_at_gte", -1),
                             bounds.get("created_at_lt", 10**15),
                             bounds.get("created_at_lte", 10**15), per_page,
                             (page - 1) * per_page),
                        )]
                        got = [r.id for r in list_tests(conn, query, now=cutoff)]
                        assert got == expected, (label, bounds, per_page, page)

        check("stored", now)
        with transaction(conn, immediate=True):
            deleted = delete_expired(conn, now=now)
        assert len(deleted) >= (1 if expired_share else 0)
        _counts_match_the_tests(conn)
        assert conn.execute("SELECT COUNT(*) FROM test_counts_minute WHERE n <= 0").fetchone()[
            0] == 0
        check("after the sweep", now)
        with transaction(conn, immediate=True):
            delete_expired(conn, now=10**15)  # everything, the batch (created now) too
        _counts_match_the_tests(conn)
        assert conn.execute("SELECT COUNT(*) FROM test_counts_day").fetchone()[0] == 0
        assert list_tests(conn, TestQuery(), now=0) == []


def test_migration_counts_the_tests_already_stored(tmp_path: Path) -> None:
    """A store of schema 2 gains the counts of the tests it holds when it is opened."""
    from pagelab.store._db import MIGRATIONS

    tmp_path.mkdir(exist_ok=True)
    raw = sqlite3.connect(tmp_path / "pagelab.sqlite3")
    for script in MIGRATIONS[:2]:
        raw.executescript(script)
    raw.executemany(
        "INSERT INTO tests (id, account_id, url, device, location, config_json, status, "
        "created_at, expires_at) VALUES (?, 'local', 'https://a.test/', 'mobile', 'us', '{}', "
        "'success', ?, 9999999999999)",
        [(f"lt_{i}", 1_000 * i * 37) for i in range(500)],
    )
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    raw.close()
    with Store(tmp_path).connection() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 500
        _counts_match_the_tests(conn)
        page = list_tests(conn, TestQuery(page=40, per_page=10), now=0)
        assert [r.id for r in page] == [f"lt_{i}" for i in range(109, 99, -1)]
