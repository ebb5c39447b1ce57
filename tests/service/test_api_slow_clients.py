"""Slow clients (issue 10, item 5): half-sent headers and trickled bodies are timed out, hold
no database connection, and never stop the server answering. Bounded: 350 connections,
a few seconds, all on loopback."""

from __future__ import annotations

import select
import socket
import time
from pathlib import Path

import httpx
import psutil
from live_server import LOOPBACK, ServerProcess, create_key

HALF_HEADERS = 250
SLOW_BODIES = 100


# Long enough that opening all the slow connections and one poll fit well inside it on a
# busy machine: the poll must be answered while every slow connection is still pending.
CLIENT_TIMEOUT_S = 4


def _sqlite_files(pid: int) -> int:
    return sum("pagelab.sqlite3" in f.path for f in psutil.Process(pid).open_files())


def _pending(sock: socket.socket) -> bool:
    """Nothing received and not closed: the server has not yet answered or dropped it."""
    readable, _, _ = select.select([sock], [], [], 0)
    return not readable


def _fastest_poll(base_url: str) -> float:
    """The fastest of five /healthz polls, each on a new connection."""
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        assert httpx.get(f"{base_url}/healthz", timeout=30).status_code == 200
        timings.append(time.perf_counter() - started)
    return min(timings)


def test_slow_clients_are_timed_out_and_the_server_keeps_answering(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    key = create_key(data_dir)
    log = tmp_path / "serve.log"
    server = ServerProcess(data_dir, log, "--no-worker",
                           "--header-timeout", str(CLIENT_TIMEOUT_S),
                           "--body-timeout", str(CLIENT_TIMEOUT_S),
                           "--max-connections", "400", "--max-connections-per-address", "400",
                           "--rate-limit", "100000").start()
    sockets: list[socket.socket] = []
    try:
        assert server.process is not None
        quiet_poll = _fastest_poll(server.base_url)
        for _ in range(HALF_HEADERS):
            sock = socket.create_connection((LOOPBACK, server.port), timeout=30)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            sockets.append(sock)
        bodies: list[socket.socket] = []
        for _ in range(SLOW_BODIES):
            sock = socket.create_connection((LOOPBACK, server.port), timeout=30)
            sock.sendall(
                b"POST /v1/lighthouse-tests HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n"
                + f"X-API-KEY: {key}\r\n\r\n".encode() + b'{"url": "http'
            )
            bodies.append(sock)
        sockets += bodies
        # With all of them held open, the server answers another client, and it does so
        # while every slow connection is still pending (not by first timing them out).
        health = httpx.get(f"{server.base_url}/healthz", timeout=30)
        assert health.status_code == 200
        still_pending = sum(_pending(sock) for sock in sockets)
        assert still_pending == len(sockets), f"{still_pending} of {len(sockets)} pending"
        peak_db_files = _sqlite_files(server.process.pid)

        # Then each slow connection is timed out by the server: recv returns as soon as it
        # is (the socket timeout only guards against a server that never does).
        answers = []
        for sock in sockets:
            try:
                answers.append(sock.recv(4096))
            except (TimeoutError, ConnectionResetError):
                answers.append(b"<open>")
        closed_silently = sum(a == b"" for a in answers[:HALF_HEADERS])
        timed_out_bodies = sum(a.startswith(b"HTTP/1.1 408") for a in answers[HALF_HEADERS:])
        assert closed_silently == HALF_HEADERS
        assert timed_out_bodies == SLOW_BODIES
        # And nothing of them lingers: a poll is about as quick as before they came
        # (fastest of five each, measured back to back in this test).
        settled_poll = _fastest_poll(server.base_url)
        print(f"fastest /healthz poll: {quiet_poll * 1000:.1f} ms before the slow clients,"
              f" {settled_poll * 1000:.1f} ms after")
        assert settled_poll < 10 * quiet_poll, (quiet_poll, settled_poll)
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
