"""Seed a pagelab store for ``benchmarks/api.py`` (run as a script by it).

Usage: ``PYTHONPATH=<pagelab src> python benchmarks/_seed_store.py DATA_DIR LIST_TESTS
[DATABASE_URL]`` (a ``postgresql://`` URL seeds that database instead of SQLite).

Run with the ``src`` of the pagelab under test, so the store gets that version's own schema
(its migrations). Creates, with pagelab's own storage functions: a key with 10 million
lighthouse credits and one finished (``success``) test of it; a second key whose account
holds ``LIST_TESTS`` finished tests, inserted with one ``executemany`` in one transaction
(about 600 bytes a row: 1M rows is about 0.7 GB). Prints the keys and ids as one JSON line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from pagelab.models import Device, LighthouseConfig, Location, Metrics, TestStatus
from pagelab.store import (
    Store,
    create_account,
    create_test,
    finish_test,
    transaction,
    truncate_wal,
)

_RETENTION = timedelta(days=3650)
_METRICS = Metrics(
    cumulative_layout_shift=0.02, first_contentful_paint=812.0, time_to_interactive=1650.5,
    largest_contentful_paint=1204.0, server_response_time=31.0, speed_index=990.0,
    total_blocking_time=40.0, performance_score=97.0,
)


#: Columns PostgreSQL fills itself (an identity) or that only running tests have.
_NOT_COPIED = ("id", "account_id", "rowid", "lease_owner", "lease_expires_at")


def seed(data_dir: Path, list_tests: int, database: str | None = None) -> dict[str, Any]:
    store = Store(data_dir, retention=_RETENTION, database=database)
    with store.connection() as conn:
        with transaction(conn, immediate=True):
            account, key = create_account(conn, lighthouse_credits=10_000_000, ttfb_credits=0)
            test_id = create_test(
                conn, url="http://127.0.0.1:9/fast", device=Device.MOBILE,
                location=Location.US, config=LighthouseConfig(), retention=_RETENTION,
                account_id=account.id,
            )
            finish_test(
                conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13.0.0",
                metrics=_METRICS, error=None, vantage="local", environment=None,
            )
            list_account, list_key = create_account(conn, lighthouse_credits=0, ttfb_credits=0)
        template = conn.execute("SELECT * FROM tests WHERE id = ?", (test_id,)).fetchone()
        # sqlite3.Row iterates over values: its names come from keys().
        names = template.keys()
        columns = [name for name in names if name not in _NOT_COPIED]
        created = int(template["created_at"])

        def rows() -> Iterator[tuple[Any, ...]]:
            for index in range(list_tests):
                # Newest first is by created_at: one row a second, going back in time.
                values = {**dict(template), "created_at": created - index * 1000,
                          "finished_at": created - index * 1000 + 9000}
                yield (f"lt_{index:024x}", list_account.id, *(values[c] for c in columns))

        with transaction(conn, immediate=True):
            conn.executemany(
                f"INSERT INTO tests (id, account_id, {', '.join(columns)}) "
                f"VALUES ({', '.join('?' * (len(columns) + 2))})",
                rows(),
            )
        truncate_wal(conn)
    return {"key": key, "account_id": account.id, "test_id": test_id, "list_key": list_key}


if __name__ == "__main__":
    print(json.dumps(seed(Path(sys.argv[1]), int(sys.argv[2]),
                          sys.argv[3] if len(sys.argv) > 3 else None)))
