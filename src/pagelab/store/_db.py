"""The SQLite file: connections, migrations, transactions."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from pagelab._exceptions import StoreError

from ._dialect import Connection, is_postgres

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "connect",
    "make_private",
    "migrate",
    "transaction",
    "truncate_wal",
]

#: Migration 3's trigger bodies: count a test (NEW) into its minute and day, or take one
#: (OLD) out of them; a move does both.
_COUNT_NEW = """\
        INSERT INTO test_counts_minute (account_id, minute, n) VALUES (NEW.account_id,
            NEW.created_at / 60000 - (NEW.created_at % 60000 < 0), 1)
        ON CONFLICT (account_id, minute) DO UPDATE SET n = n + 1;
        INSERT INTO test_counts_day (account_id, day, n) VALUES (NEW.account_id,
            NEW.created_at / 86400000 - (NEW.created_at % 86400000 < 0), 1)
        ON CONFLICT (account_id, day) DO UPDATE SET n = n + 1;
"""
_UNCOUNT_OLD = """\
        UPDATE test_counts_minute SET n = n - 1 WHERE account_id = OLD.account_id
            AND minute = OLD.created_at / 60000 - (OLD.created_at % 60000 < 0);
        UPDATE test_counts_day SET n = n - 1 WHERE account_id = OLD.account_id
            AND day = OLD.created_at / 86400000 - (OLD.created_at % 86400000 < 0);
"""

# Forward-only migrations: entry i takes the schema from version i to i + 1. Never edit a
# released entry; append a new one, so an upgrade never loses stored data.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        urls_json TEXT NOT NULL,
        devices_json TEXT NOT NULL,
        locations_json TEXT NOT NULL,
        batch_type TEXT NOT NULL,
        config_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    );
    CREATE INDEX batches_account ON batches (account_id, created_at);
    CREATE TABLE tests (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        batch_id TEXT REFERENCES batches (id) ON DELETE CASCADE,
        position INTEGER NOT NULL DEFAULT 0,
        url TEXT NOT NULL,
        device TEXT NOT NULL,
        location TEXT NOT NULL,
        -- masked: what responses echo
        config_json TEXT NOT NULL,
        -- the unmasked config, kept only until the test has run
        run_config_json TEXT,
        status TEXT NOT NULL,
        lighthouse_version TEXT,
        metrics_json TEXT,
        error_code TEXT,
        error_message TEXT,
        engine_failure INTEGER NOT NULL DEFAULT 0,
        vantage TEXT,
        environment_json TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER
    );
    CREATE INDEX tests_account_created ON tests (account_id, created_at);
    CREATE INDEX tests_status ON tests (status, created_at);
    CREATE INDEX tests_batch ON tests (batch_id, position);
    CREATE INDEX tests_expires ON tests (expires_at);
    CREATE TABLE artifacts (
        test_id TEXT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        relpath TEXT NOT NULL,
        media_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        PRIMARY KEY (test_id, name)
    );
    """,
    # 2: API service accounts (one per key, stored as a hash), their credit pools, the
    # charge of each test (so an engine failure refunds the pool it was paid from) and
    # server-side secrets (the key that signs hosted report links).
    """
    CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        key_prefix TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL,
        lighthouse_credits INTEGER NOT NULL CHECK (lighthouse_credits >= 0),
        lighthouse_paid_credits INTEGER NOT NULL DEFAULT 0 CHECK (lighthouse_paid_credits >= 0),
        ttfb_credits INTEGER NOT NULL CHECK (ttfb_credits >= 0),
        ttfb_paid_credits INTEGER NOT NULL DEFAULT 0 CHECK (ttfb_paid_credits >= 0),
        lighthouse_plan INTEGER NOT NULL CHECK (lighthouse_plan >= 0),
        ttfb_plan INTEGER NOT NULL CHECK (ttfb_plan >= 0),
        period_start INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    CREATE TABLE credit_charges (
        test_id TEXT PRIMARY KEY REFERENCES tests (id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        paid INTEGER NOT NULL,
        refunded_at INTEGER
    );
    CREATE INDEX tests_engine_failures ON tests (id) WHERE engine_failure = 1;
    CREATE TABLE service_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 3: per-account counts of tests by minute and by day of created_at (epoch ms, floor
    # division: `x / u - (x % u < 0)`), kept by triggers in the transaction of every
    # insert, delete or move, so a deep page of the list finds where it starts from the
    # counts instead of stepping over every index entry before it (_records.list_tests).
    # Existing rows are counted here; counts that drop to 0 are removed by the sweep.
    """
    CREATE TABLE test_counts_minute (
        account_id TEXT NOT NULL,
        minute INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (account_id, minute)
    ) WITHOUT ROWID;
    CREATE TABLE test_counts_day (
        account_id TEXT NOT NULL,
        day INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (account_id, day)
    ) WITHOUT ROWID;
    CREATE TRIGGER tests_count_insert AFTER INSERT ON tests BEGIN
