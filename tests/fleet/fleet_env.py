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

import processes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from live_server import (
    LOOPBACK,
    ServerProcess,
    create_key,
    free_port,
    pagelab_env,
    store_env,
)

__all__ = [
    "FLEET_ENV",
    "FLEET_SECRET",
    "RedisServer",
    "ServerProcess",
    "WorkerProcess",
    "api",
    "create_key",
    "issue_worker_key",
    "peak_rss_mb",
    "run_cli_with_secret",
    "wait_for",
]

FLEET_SECRET = "fleet-test-secret-0123456789"
#: The server's environment: the secret from the environment, never the command line.
FLEET_ENV = {"PAGELAB_FLEET_SECRET": FLEET_SECRET}


def run_cli_with_secret(*args: str, database: str | None = None
                        ) -> subprocess.CompletedProcess[str]:
    """``python -m pagelab ARGS`` with the fleet secret (and the PostgreSQL store's URL,
    when given) in its environment."""
    return subprocess.run(
        [sys.executable, "-m", "pagelab", *args],
        env=pagelab_env(**FLEET_ENV, **store_env(database)),
        capture_output=True, text=True, timeout=60, check=False,
    )


def issue_worker_key(data_dir: Path, name: str, locations: str,
                     database: str | None = None) -> str:
    """A key for worker ``name``, issued as an operator does: `pagelab worker-key issue`
    (in the PostgreSQL store at ``database`` when given)."""
    store = [] if database else ["--data-dir", str(data_dir)]
    done = run_cli_with_secret("worker-key", "issue", name, "--locations", locations, *store,
                               database=database)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def wait_for(condition: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def peak_rss_mb(pid: int) -> float:
    """The most memory process ``pid`` has held so far (``VmHWM``, MiB): a decompressed
    bomb leaves its mark here even once freed."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 signed by it:
    ``(ca.pem, server.pem, server.key)``."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder().subject_name(name("pagelab test CA"))
        .issuer_name(name("pagelab test CA")).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(name(LOOPBACK)).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(LOOPBACK)), x509.DNSName("localhost")]
        ), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = (directory / "ca.pem", directory / "server.pem", directory / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    paths[2].chmod(0o600)
    return paths


class RedisServer:
    """``redis-server`` on loopback with append-only persistence in ``directory``; with
    ``tls=True`` on a TLS port only (a throwaway CA in ``directory``), its URL a
    ``rediss://`` one that names the CA."""

    def __init__(self, directory: Path, *, tls: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is missing: pagelab setup --broker "
                               "(or apt-get install -y redis-server)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.tls_files = make_tls_files(directory / "tls") if tls else None
        if self.tls_files is None:
            self.url = f"redis://{LOOPBACK}:{self.port}/0"
        else:
            self.url = (f"rediss://{LOOPBACK}:{self.port}/0?ssl_cert_reqs=required"
                        f"&ssl_ca_certs={self.tls_files[0]}")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.tls_files is None:
            ports = ["--port", str(self.port)]
        else:
            ca, cert, key = self.tls_files
            ports = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", str(cert),
                     "--tls-key-file", str(key), "--tls-ca-cert-file", str(ca),
                     "--tls-auth-clients", "no"]
        # The child keeps its own copy of the log's descriptor: ours is closed at once.
        with (self.directory / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                [self.binary, *ports, "--bind", LOOPBACK, "--dir",
                 str(self.directory), "--appendonly", "yes", "--appendfsync", "always",
                 "--save", "", "--protected-mode", "yes"],
                stdout=log, stderr=subprocess.STDOUT,
            )
        client = self.client()
        wait_for(lambda: self._ping(client) or self.process is None
                 or self.process.poll() is not None, 20, "redis-server to answer PING", 0.05)
        if self.process.poll() is not None:
            log_text = (self.directory / "redis.log").read_text()
            raise RuntimeError(f"redis-server exited: {log_text[-2000:]}")
        return self

    def restart(self) -> None:
        """SIGTERM (Redis flushes its AOF), then the same port, directory and data."""
        self.stop()
        self.start()

    @staticmethod
    def _ping(client: Any) -> bool:
        try:
            return bool(client.ping())
        except Exception:
            return False

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=5)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)


class WorkerProcess:
    """``python -m pagelab worker`` in a child process, its output in ``log_path``, with a
    key the server's store (``data_dir``, or the PostgreSQL ``database``) issued to
    ``name`` for ``locations``; ``env``: more of its environment."""

    def __init__(self, broker: str, locations: str, name: str, log_path: Path,
                 *extra: str, data_dir: Path, database: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log_path = log_path
        self._env = env or {}
        self.key = issue_worker_key(data_dir, name, locations, database)
        self._args = [sys.executable, "-m", "pagelab", "worker", "--broker", broker,
                      "--locations", locations, *extra]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self._args, env=pagelab_env(PAGELAB_WORKER_KEY=self.key, **self._env),
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
        processes.kill(self.process)

    def stop(self) -> None:
        if self.process is not None:
            processes.stop(self.process)


def api(server: ServerProcess, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, headers={"X-API-KEY": key}, timeout=30)
