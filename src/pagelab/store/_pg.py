"""The PostgreSQL backend: connections with the store's (sqlite3-shaped) surface, their
pool, and the migrations applied at start. Needs the ``postgres`` extra (psycopg 3 and
psycopg_pool).

Why not SQLAlchemy Core: the store's SQL is hand-written and tuned for SQLite (covering
indexes, ``INDEXED BY``, the deep-page counts); on PostgreSQL all but a handful of its
statements run as written. A thin adapter that rewrites those few forms, plus a few
PostgreSQL-only statements beside their SQLite twins (row locks, ``SKIP LOCKED`` claims,
blobs), keeps one function per operation and SQLite's path untouched (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import StoreError
from pagelab._url_secrets import redact_url

from ._dialect import Connection
from ._pg_schema import PG_MIGRATIONS, PG_SCHEMA_VERSION

if TYPE_CHECKING:
    import psycopg

    from ._pg_poll import Polling

__all__ = ["PgConnection", "PgPool", "connect_postgres", "migrate_postgres"]

#: Any number: the key of the advisory lock the servers of one database migrate under.
_MIGRATION_LOCK = 0x7061_6765_6C61_62  # "pagelab"


class _Row(tuple[Any, ...]):
    """A row read by position or by column name, as ``sqlite3.Row``."""

    __slots__ = ()
    _names: dict[str, int] = {}  # noqa: RUF012 (set per result shape by _row_class)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


@lru_cache(maxsize=512)
def _row_class(names: tuple[bytes, ...]) -> type[_Row]:
    columns = {name.decode(): index for index, name in enumerate(names)}
    return type("Row", (_Row,), {"__slots__": (), "_names": columns})


def _row_factory(cursor: Any) -> Any:
    # Names from the result itself: ``cursor.description`` builds an object per column
    # per query, a tenth of a hot read's client time.
    result = cursor.pgresult
    if result is None or not result.nfields:
        return tuple
    return _row_class(tuple(result.fname(index) for index in range(result.nfields)))


_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO", re.IGNORECASE)
_INDEXED_BY = re.compile(r"\bINDEXED BY \w+", re.IGNORECASE)


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """SQLite's forms the store uses, in PostgreSQL's words: ``?`` placeholders, ``BEGIN
    IMMEDIATE`` (PostgreSQL locks rows as statements touch them), ``INDEXED BY`` (its
    planner chooses), ``INSERT OR IGNORE`` (``ON CONFLICT DO NOTHING``)."""
    if sql.strip().upper() == "BEGIN IMMEDIATE":
        return "BEGIN"
    text = _INDEXED_BY.sub("", sql).replace("%", "%%").replace("?", "%s")
    if _INSERT_OR_IGNORE.match(text):
        text = _INSERT_OR_IGNORE.sub("INSERT INTO", text, count=1) + " ON CONFLICT DO NOTHING"
    return text


class PgConnection:
    """A psycopg connection in autocommit mode (transactions are explicit, as on SQLite:
    ``BEGIN`` ... ``COMMIT``), with the surface the store functions use."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        return self.raw.execute(translate(sql), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        cursor = self.raw.cursor()
        rows = list(parameters)
        if rows:
            cursor.executemany(translate(sql), rows)
        return cursor

    def rollback(self) -> None:
        self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()


def _configure(raw: psycopg.Connection[Any]) -> None:
    raw.autocommit = True
    raw.row_factory = _row_factory


