"""Fixtures for the API service and its clients: a live server on loopback per test.

Every test that starts a server runs twice, on each store: SQLite (the default) and
PostgreSQL (a database of its own on the session's cluster, tests/pg_cluster.py), unless
marked ``store("sqlite")`` (SQLite's own locks and files). Tests marked ``engine`` run on
SQLite only unless their ``store`` marker names the stores: they test the engine and the
browser, not the store, and a second real Lighthouse run each would cost minutes of the CI
budget; the engine on PostgreSQL (claims, leases, artifacts in the database, two servers)
is test_team_store.py's, and that of the few engine tests about what each store's queue
does around a run (a key revoked mid-run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer, StartServer

from pagelab.service import Settings


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" not in metafunc.fixturenames:
        return
    backends = ["sqlite", "postgresql"]
    only = metafunc.definition.get_closest_marker("store")
    if only is not None:
        backends = list(only.args)
    engine = any(mark.name == "engine" for mark in metafunc.definition.iter_markers())
    if engine and only is None:
        backends = ["sqlite"]
    metafunc.parametrize("store_backend", backends)


@pytest.fixture
def database_url(store_backend: str, request: pytest.FixtureRequest) -> Callable[[], str | None]:
    """A new store's ``database_url`` per call: None (SQLite in the server's data dir) or
    a new database on the session's PostgreSQL cluster."""
    if store_backend == "sqlite":
        return lambda: None
    cluster = request.getfixturevalue("postgres")
    return lambda: str(cluster.new_database())


@pytest.fixture
def server_database(database_url: Callable[[], str | None]) -> str | None:
    """The store of a ``ServerProcess`` in a test that runs on both stores: None (SQLite
    in its data dir) or a new PostgreSQL database's URL (its ``database=``)."""
    return database_url()


@pytest.fixture
def start_server(tmp_path: Path, database_url: Callable[[], str | None]
                 ) -> Iterator[StartServer]:
    """Starts servers with the given settings (worker off unless told); stops them after.

    Tests use loopback fixture sites, so private targets are allowed unless told otherwise
    (the SSRF tests say ``allow_private_targets=False``)."""
    servers: list[LiveServer] = []

    def start(**overrides: Any) -> LiveServer:
        values: dict[str, Any] = {
            "data_dir": tmp_path / f"api-{len(servers)}",
            "worker": False,
            "allow_private_targets": True,
            **overrides,
        }
        values = {
            "database_url": database_url() if "database_url" not in overrides else None,
            **values,
        }
        server = LiveServer(Settings(**values)).__enter__()
        servers.append(server)
        return server

    yield start
    for server in reversed(servers):
        server.__exit__(None, None, None)


@pytest.fixture
def server(start_server: StartServer) -> LiveServer:
    """A server whose tests stay queued (worker off): the API and the store are real."""
    return start_server()
