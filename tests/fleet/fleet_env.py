"""A real fleet on this machine for the tests: ``redis-server`` on a free loopback port
(temporary directory, AOF on), ``pagelab serve --broker`` and ``pagelab worker`` child
processes. Not a test module."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Self

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from live_server import (
    LOOPBACK,
    ServerProcess,
    create_key,
    free_port,
    pagelab_env,
)

__all__ = [
    "FLEET_SECRET",
    "RedisServer",
    "ServerProcess",
    "WorkerProcess",
    "api",
    "create_key",
    "wait_for",
]

FLEET_SECRET = "fleet-test-secret-0123456789"


def wait_for(condition: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


class RedisServer:
    """``redis-server`` on loopback with append-only persistence in ``directory``."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is missing: apt-get install -y redis-server")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://{LOOPBACK}:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        self.directory.mkdir(parents=True, exist_ok=True)
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", LOOPBACK, "--dir",
             str(self.directory), "--appendonly", "yes", "--appendfsync", "always",
             "--save", "", "--protected-mode", "yes"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        import redis

        client = redis.Redis(host=LOOPBACK, port=self.port)
        wait_for(lambda: self._ping(client), 20, "redis-server to answer PING", 0.05)
        return self

    @staticmethod
    def _ping(client: Any) -> bool:
        try:
            return bool(client.ping())
        except Exception:
            return False

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)


class WorkerProcess:
    """``python -m pagelab worker`` in a child process, its output in ``log_path``."""

    def __init__(self, broker: str, locations: str, name: str, log_path: Path,
                 *extra: str) -> None:
        self.name = name
        self.log_path = log_path
        self._args = [sys.executable, "-m", "pagelab", "worker", "--broker", broker,
                      "--locations", locations, "--name", name, *extra]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self._args, env=pagelab_env(PAGELAB_FLEET_SECRET=FLEET_SECRET),
                stdout=log, stderr=subprocess.STDOUT,
            )
        wait_for(lambda: b" ready." in self.log_path.read_bytes() or self._exited(), 60,
                 f"worker {self.name} to be ready")
        if self._exited():
            raise RuntimeError(f"worker exited: {self.log_path.read_text()[-2000:]}")
        return self

    def _exited(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def api(server: ServerProcess, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, headers={"X-API-KEY": key}, timeout=30)
