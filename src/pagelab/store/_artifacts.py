"""Artifacts (LHR JSON, HTML report, screenshot, filmstrip, screenshots, video, HAR): files
beside the database, or (a PostgreSQL store without ``--artifacts-dir``) compressed in it."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
import zlib
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

from pagelab.models import HAR_FILE, REPORT_FILE

from ._dialect import Connection

__all__ = ["ARTIFACT_NAMES", "ArtifactFiles", "DatabaseArtifacts", "resource_string"]

#: Resource name -> (file name, media type). The names are the API's resource names.
ARTIFACT_NAMES: dict[str, tuple[str, str]] = {
    "lighthouse-json": ("lhr.json", "application/json"),
    "html-report": (REPORT_FILE, "text/html"),
    "screenshot": ("screenshot.txt", "text/plain"),  # a data URI
    "filmstrip": ("filmstrip.json", "application/json"),
    "screenshots": ("screenshots.json", "application/json"),
    "video": ("video.webm", "video/webm"),
    "har": (HAR_FILE, "application/json"),
}


def resource_string(name: str, data: bytes) -> str:
    """The API's one string for an artifact: text as it is, binary (the video) as a data URI.

    The service answers it and the :class:`~pagelab.LocalRunner` returns it, so both runners'
    ``resource()`` give the same string.
    """
    media_type = ARTIFACT_NAMES[name][1]
    if media_type.startswith("text/") or media_type == "application/json":
        return data.decode("utf-8", errors="replace")
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


class ArtifactFiles:
    """Files under ``root/<test id>/``, written atomically, indexed in ``artifacts``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, test_id: str, name: str) -> Path:
        return self.root / test_id / ARTIFACT_NAMES[name][0]

    def file_url(self, test_id: str, name: str) -> str | None:
        """The ``file://`` URL of the artifact, None when it has none. Read for every row of
        a listed page: strings on a root resolved once, not a path resolved per row (a third
        of the time of reading a long history)."""
        root, root_url = self._resolved_root
        filename = ARTIFACT_NAMES[name][0]
        if not os.path.exists(os.path.join(root, test_id, filename)):
            return None
        return f"{root_url}/{quote(test_id)}/{quote(filename)}"

    @cached_property
    def _resolved_root(self) -> tuple[str, str]:
        """The root resolved (symlinks, a relative path) as a path and as a file URL."""
        resolved = self.root.resolve()
        return str(resolved), resolved.as_uri()

    def write(self, conn: Connection, test_id: str, name: str, data: bytes) -> Path:
        """Write the file, then index it (call inside the transaction that finishes the test)."""
        target = self.path(test_id, name)
        # Private: 0700 directories, and mkstemp's files are 0600 (kept by the rename).
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Write then rename: a crash never leaves a half-written artifact under its name.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        conn.execute(
            "INSERT INTO artifacts (test_id, name, relpath, media_type, size) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (test_id, name) DO UPDATE SET "
            "relpath = excluded.relpath, media_type = excluded.media_type, size = excluded.size",
            (test_id, name, str(target.relative_to(self.root)), ARTIFACT_NAMES[name][1],
             len(data)),
        )
        return target

    def names(self, conn: Connection, test_id: str) -> list[str]:
        rows = conn.execute("SELECT name FROM artifacts WHERE test_id = ?", (test_id,))
        return [row["name"] for row in rows]

    def read(self, conn: Connection, test_id: str, name: str) -> bytes | None:
        """The artifact's bytes, or None when the test has no such artifact."""
        row = conn.execute(
            "SELECT relpath FROM artifacts WHERE test_id = ? AND name = ?", (test_id, name)
        ).fetchone()
        if row is None:
            return None
        relpath: str = row["relpath"]
        try:
            return (self.root / relpath).read_bytes()
        except FileNotFoundError:
            return None

    def remove(self, test_id: str) -> None:
        shutil.rmtree(self.root / test_id, ignore_errors=True)


class DatabaseArtifacts:
    """Artifacts stored in the ``artifacts`` table itself, zlib-compressed: every server of
    a PostgreSQL store reads them, with no shared directory. Deleted with their test (the
    foreign key cascades), so :meth:`remove` has nothing to do."""

    def write(self, conn: Connection, test_id: str, name: str, data: bytes) -> None:
        """Store the bytes (call inside the transaction that finishes the test)."""
        conn.execute(
            "INSERT INTO artifacts (test_id, name, relpath, media_type, size, data) "
            "VALUES (?, ?, NULL, ?, ?, ?) ON CONFLICT (test_id, name) DO UPDATE SET "
            "relpath = NULL, media_type = excluded.media_type, size = excluded.size, "
            "data = excluded.data",
            (test_id, name, ARTIFACT_NAMES[name][1], len(data), zlib.compress(data, 6)),
        )

    def names(self, conn: Connection, test_id: str) -> list[str]:
        rows = conn.execute("SELECT name FROM artifacts WHERE test_id = ?", (test_id,))
        return [row["name"] for row in rows]

    def read(self, conn: Connection, test_id: str, name: str) -> bytes | None:
        """The artifact's bytes, or None when the test has no such artifact."""
        row = conn.execute(
            "SELECT data FROM artifacts WHERE test_id = ? AND name = ?", (test_id, name)
        ).fetchone()
        if row is None or row["data"] is None:
            return None
        return zlib.decompress(row["data"])

    def remove(self, test_id: str) -> None:
        """Nothing: the rows went with the test."""
