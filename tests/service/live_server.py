"""Real servers of the API for the tests: uvicorn on 127.0.0.1 on a random port, over a real
SQLite store in a temporary directory, or a PostgreSQL database. Not a test module.

- :class:`LiveServer` runs ``create_app(settings)`` in a thread of the test process (fast:
  most tests use it with the worker off, so tests stay queued).
- :class:`ScriptedServer` answers from a script: another server of the API as a client
  may meet it.
- :class:`ServerProcess` runs ``python -m pagelab serve`` as a child process, for what a
  thread cannot show: SIGKILL, a restart, the server's own log output.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx
import uvicorn

import pagelab
import processes
from pagelab.service import Settings, create_app, server_config
from pagelab.store import Store, create_account, transaction

__all__ = [
    "LiveServer",
    "ScriptedServer",
    "ServerProcess",
    "StartServer",
    "create_key",
    "free_port",
    "pagelab_env",
    "run_cli",
    "run_store_cli",
    "store_env",
    "wait_final",
]

LOOPBACK = "127.0.0.1"


def create_key(data_dir: Path, *, lighthouse: int = 100, ttfb: int = 100,
               database: str | None = None) -> str:
    """A new API key with these monthly credits, written straight into the store."""
    with Store(data_dir, database=database).connection() as conn, \
            transaction(conn, immediate=True):
        _, key = create_account(conn, lighthouse_credits=lighthouse, ttfb_credits=ttfb)
    return key


class LiveServer:
    """The app served by uvicorn in a background thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = create_app(settings)
        # The configuration `pagelab serve` uses (header timeout, connection cap).
        self._server = uvicorn.Server(
            server_config(self.app, settings, host=LOOPBACK, port=0, log_level="warning")
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def data_dir(self) -> Path:
        return self.settings.data_dir

    @property
    def base_url(self) -> str:
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://{LOOPBACK}:{port}"

    @property
    def running_test(self) -> str | None:
        """The test the server's worker has taken and not yet finished (None: idle)."""
        current: str | None = self.app.state.worker.current_test
        return current

    @property
    def store(self) -> Store:
        """The server's store (SQLite in its data dir, or its PostgreSQL database)."""
        return Store(self.data_dir, database=self.settings.database_url,
                     artifacts_dir=self.settings.artifacts_dir)

    def store_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m pagelab ARGS`` on this server's store (``pagelab keys ...``)."""
        return run_store_cli(self.data_dir, self.settings.database_url, *args)

    def stored_bytes(self) -> bytes:
        """Everything the store holds, as bytes: the SQLite file, or every row of every
        PostgreSQL table as text (to show what is, and is not, written down)."""
        if self.settings.database_url is None:
            return (self.data_dir / "pagelab.sqlite3").read_bytes()
        with self.store.connection() as conn:
            tables = [row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
            return b"\n".join(
                str(row[0]).encode() for table in tables
                for row in conn.execute(f"SELECT t::text FROM {table} AS t")
            )

    def key(self, *, lighthouse: int = 100, ttfb: int = 100) -> str:
        return create_key(self.data_dir, lighthouse=lighthouse, ttfb=ttfb,
                          database=self.settings.database_url)

    def client(self, key: str | None = None) -> httpx.Client:
        """A plain httpx client (the wire as it is, no pagelab.Client)."""
        headers = {"X-API-KEY": key} if key is not None else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30)

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the API server did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(30)


#: The ``start_server`` fixture: ``start_server(**settings) -> LiveServer``.
StartServer = Callable[..., "LiveServer"]


def wait_final(client: httpx.Client, test_id: str, timeout: float = 600) -> dict[str, Any]:
    """The report of Lighthouse test ``test_id`` once it is ``success`` or ``failed``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report: dict[str, Any] = client.get(f"/v1/lighthouse-tests/{test_id}").json()
        if report["status"] in ("success", "failed"):
            return report
        time.sleep(0.5)
    raise AssertionError(f"test {test_id} did not finish")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def pagelab_env(**extra: str) -> dict[str, str]:
    """The environment for a child process that imports this very pagelab."""
    source = str(Path(pagelab.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m pagelab ARGS`` in a child process (with ``env`` added to its
    environment)."""
    return subprocess.run(
        [sys.executable, "-m", "pagelab", *args], env=pagelab_env(**env), capture_output=True,
        text=True, timeout=120, check=False,
    )


def store_env(database: str | None) -> dict[str, str]:
    """The environment naming a PostgreSQL store, as an operator gives it: never on the
    command line, where every local user would read its password."""
    return {"PAGELAB_DATABASE_URL": database} if database else {}


def run_store_cli(data_dir: Path, database: str | None,
                  *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pagelab ARGS --data-dir DIR`` on that store (``database``: PostgreSQL's
    URL, else SQLite in ``data_dir``)."""
    return run_cli(*args, "--data-dir", str(data_dir), **store_env(database))


class ServerProcess:
    """``python -m pagelab serve`` in a child process, its output in ``log_path``.

    Tests serve their fixture sites on loopback, so the server allows private targets
    unless ``allow_private_targets=False`` (the SSRF tests). ``database``: a PostgreSQL
    store's URL (in ``$PAGELAB_DATABASE_URL``); None, SQLite in ``data_dir``."""

    def __init__(self, data_dir: Path, log_path: Path, *extra_args: str,
                 allow_private_targets: bool = True, env: dict[str, str] | None = None,
                 database: str | None = None) -> None:
        self.data_dir = data_dir
        self.log_path = log_path
        self.database = database
        self.port = free_port()
        self.base_url = f"http://{LOOPBACK}:{self.port}"
        self._args = (*extra_args, *(["--allow-private-targets"] if allow_private_targets else []))
        self._env = {**(env or {}), **store_env(database)}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pagelab", "serve", "--host", LOOPBACK, "--port",
                 str(self.port), "--data-dir", str(self.data_dir), *self._args],
                env=pagelab_env(**self._env), stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the server did not answer /healthz within 60 s")

    def health(self) -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(f"{self.base_url}/healthz", timeout=10).json()
        return body

    def key(self, *, lighthouse: int = 100, ttfb: int = 100) -> str:
        """A new API key in this server's store (see :func:`create_key`)."""
        return create_key(self.data_dir, lighthouse=lighthouse, ttfb=ttfb,
                          database=self.database)

    def store_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m pagelab ARGS`` on this server's store (``pagelab keys ...``)."""
        return run_store_cli(self.data_dir, self.database, *args)

    def descendants(self) -> list[int]:
        """Pids of the processes the server started (Chromium, Node) and theirs."""
        import psutil

        assert self.process is not None
        try:
            return [child.pid for child in psutil.Process(self.process.pid).children(True)]
        except psutil.NoSuchProcess:
            return []

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when the machine loses power."""
        assert self.process is not None
        processes.kill(self.process)

    def stop(self) -> None:
        """SIGTERM, the way a service manager stops it; waits for a clean exit."""
        if self.process is not None:
            processes.stop(self.process)


class ScriptedServer:
    """A real HTTP server on loopback that answers each request with the next scripted
    response for its method and path: another server of the API, as a client meets it
    (flaky, slow to say "completed", writing timestamps in seconds)."""

    def __init__(self, script: dict[tuple[str, str], list[tuple[int, Any, dict[str, str]]]]):
        self.script = {key: list(answers) for key, answers in script.items()}
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                path = self.path.split("?", 1)[0]
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                outer.requests.append((self.command, path))
                answers = outer.script.get((self.command, path)) or [
                    (404, {"code": "not_found", "message": "not scripted"}, {})
                ]
                status, body, headers = answers.pop(0) if len(answers) > 1 else answers[0]
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.base_url = f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
