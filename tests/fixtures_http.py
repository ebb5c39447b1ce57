"""Loopback HTTP(S) servers and a self-signed certificate for tests and benchmarks.

Not a test module: import it (``from fixtures_http import ...``). Everything here runs
real sockets on 127.0.0.1, so the code under test talks to a real server, no mocks.

- :func:`make_self_signed_cert` writes a certificate valid for ``127.0.0.1``, ``::1`` and
  ``localhost`` (IP and DNS subjectAltNames), with the ``openssl`` CLI or, failing that,
  the ``cryptography`` package.
- :func:`server_tls_context` turns it into a server-side :class:`ssl.SSLContext`, with the
  ALPN protocols to offer (an h2 server passes ``("h2", "http/1.1")``).
- :class:`FixtureServer` is a threaded stdlib HTTP/1.1 server, optionally over TLS, that
  counts the TCP connections and requests it receives. Its paths:
  ``/`` (200, small body), ``/delay/<ms>`` (first byte after <ms> ms),
  ``/slow-body/<ms>`` (headers at once, body after <ms> ms), ``/status/<code>``,
  ``/redirect`` (302 to ``/``), ``/headers`` (repeated headers) and ``/early-hints``
  (a 103 interim response before the 200).
- :class:`SilentServer` accepts TCP connections and never answers.
- :func:`closed_port` is a loopback port nobody listens on.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pagelab._closing import Closing

__all__ = [
    "FixtureServer",
    "SelfSignedCert",
    "SilentServer",
    "closed_port",
    "make_self_signed_cert",
    "server_tls_context",
]

_LOOPBACK = "127.0.0.1"
_BODY = b"<!doctype html><title>pagelab fixture</title><p>hello</p>\n"


@dataclass(frozen=True)
class SelfSignedCert:
    """PEM files of a self-signed certificate; ``cert_file`` doubles as the CA bundle."""

    cert_file: Path
    key_file: Path


def make_self_signed_cert(directory: Path, *, days: int = 2) -> SelfSignedCert:
    """Write ``cert.pem`` and ``key.pem`` into ``directory`` for 127.0.0.1/::1/localhost.

    The IP subjectAltNames matter: TLS clients ignore the CN and check an IP URL against
    IP SANs only.
    """
    directory.mkdir(parents=True, exist_ok=True)
    cert = SelfSignedCert(directory / "cert.pem", directory / "key.pem")
    openssl = shutil.which("openssl")
    if openssl is not None:
        subprocess.run(
            [
                openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-days", str(days), "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-keyout", str(cert.key_file), "-out", str(cert.cert_file),
            ],
            check=True,
            capture_output=True,
        )
    else:
        _write_cert_with_cryptography(cert, days)
    return cert


def _write_cert_with_cryptography(cert: SelfSignedCert, days: int) -> None:
    # Imported here: the package is optional and only needed when the CLI is missing.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    sans = x509.SubjectAlternativeName(
        [
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(sans, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert.cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    cert.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def server_tls_context(
    cert: SelfSignedCert, alpn: Sequence[str] = ("http/1.1",)
) -> ssl.SSLContext:
    """A server-side TLS context serving ``cert`` and offering the ``alpn`` protocols."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert_file, cert.key_file)
    context.set_alpn_protocols(list(alpn))
    return context


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: headers and body go out in separate writes, and over TLS Nagle plus the
    # client's delayed ACK would add ~40 ms to the fixture's own response time.
    disable_nagle_algorithm = True
    server: _CountingServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: pytest output stays readable."""

    def do_GET(self) -> None:
        self.server.count_request()
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if parts[0] == "delay" and len(parts) == 2:
            time.sleep(int(parts[1]) / 1000)
            self._reply(200)
        elif parts[0] == "slow-body" and len(parts) == 2:
            self._reply(200, body_delay=int(parts[1]) / 1000)
        elif parts[0] == "status" and len(parts) == 2:
            self._reply(int(parts[1]))
        elif parts[0] == "redirect":
            self._reply(302, extra=[("Location", "/")])
        elif parts[0] == "early-hints":
            # An interim response first: its headers must not leak into the final ones.
            self.send_response_only(103)
            self.send_header("Link", "</style.css>; rel=preload; as=style")
            self.end_headers()
            self._reply(200)
        elif parts[0] == "headers":
            extra = [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Fixture", "yes")]
            self._reply(200, extra=extra)
        else:
            self._reply(200)

    def _reply(
        self,
        status: int,
        *,
        extra: Sequence[tuple[str, str]] = (),
        body_delay: float = 0.0,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(_BODY)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if body_delay:
            # Push the headers out now, so the client's first byte precedes the body.
            self.wfile.flush()
            time.sleep(body_delay)
        self.wfile.write(_BODY)


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True
    # Allow quick restarts on the same port; ThreadingHTTPServer sets it too.
    allow_reuse_address = True

    def __init__(self, tls: ssl.SSLContext | None) -> None:
        self.tls = tls
        self.connections = 0
        self.requests = 0
        self._lock = threading.Lock()
        super().__init__((_LOOPBACK, 0), _Handler)

    def count_request(self) -> None:
        with self._lock:
            self.requests += 1

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self.connections += 1
        super().process_request(request, client_address)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        # The handshake runs here, in the connection's own thread, not in accept(): a
        # client that rejects the certificate then only ends its own thread.
        try:
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            _Handler(wrapped, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            wrapped.close()


class FixtureServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 (HTTPS when given a TLS context).

    Use as a context manager; ``connections`` and ``requests`` count what it accepted.
    """

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._server = _CountingServer(tls)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def connections(self) -> int:
        return self._server.connections

    @property
    def requests(self) -> int:
        return self._server.requests

    def url(self, path: str = "/", *, host: str = _LOOPBACK) -> str:
        scheme = "http" if self._server.tls is None else "https"
        return f"{scheme}://{host}:{self.port}{path}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class SilentServer(Closing):
    """Listens on 127.0.0.1 and never answers: the kernel completes the TCP handshake from
    the backlog, nobody reads the request, so a client waits until its own timeout."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind((_LOOPBACK, 0))
        self._socket.listen(16)
        self.port: int = self._socket.getsockname()[1]

    def url(self, path: str = "/") -> str:
        return f"http://{_LOOPBACK}:{self.port}{path}"

    def close(self) -> None:
        self._socket.close()


def closed_port() -> int:
    """A loopback port with no listener (bound, then released), so connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((_LOOPBACK, 0))
        port: int = probe.getsockname()[1]
    return port
