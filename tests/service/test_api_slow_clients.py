"""Slow clients (issue 10, item 5): half-sent headers and trickled bodies are timed out, hold
no database connection, and never stop the server answering. Bounded: 350 connections,
a few seconds, all on loopback."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import psutil
from live_server import LOOPBACK, ServerProcess, create_key

HALF_HEADERS = 250
SLOW_BODIES = 100


def _sqlite_files(pid: int) -> int:
    return sum("pagelab.sqlite3" in f.path for f in psutil.Process(pid).open_files())


def test_slow_clients_are_timed_out_and_the_server_keeps_answering(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    key = create_key(data_dir)
    log = tmp_path / "serve.log"
    server = ServerProcess(data_dir, log, "--no-worker", "--header-timeout", "1",
                           "--body-timeout", "1", "--max-connections", "400",
                           "--max-connections-per-address", "400",
                           "--rate-limit", "100000").start()
    sockets: list[socket.socket] = []
    try:
        assert server.process is not None
        for _ in range(HALF_HEADERS):
            sock = socket.create_connection((LOOPBACK, server.port), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            sockets.append(sock)
        bodies: list[socket.socket] = []
        for _ in range(SLOW_BODIES):
            sock = socket.create_connection((LOOPBACK, server.port), timeout=5)
            sock.sendall(
                b"POST /v1/lighthouse-tests HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n"
                + f"X-API-KEY: {key}\r\n\r\n".encode() + b'{"url": "http'
            )
            bodies.append(sock)
        sockets += bodies
        # Held open right now, the server still answers at once.
        started = time.monotonic()
        health = httpx.get(f"{server.base_url}/healthz", timeout=5)
        assert health.status_code == 200
        assert time.monotonic() - started < 1.0
        peak_db_files = _sqlite_files(server.process.pid)

        time.sleep(2.5)  # past both timeouts
        answers = []
        for sock in sockets:
            sock.settimeout(2)
            try:
                answers.append(sock.recv(4096))
            except (TimeoutError, ConnectionResetError):
                answers.append(b"<open>")
        closed_silently = sum(a == b"" for a in answers[:HALF_HEADERS])
        timed_out_bodies = sum(a.startswith(b"HTTP/1.1 408") for a in answers[HALF_HEADERS:])
        assert closed_silently == HALF_HEADERS
        assert timed_out_bodies == SLOW_BODIES
        started = time.monotonic()
        assert httpx.get(f"{server.base_url}/healthz", timeout=5).status_code == 200
        assert time.monotonic() - started < 1.0
        settled_db_files = _sqlite_files(server.process.pid)
    finally:
        for sock in sockets:
            sock.close()
        server.stop()
    # A slow body never held a database connection: the open database files stay within
    # the bounded pool (16 connections, each the database and its WAL).
    print(f"database files open: {peak_db_files} at the peak, {settled_db_files} after")
    assert peak_db_files <= 2 * 16, peak_db_files
    assert settled_db_files <= 2 * 16, settled_db_files
    output = log.read_text()
    assert " 500 " not in output
    assert "Traceback" not in output
