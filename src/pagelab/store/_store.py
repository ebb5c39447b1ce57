"""The local store: one SQLite file plus an artifact directory under a data dir."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import timedelta
from pathlib import Path

from pagelab._paths import data_dir as default_data_dir

from ._artifacts import ArtifactFiles
from ._db import connect

__all__ = ["DEFAULT_RETENTION", "Store"]

#: How long tests are kept: ``$PAGELAB_RETENTION_DAYS`` days, 30 by default.
DEFAULT_RETENTION = timedelta(days=float(os.environ.get("PAGELAB_RETENTION_DAYS", "30")))


class Store:
    """``<data dir>/pagelab.sqlite3`` and ``<data dir>/artifacts/<test id>/``.

    The LocalRunner and the API service share this layout, so a server started on a data
    dir serves the history a notebook recorded there.
    """

    def __init__(self, data_dir: Path | str | None = None, *,
                 retention: timedelta = DEFAULT_RETENTION) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.db_path = self.data_dir / "pagelab.sqlite3"
        self.artifacts = ArtifactFiles(self.data_dir / "artifacts")
        self.retention = retention

    def connect(self) -> sqlite3.Connection:
        """A new migrated connection; the caller closes it."""
        return connect(self.db_path)

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with closing(self.connect()) as conn:
            yield conn

    def report_file_url(self, test_id: str) -> str | None:
        """``file://`` URL of the test's stored HTML report (None when it has none)."""
        path = self.artifacts.path(test_id, "html-report")
        return path.resolve().as_uri() if path.exists() else None

    def __repr__(self) -> str:
        return f"Store({str(self.data_dir)!r})"
