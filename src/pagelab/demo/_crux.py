"""A stand-in for the Chrome UX Report API on loopback, replaying recorded answers.

The notebooks and the tests point ``PAGELAB_CRUX_ENDPOINT`` at it, so field data is shown
and tested without a Google key or a host outside this machine. Its answers come from a
directory holding ``answers.json``::

    {"keys": ["<a key it accepts>"],
     "not_found": "error-404.json", "bad_key": "error-400-bad-key.json",
     "exchanges": [
        {"method": "records:queryRecord",
         "query": {"url": "http://demo.test/fast", "formFactor": "PHONE"},
         "answers": [{"status": 429, "headers": {"Retry-After": "1"},
                      "body": "error-429.json"},
                     {"status": 200, "body": "record-fast-phone.json"}]}]}

and the answer bodies beside it. A query is the request's ``url`` or ``origin`` and
``formFactor``; its answers are given in turn, the last one again and again. A query with
no exchange gets the 404 (the API's "no data"), a request without an accepted key the 400.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from pagelab._exceptions import InvalidInputError

__all__ = ["CruxRequest", "CruxStandIn"]

_PREFIX = "/v1/"


@dataclass(frozen=True, slots=True)
class CruxRequest:
    """A request the stand-in received: the method, the query, whether its key was
    accepted, and the status it was answered with."""

    method: str
    query: dict[str, Any]
    key_accepted: bool
    status: int


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def _load(directory: Path, name: str) -> bytes:
    return (directory / name).read_bytes()


def _answer(directory: Path, spec: dict[str, Any]) -> _Answer:
    return _Answer(int(spec["status"]), {str(k): str(v) for k, v in spec.get(
        "headers", {}).items()}, _load(directory, str(spec["body"])))


def _query_key(method: str, query: dict[str, Any]) -> str:
    picked = {k: query[k] for k in ("url", "origin", "formFactor") if k in query}
    return json.dumps([method, picked], sort_keys=True)


class CruxStandIn:
    """The recorded answers in ``answers`` (a directory) served on ``host:port`` (port 0:
    any free one) by a background thread; :attr:`endpoint` is the API's base URL to use.
    Every request is kept in :attr:`requests`."""

    def __init__(self, answers: str | Path, host: str = "127.0.0.1", port: int = 0) -> None:
        directory = Path(answers)
        try:
            spec = json.loads((directory / "answers.json").read_text(encoding="utf-8"))
            self._keys = frozenset(str(k) for k in spec["keys"])
            self._not_found = _Answer(404, {}, _load(directory, spec["not_found"]))
            self._bad_key = _Answer(400, {}, _load(directory, spec["bad_key"]))
            self._exchanges = {
                _query_key(e["method"], e["query"]): [_answer(directory, a)
                                                     for a in e["answers"]]
                for e in spec["exchanges"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InvalidInputError(
                f"answers: not a directory of recorded CrUX answers ({directory}): {exc}"
            ) from exc
        self._host, self._port = host, port
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self.requests: list[CruxRequest] = []
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the stand-in is not running: call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> Self:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                stand_in._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer((self._host, self._port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name="pagelab-crux-stand-in", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _pick(self, method: str, query: dict[str, Any], key: str) -> _Answer:
        if key not in self._keys:
            return self._bad_key
        name = _query_key(method, query)
        answers = self._exchanges.get(name)
        if not answers:
            return self._not_found
        with self._lock:
            turn = self._served.get(name, 0)
            self._served[name] = turn + 1
        return answers[min(turn, len(answers) - 1)]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            query = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            query = {}
        if not isinstance(query, dict):
            query = {}
        keys = parse_qs(parts.query).get("key") or [""]
        key = handler.headers.get("X-Goog-Api-Key") or keys[0]
        method = parts.path.removeprefix(_PREFIX)
        answer = self._pick(method, query, key)
        with self._lock:
            self.requests.append(CruxRequest(method, query, key in self._keys, answer.status))
        handler.send_response(answer.status)
        handler.send_header("Content-Type", "application/json; charset=UTF-8")
        handler.send_header("Content-Length", str(len(answer.body)))
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(answer.body)
