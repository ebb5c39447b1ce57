"""The store: SQLite (a file plus an artifact directory under a data dir, the default) or a
PostgreSQL database that several servers share (a team store)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pagelab._exceptions import InvalidInputError
from pagelab._paths import data_dir as default_data_dir
from pagelab._url_secrets import redact_url

from ._artifacts import ArtifactFiles, DatabaseArtifacts
from ._db import connect
from ._dialect import Connection

if TYPE_CHECKING:
    from ._pg import PgPool
    from ._pool import ConnectionPool

__all__ = ["DATABASE_URL_ENV", "DEFAULT_RETENTION", "Store", "parse_database_url"]

#: How long tests are kept: ``$PAGELAB_RETENTION_DAYS`` days, 30 by default.
DEFAULT_RETENTION = timedelta(days=float(os.environ.get("PAGELAB_RETENTION_DAYS", "30")))

#: The variable ``pagelab serve``, ``keys`` and ``worker`` read when ``--database`` is unset.
DATABASE_URL_ENV = "PAGELAB_DATABASE_URL"

Dialect = Literal["sqlite", "postgresql"]


def parse_database_url(url: str) -> tuple[Dialect, str]:
    """``("sqlite", data dir)`` for ``sqlite:///DIR`` (the store's directory, as
    ``--data-dir``), ``("postgresql", url)`` for ``postgresql://…``; a one-line
    :class:`~pagelab.InvalidInputError` for anything else."""
    text = url.strip()
    if text.startswith("sqlite:///"):
        return "sqlite", "/" + text.removeprefix("sqlite:///").lstrip("/")
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql", text
    raise InvalidInputError(
        f"--database: {redact_url(text)[:60]!r} is not sqlite:///DIR or "
        "postgresql://USER@HOST/DBNAME"
    )


class Store:
    """SQLite: ``<data dir>/pagelab.sqlite3`` and ``<data dir>/artifacts/<test id>/``; the
    LocalRunner and the API service share this layout, so a server started on a data dir
    serves the history a notebook recorded there.

    PostgreSQL (``database="postgresql://…"``): every table in that database, artifacts
    compressed in it unless ``artifacts_dir`` names a directory all servers share; the data
    dir keeps only this machine's files (locks).
    """

    def __init__(self, data_dir: Path | str | None = None, *,
                 retention: timedelta = DEFAULT_RETENTION, database: str | None = None,
                 artifacts_dir: Path | str | None = None) -> None:
        dialect: Dialect = "sqlite"
        self.database_url: str | None = None
        if database:
            dialect, where = parse_database_url(database)
            if dialect == "sqlite":
                if data_dir is not None and Path(data_dir).resolve() != Path(where).resolve():
                    raise InvalidInputError(
                        f"--database {database} and --data-dir {data_dir} disagree: give one"
                    )
                data_dir = where
            else:
                self.database_url = where
        self.dialect: Dialect = dialect
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.db_path = self.data_dir / "pagelab.sqlite3"
        self.artifacts: ArtifactFiles | DatabaseArtifacts
        if artifacts_dir is not None:
            self.artifacts = ArtifactFiles(Path(artifacts_dir))
        elif dialect == "postgresql":
            self.artifacts = DatabaseArtifacts()
        else:
            self.artifacts = ArtifactFiles(self.data_dir / "artifacts")
        self.retention = retention

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    def connect(self) -> Connection:
        """A new migrated connection; the caller closes it."""
        if self.database_url is not None:
            from ._pg import connect_postgres

            return connect_postgres(self.database_url)
        return connect(self.db_path)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        with closing(self.connect()) as conn:
            yield conn

    def pool(self, *, size: int = 16, warm: int = 0) -> ConnectionPool | PgPool:
        """A pool of connections for a server's threads (see :class:`ConnectionPool`)."""
        if self.database_url is not None:
            from ._pg import PgPool

            return PgPool(self.database_url, size=size, warm=warm)
        from ._pool import ConnectionPool

        return ConnectionPool(self, size=size, warm=warm)

    def report_file_url(self, test_id: str) -> str | None:
        """``file://`` URL of the test's stored HTML report (None when it has none, or when
        it is kept in the database)."""
        if not isinstance(self.artifacts, ArtifactFiles):
            return None
        return self.artifacts.file_url(test_id, "html-report")

    def __repr__(self) -> str:
        if self.database_url is not None:
            return f"Store({redact_url(self.database_url)!r})"
        return f"Store({str(self.data_dir)!r})"
