"""Stored report files served to a notebook's browser from a loopback port.

A browser refuses a ``file://`` link from a page served over HTTP (JupyterLab: "Not allowed
to load local resource"), so in a notebook a report kept as a file is linked through a small
HTTP server in the kernel's process instead: ``http://127.0.0.1:<port>/<token>/<n>/<name>``.
It serves only the files handed to :func:`served_url` (nothing else on the disk, no
listing), behind a random token, on the loopback interface; it starts with the first link
and lives as long as the kernel (docs/decisions.md, "Report links in notebooks").
"""

from __future__ import annotations

import mimetypes
import secrets
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit
from urllib.request import url2pathname

__all__ = ["QuietHTTPServer", "served_url"]

_HOST = "127.0.0.1"


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that prints no traceback when a client hangs up: a browser
    leaving mid-response (a closed tab, a page navigating away) is normal."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Files:
    """The running server and the files it may serve, by number."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(24)
        self.paths: dict[str, Path] = {}
        self.numbers: dict[Path, str] = {}
        self.lock = threading.Lock()
        files = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(body=True)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def _answer(self, *, body: bool) -> None:
                path = files.lookup(self.path)
                try:
                    data = path.read_bytes() if path is not None else None
                except OSError:  # removed since it was linked
                    data = None
                if path is None or data is None:
                    self.send_error(HTTPStatus.NOT_FOUND)
                    return
                kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a notebook's kernel log is no place for an access log

        self.server = QuietHTTPServer((_HOST, 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, name="pagelab-report-files",
                         daemon=True).start()

    def url(self, path: Path) -> str:
        with self.lock:
            number = self.numbers.get(path)
            if number is None:
                number = self.numbers[path] = str(len(self.paths) + 1)
                self.paths[number] = path
        return f"http://{_HOST}:{self.port}/{self.token}/{number}/{quote(path.name)}"

    def lookup(self, request_path: str) -> Path | None:
        parts = urlsplit(request_path).path.split("/")
        if len(parts) != 4 or parts[0]:
            return None
        _, token, number, name = parts
        if not secrets.compare_digest(token, self.token):
            return None
        with self.lock:
            path = self.paths.get(number)
        return path if path is not None and unquote(name) == path.name else None


_files: _Files | None = None
_start = threading.Lock()


def served_url(url: str) -> str:
    """``url`` when it is not a ``file://`` address of a file; else the address of that file
    on the loopback server (started on first use)."""
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return url
    path = Path(url2pathname(parts.path))
    if not path.is_file():
        return url
    global _files
    with _start:
        if _files is None:
            _files = _Files()
        files = _files
    return files.url(path.resolve())
