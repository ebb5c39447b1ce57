"""Read-only key checks of requests that arrive together, sent to PostgreSQL as one
statement.

A round trip costs the server far more CPU than the rows it reads (psycopg's send and
wait, a handful of system calls), so under concurrency the requests whose checks are
asked for in one turn of the event loop share one (docs/benchmarks.md#the-http-api). A
request that finds no read under way has nobody to share with: it sends its own at once
(a wait for the next turn, a future and a task would be a sixth of its cost).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from pagelab.store import KeyCheck, KeyRead, read_keys

if TYPE_CHECKING:
    import psycopg

__all__ = ["KeyReads"]

#: The most requests one statement checks (more wait for the next, sent at once).
MOST_PER_STATEMENT = 64


class KeyReads:
    """Batches :class:`~pagelab.store.KeyRead` s: :meth:`read` is awaited by each request;
    while a read is under way, the reads asked for in one turn of the event loop go out
    as one :func:`read_keys` statement on a connection of ``loop_connection``. Event loop
    only."""

    def __init__(
        self,
        loop_connection: Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]],
    ) -> None:
        self._loop_connection = loop_connection
        self._pending: list[tuple[KeyRead, asyncio.Future[KeyCheck]]] = []
        self._sending: set[asyncio.Task[None]] = set()  # strong references until done
        self._alone = 0  # reads sent at once, under way

    async def read(self, read: KeyRead) -> KeyCheck:
        """The key's account (None: unknown, wrong or revoked) and the test asked for."""
        if not (self._alone or self._pending or self._sending):
            self._alone += 1
            try:
                async with self._loop_connection() as conn:
                    (check,) = await read_keys(conn, [read])
                return check
            finally:
                self._alone -= 1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[KeyCheck] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._send)
        self._pending.append((read, future))
        return await future

    def _send(self) -> None:
        pending, self._pending = self._pending, []
        for start in range(0, len(pending), MOST_PER_STATEMENT):
            task = asyncio.get_running_loop().create_task(
                self._statement(pending[start:start + MOST_PER_STATEMENT]))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _statement(self, batch: list[tuple[KeyRead, asyncio.Future[KeyCheck]]]) -> None:
        # Requests whose client left meanwhile (cancelled futures) are not read.
        batch = [(read, future) for read, future in batch if not future.done()]
        if not batch:
            return
        try:
            async with self._loop_connection() as conn:
                checks = await read_keys(conn, [read for read, _ in batch])
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # every waiting request fails as its own read would
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), check in zip(batch, checks, strict=True):
            if not future.done():
                future.set_result(check)