class _LoopConnections:
    """The event loop's connections: an idle one is reused (last in, first out), at most
    ``size`` are open, a waiting coroutine is woken by the next return, a broken one is
    dropped. Not psycopg_pool's AsyncConnectionPool: its borrow and return cost more than
    the statement (~170 us against a few here), and this pool needs none of its upkeep
    (the sync pool beside it holds the long-lived connections)."""

    def __init__(self, url: str, size: int, polling: Polling) -> None:
        self._url = url
        self._size = max(1, size)
        self._polling = polling
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._opened = 0
        self._closed = False
        self._returned = asyncio.Condition()

    async def _acquire(self) -> psycopg.AsyncConnection[Any]:
        while True:
            if self._closed:
                raise StoreError("the event loop's connection pool is closed")
            if self._idle or self._opened < self._size:
                break
            async with self._returned:
                await self._returned.wait()
        if self._idle:
            return self._idle.pop()
        self._opened += 1
        try:
            return await _open_async(self._url, self._polling)
        except BaseException:
            self._opened -= 1
            raise

    async def _release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        from psycopg.pq import TransactionStatus

        if (conn.closed or conn.broken or self._closed
                or conn.info.transaction_status != TransactionStatus.IDLE):
            self._opened -= 1
            await conn.close()
        else:
            self._idle.append(conn)
        async with self._returned:
            self._returned.notify()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        conn = await self._acquire()
        try:
            yield conn
        finally:
            await self._release(conn)

    async def close(self) -> None:
        """Close the idle connections; one in use is closed when it comes back."""
        idle, self._idle = self._idle, []
        self._closed = True
        for conn in idle:
            self._opened -= 1
            await conn.close()


async def _open_async(url: str, polling: Polling) -> psycopg.AsyncConnection[Any]:
    import psycopg

    from ._pg_poll import PollingConnection

    try:
        raw = await PollingConnection.connect(
            url, autocommit=True, connect_timeout=30, application_name="pagelab",
            options="-c synchronous_commit=off",
        )
    except psycopg.Error as exc:
        raise StoreError(f"cannot open the store at {redact_url(url)}: {exc}") from exc
    raw.row_factory = _row_factory
    raw.polling = polling
    return raw


def _open(url: str) -> psycopg.Connection[Any]:
    import psycopg

    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=30,
                              application_name="pagelab")
    except psycopg.Error as exc:
        raise StoreError(f"cannot open the store at {redact_url(url)}: {exc}") from exc
    _configure(raw)
    return raw


_migrated: set[str] = set()
_migrated_lock = threading.Lock()