""" + _COUNT_NEW + """    END;
    CREATE TRIGGER tests_count_delete AFTER DELETE ON tests BEGIN
""" + _UNCOUNT_OLD + """    END;
    CREATE TRIGGER tests_count_move AFTER UPDATE OF account_id, created_at ON tests BEGIN
""" + _UNCOUNT_OLD + _COUNT_NEW + """    END;
    INSERT INTO test_counts_minute (account_id, minute, n)
    SELECT account_id, created_at / 60000 - (created_at % 60000 < 0), COUNT(*)
    FROM tests GROUP BY 1, 2;
    INSERT INTO test_counts_day (account_id, day, n)
    SELECT account_id, created_at / 86400000 - (created_at % 86400000 < 0), COUNT(*)
    FROM tests GROUP BY 1, 2;
    """,
    # 4: the user flow step a test measured (a LocalRunner stores each step of a flow run
    # as a test): the flow's name, the step's name, its index (1-based) and mode; NULL
    # for a page test.
    """
    ALTER TABLE tests ADD COLUMN flow TEXT;
    ALTER TABLE tests ADD COLUMN step TEXT;
    ALTER TABLE tests ADD COLUMN step_index INTEGER;
    ALTER TABLE tests ADD COLUMN mode TEXT;
    """,
    # 5: the build a test measured (docs/history.md, "Build context"): its commit, branch,
    # commit time (epoch ms), CI build page and pull request; NULL when unknown (every
    # older row).
    """
    ALTER TABLE tests ADD COLUMN build_commit TEXT;
    ALTER TABLE tests ADD COLUMN build_branch TEXT;
    ALTER TABLE tests ADD COLUMN build_commit_time INTEGER;
    ALTER TABLE tests ADD COLUMN build_url TEXT;
    ALTER TABLE tests ADD COLUMN build_pull_request TEXT;
    """,
)


SCHEMA_VERSION = len(MIGRATIONS)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the store's SQLite file."""
    try:
        make_private(path.parent, directory=True)
        # Two processes opening a new file at once race on the switch to WAL and on the first
        # migration, and SQLite answers the loser "database is locked" without waiting. A
        # sidecar flock serialises that set-up; it is held for microseconds once migrated.
        with filelock.FileLock(f"{path}.lock", timeout=60, mode=0o600):
            # SQLite creates the WAL and shared-memory files with the database file's mode,
            # so creating it 0600 keeps all three private. Only when it is missing: closing
            # any descriptor of the file drops every POSIX lock this process holds on it,
            # its open connections' included, and another process closing its last
            # connection would then delete the WAL and shared memory under them.
            if not path.exists():
                os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                make_private(name)
            # isolation_level=None: transactions are explicit (see transaction()).
            conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            try:
                _configure(conn)
                migrate(conn)
            except BaseException:
                conn.close()
                raise
    except (sqlite3.Error, OSError) as exc:  # filelock.Timeout is an OSError
        raise StoreError(f"cannot open the store at {path}: {exc}") from exc
    return conn


def make_private(path: Path, *, directory: bool = False) -> None:
    """Only the owner may read ``path`` (0600; 0700 for a directory, created if missing).

    The store holds key hashes, queued tests' clear configs and reports of tested pages.
    A path owned by another user is left alone (we could not change it anyway).
    """
    if directory:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    if info.st_uid != os.getuid():
        return
    wanted = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
    if stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(stat.S_IMODE(info.st_mode) & wanted)


def _configure(conn: sqlite3.Connection) -> None:
    conn.row_factory = sqlite3.Row
    # WAL: readers never block the writer, and a crash mid-write loses nothing committed.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    # Deleted content is overwritten, so a config forgotten after its run (passwords,
    # cookies) does not linger in the file's free pages.
    conn.execute("PRAGMA secure_delete=ON")


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this file lacks; returns the schema version."""
    # Every connection checks; only an outdated file takes the write lock.
    if int(conn.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    with transaction(conn, immediate=True):
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store has schema version {version}, newer than this pagelab "
                f"({SCHEMA_VERSION}): upgrade pagelab"
            )
        for script in MIGRATIONS[version:]:
            for statement in _statements(script):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return SCHEMA_VERSION


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration script, one by one (``executescript`` would commit
    the open transaction). A trigger's body holds semicolons: a piece is a statement once
    SQLite says it is complete."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending
            pending = ""
    if pending.strip(" \n;"):
        raise StoreError(f"incomplete statement in a migration: {pending.strip()[:200]}")


@contextmanager
def transaction(conn: Connection, *, immediate: bool = False) -> Iterator[None]:
    """Commit on success, roll back on any error, so a failed write changes nothing."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def truncate_wal(conn: Connection) -> None:
    """Copy the write-ahead log into the database and empty it.

    The log keeps old page images, among them the unmasked config of a test that has just
    run. Busy readers make this a no-op; the next call catches up. PostgreSQL has no such
    log to empty (its WAL is the server's, recycled by its checkpoints).
    """
    if is_postgres(conn):
        return
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
