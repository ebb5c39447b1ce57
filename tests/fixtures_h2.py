"""An HTTPS fixture that speaks HTTP/2 and HTTP/1.1 (not a test module).

Python's standard library cannot serve HTTP/2, so the server is Node's
``http2.createSecureServer({allowHTTP1: true})``, run with the engine's pinned Node (it ships
with the engine install: no new dependency). It offers ``h2`` and ``http/1.1`` by ALPN, so the
protocol each request arrived with shows what the browser negotiated. Every request is
reported on the server's stdout as a JSON line and collected here.

Chromium must trust the self-signed certificate: :func:`spki_hash` gives the value for
Chromium's ``--ignore-certificate-errors-spki-list`` (tests pass it as an engine flag).
"""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Any

from fixtures_http import SelfSignedCert
from pagelab._closing import Closing

__all__ = ["H2Site", "spki_hash"]

_SERVER_JS = r"""
import http2 from 'node:http2';
import {readFileSync} from 'node:fs';

const [certFile, keyFile, routesFile] = process.argv.slice(2);
const routes = JSON.parse(readFileSync(routesFile, 'utf8'));
const server = http2.createSecureServer({
  cert: readFileSync(certFile), key: readFileSync(keyFile), allowHTTP1: true,
});
server.on('request', (req, res) => {
  const path = new URL(req.url, 'https://fixture').pathname;
  process.stdout.write(JSON.stringify({
    path, httpVersion: req.httpVersion, alpn: req.socket.alpnProtocol || null,
  }) + '\n');
  const route = routes[path];
  if (!route) {
    res.writeHead(404, {'content-type': 'text/plain'});
    res.end('not found');
    return;
  }
  res.writeHead(200, {'content-type': route.type, 'cache-control': 'no-store'});
  res.end(route.body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({port: server.address().port}) + '\n');
});
"""


def _der_element(data: bytes, offset: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER element at ``offset``."""
    tag = data[offset]
    length = data[offset + 1]
    start = offset + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    return tag, start, start + length


def spki_hash(cert: SelfSignedCert) -> str:
    """Base64 SHA-256 of the certificate's SubjectPublicKeyInfo (what Chromium pins)."""
    der = ssl.PEM_cert_to_DER_cert(cert.cert_file.read_text())
    _, cert_start, _ = _der_element(der, 0)  # Certificate ::= SEQUENCE
    tag, offset, _ = _der_element(der, cert_start)  # tbsCertificate ::= SEQUENCE
    # tbsCertificate: [0] version (optional), serial, signature, issuer, validity, subject,
    # subjectPublicKeyInfo.
    tag, _, end = _der_element(der, offset)
    fields_to_skip = 6 if tag == 0xA0 else 5
    for _ in range(fields_to_skip):
        _, _, end = _der_element(der, offset)
        offset = end
    _, _, spki_end = _der_element(der, offset)
    return base64.b64encode(hashlib.sha256(der[offset:spki_end]).digest()).decode()


class H2Site(Closing):
    """The Node HTTP/2 + HTTP/1.1 server on 127.0.0.1, with the given routes.

    ``routes`` maps a path to ``(content type, body)``. ``requests`` lists what arrived:
    ``{"path", "httpVersion" ("2.0" or "1.1"), "alpn"}``.
    """

    def __init__(
        self, node: Path, cert: SelfSignedCert, routes: dict[str, tuple[str, str]], work: Path
    ) -> None:
        work.mkdir(parents=True, exist_ok=True)
        script = work / "h2_server.mjs"
        script.write_text(_SERVER_JS)
        routes_file = work / "routes.json"
        routes_file.write_text(
            json.dumps({p: {"type": t, "body": b} for p, (t, b) in routes.items()})
        )
        self._process = subprocess.Popen(
            [str(node), str(script), str(cert.cert_file), str(cert.key_file), str(routes_file)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        assert self._process.stdout is not None
        first = self._process.stdout.readline()
        if not first:
            err = self._process.stderr.read() if self._process.stderr else ""
            raise RuntimeError(f"the h2 fixture did not start: {err}")
        self.port = int(json.loads(first)["port"])
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self._requests.append(message)

    def url(self, path: str = "/") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def close(self) -> None:
        self._process.kill()
        self._process.wait(timeout=10)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()