def connect_postgres(url: str) -> PgConnection:
    """A new connection to the database at ``url``, migrated (checked once per process)."""
    conn = PgConnection(_open(url))
    try:
        _ensure_migrated(url, conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_migrated(url: str, conn: PgConnection) -> None:
    with _migrated_lock:
        if url in _migrated:
            return
        migrate_postgres(conn)
        _migrated.add(url)


def migrate_postgres(conn: PgConnection) -> int:
    """Apply the migrations the database lacks, under an advisory lock (servers starting
    together migrate once); refuse a schema newer than this pagelab knows."""
    import psycopg

    try:
        conn.execute("BEGIN")
        try:
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.raw.execute(
                "CREATE TABLE IF NOT EXISTS pagelab_schema (version INTEGER NOT NULL)"
            )
            row = conn.raw.execute("SELECT version FROM pagelab_schema").fetchone()
            version = int(row[0]) if row is not None else 0
            if version > PG_SCHEMA_VERSION:
                raise StoreError(
                    f"the store has schema version {version}, newer than this pagelab "
                    f"({PG_SCHEMA_VERSION}): upgrade pagelab"
                )
            for script in PG_MIGRATIONS[version:]:
                conn.raw.execute(script.encode())  # several statements: simple protocol
            if row is None:
                conn.raw.execute("INSERT INTO pagelab_schema (version) VALUES (%s)",
                                 (PG_SCHEMA_VERSION,))
            elif version != PG_SCHEMA_VERSION:
                conn.raw.execute("UPDATE pagelab_schema SET version = %s",
                                 (PG_SCHEMA_VERSION,))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except psycopg.Error as exc:
        raise StoreError(f"cannot migrate the store: {exc}") from exc
    return PG_SCHEMA_VERSION


class PgPool:
    """:class:`~._pool.ConnectionPool`'s interface over psycopg_pool.

    No process write lock: PostgreSQL locks rows, and other servers write anyway. Writes
    are plain ``BEGIN`` ... ``COMMIT``; the store functions that read, check and update
    lock the rows they read (:func:`._dialect.row_lock`).
    """

    def __init__(self, url: str, *, size: int = 16, warm: int = 0) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        from psycopg_pool import ConnectionPool as PsycopgPool

        connect_postgres(url).close()  # migrated before any pooled connection is used
        self._url = url
        self.size = size
        self._pool: PsycopgPool[Any] = PsycopgPool(
            url, min_size=min(max(warm, 1), size), max_size=size, configure=_configure,
            kwargs={"autocommit": True, "application_name": "pagelab"}, open=True,
            name="pagelab",
        )
        self._local = threading.local()
        self._thread_connections: list[PgConnection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._loop_pool: _LoopConnections | None = None

    def acquire(self) -> PgConnection:
        if self._closed:
            raise StoreError("the connection pool is closed")
        return PgConnection(self._pool.getconn())

    def release(self, conn: PgConnection) -> None:
        if conn.in_transaction:  # an error escaped a transaction block
            conn.rollback()
        self._pool.putconn(conn.raw)

    @contextmanager
    def connection(self) -> Iterator[PgConnection]:
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def thread_connection(self, *, relaxed: bool = False) -> PgConnection:
        """The calling thread's own connection (see ConnectionPool.thread_connection).

        ``relaxed``: a second one whose commits do not wait for the WAL flush
        (``synchronous_commit = off``), for writes a crash may lose without harm (rate-limit
        buckets): a request then never waits for a disk flush.
        """
        name = "relaxed" if relaxed else "conn"
        conn: PgConnection | None = getattr(self._local, name, None)
        if conn is None:
            if self._closed:
                raise StoreError("the connection pool is closed")
            conn = connect_postgres(self._url)
            if relaxed:
                conn.execute("SET synchronous_commit = off")
            setattr(self._local, name, conn)
            with self._lock:
                self._thread_connections.append(conn)
        return conn

    @contextmanager
    def write(self, conn: Connection) -> Iterator[None]:
        """A transaction on ``conn``: commit on success, roll back on any error."""
        conn.execute("BEGIN")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def try_write(self) -> Iterator[PgConnection | None]:
        """Always None: a write may wait on another server's row lock, which the event loop
        must never do, so it goes to a worker thread (:meth:`write`)."""
        yield None

    async def open_loop_pool(self, size: int) -> None:
        """Open the event loop's connections (call in the loop that will use them). Their
        statements poll for the answer briefly while the loop has nothing else to do
        (:mod:`._pg_poll`)."""
        from ._pg_poll import Polling

        self._loop_pool = _LoopConnections(self._url, size, Polling())
        async with self._loop_pool.connection():  # one opened now: a bad URL fails at start
            pass

    @asynccontextmanager
    async def loop_connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection for a coroutine of the event loop: the loop serves other requests
        while its statement runs (a blocking read there would stall every request for a
        round trip). Autocommit, and ``synchronous_commit = off`` as the ``relaxed``
        :meth:`thread_connection`: only for reads and writes a crash may lose without
        harm (rate-limit buckets). Needs :meth:`open_loop_pool`."""
        if self._loop_pool is None or self._closed:
            raise StoreError("the event loop's connection pool is not open")
        async with self._loop_pool.connection() as conn:
            yield conn

    async def close_loop_pool(self) -> None:
        if self._loop_pool is not None:
            await self._loop_pool.close()
            self._loop_pool = None

    @property
    def opened(self) -> int:
        return int(self._pool.get_stats().get("pool_size", 0))

    def close(self) -> None:
        self._closed = True
        self._pool.close()
        with self._lock:
            connections, self._thread_connections = self._thread_connections, []
        for conn in connections:
            conn.close()
