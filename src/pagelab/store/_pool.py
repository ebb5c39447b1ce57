"""A pool of store connections shared by the threads of one process (the API server)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from pagelab._exceptions import StoreError

from ._db import connect
from ._dialect import Connection

__all__ = ["ConnectionPool"]


class _SqliteStore(Protocol):
    """What the pool needs of a :class:`~._store.Store`: its SQLite file."""

    @property
    def db_path(self) -> Path: ...


def _commit(conn: Connection) -> None:
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a failed COMMIT may leave the transaction open
            conn.execute("ROLLBACK")
        raise


class ConnectionPool:
    """Migrated SQLite connections, opened once and reused across threads.

    Opening a connection checks the schema under a file lock, too costly per request, so
    the pool never closes a connection it opened until :meth:`close`: size it to the
    process's concurrency (the threads that may hold one at once) and, after warm-up, a
    request never opens one. Past ``size`` borrowers wait on a condition (woken by the
    next return, no polling).

    Writes: :meth:`write` runs a ``BEGIN IMMEDIATE`` transaction under the process's write
    lock, so the process's writers queue on that lock and start the instant the previous
    one commits, instead of sleeping in SQLite's busy handler (whose back-off grows to
    100 ms steps). The busy timeout still covers other processes (a notebook, the CLI).
    """

    def __init__(self, store: _SqliteStore, *, size: int = 16, warm: int = 0) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self._store = store
        self.size = size
        self._idle: list[sqlite3.Connection] = []
        self._opened = 0
        self._closed = False
        self._available = threading.Condition(threading.Lock())
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._thread_connections: list[sqlite3.Connection] = []
        for _ in range(min(warm, size)):
            self._idle.append(connect(store.db_path))
            self._opened += 1

    def acquire(self) -> sqlite3.Connection:
        """A connection for the caller's exclusive use; give it back with :meth:`release`."""
        with self._available:
            while not self._idle and self._opened >= self.size and not self._closed:
                self._available.wait()
            if self._closed:
                raise StoreError("the connection pool is closed")
            if self._idle:
                return self._idle.pop()
            self._opened += 1  # reserved: opened outside the lock
        try:
            return connect(self._store.db_path)
        except BaseException:
            with self._available:
                self._opened -= 1
                self._available.notify()
            raise

    def release(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:  # an error escaped a transaction block
            conn.rollback()
        with self._available:
            if self._closed:
                self._opened -= 1
                conn.close()
                return
            self._idle.append(conn)
            self._available.notify()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def thread_connection(self) -> sqlite3.Connection:
        """The calling thread's own connection, opened on its first call and kept (not
        counted in ``size``).

        For the server's event loop: a coroutine can read on it without a thread hop or
        a borrow, since the loop runs one coroutine at a time. Never await while a
        transaction is open on it (another coroutine would run inside it), and keep to
        short reads: the loop waits for them.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError("the connection pool is closed")
            conn = self._local.conn = connect(self._store.db_path)
            with self._available:
                self._thread_connections.append(conn)
        return conn

    @contextmanager
    def write(self, conn: Connection) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` on ``conn`` under the process's write lock; commit on
        success, roll back on any error. Keep the block short: every writer waits on it."""
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            _commit(conn)

    @contextmanager
    def try_write(self) -> Iterator[sqlite3.Connection | None]:
        """The calling thread's own write connection inside ``BEGIN IMMEDIATE``, under the
        process's write lock, when both that lock and SQLite's are free right now; None
        when either is taken (then nothing waited: do the write with :meth:`write` on a
        worker thread). Commits on success, rolls back on any error.

        For the server's event loop: a short write (a credit and one insert) costs less
        than the thread hop around it, but the loop must never wait, so the lock is
        tried, not awaited, and the connection's busy timeout is 0. Never await inside.
        """
        if not self._write_lock.acquire(blocking=False):
            yield None
            return
        try:
            conn = self._thread_write_connection()
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            self._write_lock.release()
            # Another process (the CLI, a notebook, a fleet worker) is writing.
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                yield None
                return
            raise
        except BaseException:
            self._write_lock.release()
            raise
        try:
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            _commit(conn)
        finally:
            self._write_lock.release()

    def _thread_write_connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "write_conn", None)
        if conn is None:
            if self._closed:
                raise StoreError("the connection pool is closed")
            conn = connect(self._store.db_path)
            conn.execute("PRAGMA busy_timeout = 0")
            self._local.write_conn = conn
            with self._available:
                self._thread_connections.append(conn)
        return conn

    @property
    def opened(self) -> int:
        """Connections opened so far and not closed."""
        return self._opened

    def close(self) -> None:
        with self._available:
            self._closed = True
            idle, self._idle = self._idle, []
            self._opened -= len(idle)
            idle += self._thread_connections
            self._thread_connections = []
            self._available.notify_all()
        for conn in idle:
            conn.close()
