"""A real DNS server on loopback for the tests (UDP; not a test module).

:class:`LoopbackDns` answers A queries, with TTL 0:

* for the names it is given, cycling through each name's answers query by query:
  ``{"rebind.test": ["127.0.0.1", "127.0.0.2"]}`` answers the first A query with
  127.0.0.1, the second with 127.0.0.2, the third with 127.0.0.1 again (DNS rebinding);
* for any other name, ``default`` when given, else NXDOMAIN.

AAAA queries get no record. With ``delay``, every answer is sent that many seconds late,
each query on a thread of its own (a slow name server that still answers them all). It
remembers every (name, type) it was asked.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Self

import dns.exception
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

__all__ = ["LoopbackDns"]


class LoopbackDns:
    def __init__(self, answers: Mapping[str, Sequence[str]] | None = None, *,
                 default: str | None = None, delay: float = 0.0) -> None:
        self.answers = {name.lower().rstrip("."): list(values)
                        for name, values in (answers or {}).items()}
        self.default = default
        self.delay = delay
        self.asked: list[tuple[str, str]] = []
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, as ``--dns-server`` and
        :func:`pagelab.engine.dns_server_resolver` take it."""
        return f"127.0.0.1:{self._socket.getsockname()[1]}"

    def a_queries(self, name: str) -> int:
        with self._lock:
            return sum(1 for asked in self.asked if asked == (name, "A"))

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if self.delay:
                threading.Thread(target=self._reply, args=(data, client), daemon=True).start()
            else:
                self._reply(data, client)

    def _reply(self, data: bytes, client: tuple[str, int]) -> None:
        try:
            answer = self._answer(data)
        except dns.exception.DNSException:
            return
        if self.delay:
            time.sleep(self.delay)
        with contextlib.suppress(OSError):  # stopped meanwhile
            self._socket.sendto(answer, client)

    def _answer(self, data: bytes) -> bytes:
        query = dns.message.from_wire(data)
        question = query.question[0]
        name = question.name.to_text().lower().rstrip(".")
        kind = dns.rdatatype.to_text(question.rdtype)
        response = dns.message.make_response(query)
        with self._lock:
            self.asked.append((name, kind))
            values = self.answers.get(name)
            if values is None and self.default is not None:
                values = [self.default]
            if values is None:
                response.set_rcode(dns.rcode.NXDOMAIN)
            elif kind == "A":
                served = self._served.get(name, 0)
                self._served[name] = served + 1
                response.answer.append(
                    dns.rrset.from_text(question.name, 0, "IN", "A", values[served % len(values)])
                )
        return bytes(response.to_wire())

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()
