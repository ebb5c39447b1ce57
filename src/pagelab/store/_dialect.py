"""What the store functions see of a database connection, on either backend.

The store's SQL is written for SQLite (its default, tuned there). A PostgreSQL connection
(:class:`pagelab.store._pg.PgConnection`) offers the same small surface (``execute``,
``executemany``, rows read by name or position, ``in_transaction``) and rewrites the few
SQLite-only forms; where the two must really differ (row locks, claiming queued tests,
blobs) a store function asks :func:`is_postgres` and each dialect's SQL stays beside the
other, in this package.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

__all__ = ["Connection", "Cursor", "integrity_errors", "is_postgres", "row_lock"]


class Cursor(Protocol):
    """The part of a cursor the store uses (``sqlite3.Cursor`` and psycopg's have it)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A store connection: ``sqlite3.Connection`` or :class:`~._pg.PgConnection`."""

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...


def is_postgres(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL connection (else SQLite's)."""
    return not isinstance(conn, sqlite3.Connection)


def row_lock(conn: object, of: str | None = None) -> str:
    """`` FOR UPDATE`` (of a table alias) on PostgreSQL, where a read-check-update must lock
    the rows it read (other servers write at the same time); nothing on SQLite, where
    ``BEGIN IMMEDIATE`` has taken the database's one write lock already."""
    if not is_postgres(conn):
        return ""
    return f" FOR UPDATE OF {of}" if of else " FOR UPDATE"


def integrity_errors() -> tuple[type[Exception], ...]:
    """The exceptions a broken constraint raises, on either backend."""
    try:
        import psycopg
    except ImportError:  # the postgres extra is not installed: SQLite only
        return (sqlite3.IntegrityError,)
    return (sqlite3.IntegrityError, psycopg.IntegrityError)
