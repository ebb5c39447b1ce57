"""Fixtures for the API service and its clients: a live server on loopback per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer, StartServer

from pagelab.service import Settings


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
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
