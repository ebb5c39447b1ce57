"""A real PostgreSQL cluster for the tests: ``initdb`` + ``pg_ctl`` from Debian's
``/usr/lib/postgresql/*/bin`` in a temporary directory, on a free loopback port, run as an
unprivileged user when the tests run as root (PostgreSQL refuses to run as root). No system
service is touched. Not a test module.

One cluster per test session (per xdist worker); each test gets its own database, cloned
from a migrated template, so tests never see each other's rows.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from pagelab.store import find_postgres_bin

__all__ = ["PostgresCluster"]

LOOPBACK = "127.0.0.1"
#: Who runs the server when the tests run as root: a user that owns nothing.
_UNPRIVILEGED = "nobody"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """A throwaway cluster; ``url(dbname)`` gives a ``postgresql://`` URL on it."""

    def __init__(self, *, durable: bool = False) -> None:
        bin_dir = find_postgres_bin()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is missing: pagelab setup --database "
                               "(or apt-get install -y postgresql)")
        self.bin_dir = bin_dir
        self.port = _free_port()
        self.password = secrets.token_hex(16)
        self.user = "pagelab"
        # Not under pytest's tmp dir: that is root's 0700 tree, which the server's user
        # could not enter.
        self.directory = Path(tempfile.mkdtemp(prefix="pagelab-pg-"))
        self.data = self.directory / "data"
        self._databases = 0
        #: PostgreSQL's own defaults (fsync, synchronous commits): for benchmarks.
        self.durable = durable
        self._run_as: list[str] = []
        if os.geteuid() == 0:
            account = pwd.getpwnam(_UNPRIVILEGED)
            os.chown(self.directory, account.pw_uid, account.pw_gid)
            self._run_as = ["runuser", "-u", _UNPRIVILEGED, "--"]

    def _run(self, *args: str) -> None:
        completed = subprocess.run(
            [*self._run_as, *args], capture_output=True, text=True, check=False,
            cwd=self.directory,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {completed.stderr[-2000:]}")

    def start(self) -> Self:
        password_file = self.directory / "password"
        password_file.write_text(self.password)
        if self._run_as:
            account = pwd.getpwnam(_UNPRIVILEGED)
            os.chown(password_file, account.pw_uid, account.pw_gid)
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", self.user,
                  "--pwfile", str(password_file), "--auth", "scram-sha-256",
                  "--encoding", "UTF8", "--no-instructions")
        password_file.unlink()
        # Loopback TCP only (no socket file anywhere a system server would look); no fsync
        # unless durable: a test cluster's data may be lost with the machine.
        options = (f"-c listen_addresses={LOOPBACK} -c port={self.port} "
                   "-c unix_socket_directories='' -c max_connections=300")
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.directory / "server.log"), "-o", options, "-w", "-t", "60", "start")
        return self

    def url(self, dbname: str = "postgres") -> str:
        return (f"postgresql://{self.user}:{self.password}@{LOOPBACK}:{self.port}/{dbname}")

    def new_database(self) -> str:
        """A new empty database's URL (the store migrates it on first connection)."""
        import psycopg

        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}_{int(time.time() * 1000) % 100000}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                      "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
