"""A real DNS server on loopback for the tests (UDP; not a test module).

:class:`RebindingDns` answers A queries for the names it is given, with TTL 0, cycling
through each name's answers query by query: ``{"rebind.test": ["127.0.0.1", "127.0.0.2"]}``
answers the first A query with 127.0.0.1, the second with 127.0.0.2, the third with
127.0.0.1 again (DNS rebinding). AAAA queries get no record, other names NXDOMAIN. It
remembers every (name, type) it was asked.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Self

import dns.exception
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

__all__ = ["RebindingDns"]


class RebindingDns:
    def __init__(self, answers: Mapping[str, Sequence[str]]) -> None:
        self.answers = {name.lower().rstrip("."): list(values) for name, values in answers.items()}
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
        """``127.0.0.1:PORT``, as :func:`pagelab.engine.dns_server_resolver` takes it."""
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
            try:
                self._socket.sendto(self._answer(data), client)
            except (OSError, dns.exception.DNSException):
                continue

    def _answer(self, data: bytes) -> bytes:
        query = dns.message.from_wire(data)
        question = query.question[0]
        name = question.name.to_text().lower().rstrip(".")
        kind = dns.rdatatype.to_text(question.rdtype)
        response = dns.message.make_response(query)
        with self._lock:
            self.asked.append((name, kind))
            values = self.answers.get(name)
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
