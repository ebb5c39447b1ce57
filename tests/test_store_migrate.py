"""``pagelab store migrate``: a SQLite store of 10 000 tests with artifacts moved into a
real PostgreSQL database, resumed after an interruption, counts verified."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pagelab import StoreError
from pagelab.models import BatchType, Device, LighthouseConfig, Location, TestStatus
from pagelab.store import (
    Store,
    charge_credits,
    copy_store,
    create_account,
    create_batch,
    create_test,
    finish_test,
    link_secrets,
    record_test_charges,
    transaction,
)

TESTS = 10_000
_RETENTION = timedelta(days=30)


def _seed(data_dir: Path) -> str:
    """10 000 tests (100 of them in a batch), each finished with two artifacts."""
    store = Store(data_dir)
    with store.connection() as conn, transaction(conn, immediate=True):
        account, key = create_account(conn, lighthouse_credits=TESTS, ttfb_credits=5)
        _, batch_ids = create_batch(
            conn, urls=["https://example.com/"], devices=[Device.DESKTOP],
            locations=[Location.DE], batch_type=BatchType.MULTIPLE_URLS,
            config=LighthouseConfig(), retention=_RETENTION, account_id=account.id,
            items=[(f"https://example.com/{n}", Device.DESKTOP, Location.DE)
                   for n in range(100)],
        )
        ids = batch_ids + [
            create_test(conn, url=f"https://example.com/t{n}", device=Device.MOBILE,
                        location=Location.US, config=LighthouseConfig(),
                        retention=_RETENTION, account_id=account.id)
            for n in range(TESTS - 100)
        ]
        paid = charge_credits(conn, account.id, "lighthouse", len(ids))
        assert paid is not None
        record_test_charges(conn, account.id, ids, paid)
        for test_id in ids:
            store.artifacts.write(conn, test_id, "lighthouse-json",
                                  f'{{"id": "{test_id}"}}'.encode())
            store.artifacts.write(conn, test_id, "html-report",
                                  f"<html>{test_id}</html>".encode())
            finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="12",
                        metrics=None, error=None, vantage="local", environment=None)
    with store.connection() as conn:
        link_secrets(data_dir, conn)  # the file servers sign links with
    return key


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    data_dir = tmp_path_factory.mktemp("source")
    return data_dir, _seed(data_dir)


def test_an_interrupted_copy_resumes_and_every_count_matches(
    seeded: tuple[Path, str], postgres: Any
) -> None:
    data_dir, key = seeded
    source = Store(data_dir)
    target = Store(database=postgres.new_database())

    class Interrupted(Exception):
        pass

    def stop_midway(table: str, copied: int) -> None:
        if table == "tests" and copied >= 4000:
            raise Interrupted

    with pytest.raises(Interrupted):
        copy_store(source, target, progress=stop_midway)
    with target.connection() as conn:
        assert conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 4000
    counts = {c.table: (c.source, c.target) for c in copy_store(source, target)}
    assert counts == {"accounts": (1, 1), "batches": (1, 1), "tests": (TESTS, TESTS),
                      "credit_charges": (TESTS, TESTS), "artifacts": (2 * TESTS, 2 * TESTS)}
    from pagelab.store import TestQuery, find_account_by_key, get_test, list_tests

    with target.connection() as conn:
        account = find_account_by_key(conn, key)
        assert account is not None
        assert account.lighthouse_credits == 0
        page = list_tests(conn, TestQuery(page=500, per_page=20), account_id=account.id)
        assert len(page) == 20
        test = get_test(conn, page[0].id, account_id=account.id)
        assert test is not None
        assert test.status == TestStatus.SUCCESS
        assert target.artifacts.read(conn, page[0].id, "html-report") == \
            f"<html>{page[0].id}</html>".encode()
        # The links the SQLite server signed keep opening on the team store's servers.
        assert link_secrets(target.data_dir, conn) == link_secrets(data_dir)
        minutes = conn.execute("SELECT SUM(n) FROM test_counts_minute").fetchone()[0]
        # Planned with statistics (analyzed after the copy): a history's first page walks
        # the index, not a scan and sort of the account's every test.
        plan = "\n".join(row[0] for row in conn.execute(
            "EXPLAIN SELECT * FROM tests WHERE account_id = ? AND created_at <= ? "
            "AND expires_at > ? ORDER BY created_at DESC, rowid DESC LIMIT 100",
            (account.id, 2**62, 0)))
    assert minutes == TESTS
    assert "Index Scan using tests_account_created" in plan, plan


def test_the_cli_copies_and_prints_the_counts(seeded: tuple[Path, str], postgres: Any) -> None:
    data_dir, _ = seeded
    url = postgres.new_database()
    # The target's URL (its password) in the environment, as docs/deployment.md says.
    env = {**os.environ, "PAGELAB_DATABASE_URL": url}
    done = subprocess.run(
        [sys.executable, "-m", "pagelab", "store", "migrate", "--from", f"sqlite://{data_dir}"],
        env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"tests               {TESTS:,} ->     {TESTS:,}  ok" in lines
    assert postgres.password not in done.stdout + done.stderr
    wrong = subprocess.run(
        [sys.executable, "-m", "pagelab", "store", "migrate", "--from",
         url.replace(f":{postgres.password}@", "@")],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert wrong.returncode != 0
    assert wrong.stderr.strip().splitlines() == [
        "pagelab: error: --from: give sqlite:///DIR (the store to copy)"]


def test_a_copy_into_sqlite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="SQLite store into a PostgreSQL one"):
        copy_store(Store(tmp_path / "a"), Store(tmp_path / "b"))


def test_issued_fleet_worker_keys_move_with_the_store(tmp_path: Path, postgres: Any) -> None:
    from pagelab.store import (
        ensure_fleet_tables,
        fleet_worker_key,
        issue_fleet_worker_key,
        revoke_fleet_worker_key,
    )

    source = Store(tmp_path / "fleet")
    with source.connection() as conn, transaction(conn, immediate=True):
        ensure_fleet_tables(conn)
        issue_fleet_worker_key(conn, "berlin", ["de"])
        issue_fleet_worker_key(conn, "berlin", ["de", "uk"])
        issue_fleet_worker_key(conn, "paris", ["fr"])
        revoke_fleet_worker_key(conn, "paris")
    target = Store(database=postgres.new_database())
    counts = {c.table: (c.source, c.target) for c in copy_store(source, target)}
    assert counts["fleet_workers"] == (2, 2)
    with target.connection() as conn:
        berlin = fleet_worker_key(conn, "berlin")
        assert berlin is not None
        assert (berlin.generation, berlin.locations) == (2, ("de", "uk"))
        assert fleet_worker_key(conn, "paris") is None  # still revoked
