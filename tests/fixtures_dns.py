"""A real DNS server on loopback for the tests (UDP, a thread per query): it answers every
A query with ``answer`` after ``delay`` seconds, AAAA with no record, and remembers the
names it was asked. Not a test module."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType
from typing import Self

import dns.message
import dns.rdatatype
import dns.rrset

__all__ = ["SlowDnsServer"]


class SlowDnsServer:
    def __init__(self, *, delay: float, answer: str = "203.0.113.7") -> None:
        self.delay = delay
        self.answer = answer
        self.asked: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, as ``--dns-server`` takes it."""
        return f"127.0.0.1:{self._socket.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(data, client), daemon=True).start()

    def _answer(self, data: bytes, client: tuple[str, int]) -> None:
        query = dns.message.from_wire(data)
        question = query.question[0]
        self.asked.append(question.name.to_text().rstrip("."))
        time.sleep(self.delay)
        response = dns.message.make_response(query)
        if question.rdtype == dns.rdatatype.A:
            response.answer.append(
                dns.rrset.from_text(question.name, 0, "IN", "A", self.answer)
            )
        with contextlib.suppress(OSError):  # stopped meanwhile
            self._socket.sendto(response.to_wire(), client)

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
