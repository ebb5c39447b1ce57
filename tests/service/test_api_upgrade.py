"""The service on a store written by an older pagelab: migrated forward, nothing lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from live_server import StartServer

from pagelab.store import SCHEMA_VERSION
from pagelab.store._db import MIGRATIONS


def _version_1_store(data_dir: Path) -> None:
    """A store as pagelab wrote it before the service existed, with one local test."""
    data_dir.mkdir(parents=True)
    conn = sqlite3.connect(data_dir / "pagelab.sqlite3")
    conn.executescript(MIGRATIONS[0])
    conn.execute(
        "INSERT INTO tests (id, account_id, url, device, location, config_json, status, "
        "created_at, expires_at) VALUES ('lt_old', 'local', 'https://old.test/', 'mobile', "
        "'us', '{}', 'success', 1, 9999999999999)"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


@pytest.mark.store("sqlite")  # an old SQLite file
def test_an_old_store_is_migrated_and_keeps_its_tests(
    tmp_path: Path, start_server: StartServer
) -> None:
    data_dir = tmp_path / "old"
    _version_1_store(data_dir)
    server = start_server(data_dir=data_dir, worker=True)
    with server.client() as client:
        health = client.get("/healthz").json()
    assert health["schema_version"] == SCHEMA_VERSION >= 2
    with sqlite3.connect(data_dir / "pagelab.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT url, status FROM tests").fetchall() == [
            ("https://old.test/", "success")]
        # The worker leaves the local account's tests alone.
        assert conn.execute("SELECT COUNT(*) FROM accounts").fetchone()[0] == 0
    # Another account cannot see the local history.
    with server.client(server.key()) as client:
        assert client.get("/v1/lighthouse-tests/lt_old").status_code == 404
