"""Copying a whole store into another (``pagelab store migrate``): SQLite to PostgreSQL.

Table by table in foreign-key order, in chunks of rows, each chunk one transaction with
``ON CONFLICT DO NOTHING``: an interrupted copy is resumed by running it again (rows already
copied are skipped), and the source is only read. Artifacts are copied with their test
(from the source's files into the target's database or directory). The report-link secrets
go too, so links handed out before the move keep opening. At the end every table's count
is compared; a difference is an error, not a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pagelab._exceptions import StoreError

from ._dialect import Connection
from ._secrets import LINK_SECRET_FILE, read_secrets, share_link_secrets
from ._store import Store

__all__ = ["CopyCount", "copy_store"]

#: Tables in foreign-key order, with their key (the order chunks are read in) and the
#: columns both backends have. Counts and rate buckets are not copied: the counts are
#: rebuilt by the target's triggers, buckets refill in a minute.
_TABLES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("accounts", "id", (
        "id", "key_prefix", "key_hash", "lighthouse_credits", "lighthouse_paid_credits",
        "ttfb_credits", "ttfb_paid_credits", "lighthouse_plan", "ttfb_plan", "period_start",
        "created_at", "revoked_at")),
    ("batches", "id", (
        "id", "account_id", "urls_json", "devices_json", "locations_json", "batch_type",
        "config_json", "created_at", "expires_at")),
    ("tests", "id", (
        "id", "account_id", "batch_id", "position", "url", "device", "location", "config_json",
        "run_config_json", "status", "lighthouse_version", "metrics_json", "error_code",
        "error_message", "engine_failure", "vantage", "environment_json", "created_at",
        "expires_at", "started_at", "finished_at", "flow", "step", "step_index", "mode",
        "build_commit", "build_branch", "build_commit_time", "build_url",
        "build_pull_request")),
    ("credit_charges", "test_id", ("test_id", "account_id", "paid", "refunded_at")),
    # only in a SQLite store that served a fleet (ensure_fleet_tables): the issued worker
    # keys keep working after the move (dispatches are not copied: in-flight tests requeue)
    ("fleet_workers", "name", ("name", "generation", "locations", "issued_at", "revoked_at")),
)


@dataclass(frozen=True, slots=True)
class CopyCount:
    """Rows of one table in the source and, after the copy, in the target."""

    table: str
    source: int
    target: int


def _count(conn: Connection, table: str) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def copy_store(source: Store, target: Store, *, chunk: int = 1000,
               progress: Callable[[str, int], None] | None = None) -> list[CopyCount]:
    """Copy every account, key, batch, test, charge and artifact of ``source`` into
    ``target``; returns the counts, raising :class:`~pagelab.StoreError` when they differ."""
    if source.is_postgres or not target.is_postgres:
        raise StoreError("store migrate copies a SQLite store into a PostgreSQL one")
    with source.connection() as src, target.connection() as dst:
        tables = [entry for entry in _TABLES if src.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (entry[0],),
        ).fetchone() is not None]
        for table, key, columns in tables:
            names = ", ".join(columns)
            marks = ", ".join("?" * len(columns))
            insert = (f"INSERT INTO {table} ({names}) VALUES ({marks}) "
                      f"ON CONFLICT ({key}) DO NOTHING")
            last = ""
            copied = 0
            while True:
                rows = src.execute(
                    f"SELECT {names} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?",
                    (last, chunk),
                ).fetchall()
                if not rows:
                    break
                dst.execute("BEGIN")
                try:
                    dst.executemany(insert, [tuple(row) for row in rows])
                    if table == "tests":
                        _copy_artifacts(source, target, src, dst, [row[0] for row in rows])
                except BaseException:
                    dst.execute("ROLLBACK")
                    raise
                dst.execute("COMMIT")
                last = rows[-1][0]
                copied += len(rows)
                if progress is not None:
                    progress(table, copied)
        # The links handed out so far keep opening on every server.
        share_link_secrets(dst, read_secrets(source.data_dir / LINK_SECRET_FILE))
        # The planner's statistics, as after any bulk load: until autovacuum gets to the
        # copied tables (a minute or more), a list page is planned as if an account had a
        # handful of tests, a scan and sort of its whole history (50 ms a page at 50 000
        # tests, instead of 0.1 ms along the index).
        dst.execute("ANALYZE")
        counts = [CopyCount(table, _count(src, table), _count(dst, table))
                  for table in (*(t[0] for t in tables), "artifacts")]
    different = [c for c in counts if c.source != c.target]
    if different:
        raise StoreError("counts differ after the copy: " + ", ".join(
            f"{c.table} {c.source} -> {c.target}" for c in different))
    return counts


def _copy_artifacts(source: Store, target: Store, src: Connection, dst: Connection,
                    test_ids: list[str]) -> None:
    marks = ", ".join("?" * len(test_ids))
    for row in src.execute(
        f"SELECT test_id, name FROM artifacts WHERE test_id IN ({marks}) "
        "ORDER BY test_id, name", test_ids,
    ).fetchall():
        data = source.artifacts.read(src, row[0], row[1])
        if data is not None:
            target.artifacts.write(dst, row[0], row[1], data)
