"""The event loop's PostgreSQL connections poll for an answer, briefly, while the loop has
nothing else to do.

Awaiting a statement's answer puts the server to sleep until PostgreSQL replies. Under load
other requests fill that time; a lone request's server has nothing to do, and where an idle
CPU halts (a virtual machine without guest halt polling, as the benchmark machine) the
wake-up costs about as much as the read itself. So a statement first polls its socket,
together with the loop's own selector, for up to :data:`POLL_SECONDS`: it stops as soon as
the loop has anything else to do (a callback ready, a socket readable: another request),
and then waits in the loop as usual. A poll that runs out of time (a database farther away
than that) turns polling off for a while, longer each time one runs out again (up to
:data:`POLL_PAUSE` answers), so a remote database costs next to nothing.

What the loop has to do is read from asyncio's own event loop: its selector and its ready
callbacks (private attributes, unchanged since Python 3.4); on a loop without them (uvloop)
statements never poll. Needs psycopg (the ``postgres`` extra): imported only by the
PostgreSQL backend. Measured in docs/benchmarks.md#the-http-api; why in docs/decisions.md.
"""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections.abc import Collection, Generator
from enum import Enum
from typing import Any, TypeVar, cast

import psycopg
from psycopg.waiting import Ready, Wait

__all__ = ["POLL_PAUSE", "POLL_SECONDS", "Polling", "PollingConnection"]

RV = TypeVar("RV")
PQGen = Generator[Wait, "Ready | int", RV]

#: How long a statement polls for its answer before the loop sleeps. Here an answer takes
#: 80-150 us.
POLL_SECONDS = 0.0005
#: The most answers awaited without polling after polls that ran out of time.
POLL_PAUSE = 128

_EVENTS = {Wait.R: select.POLLIN, Wait.W: select.POLLOUT,
           Wait.RW: select.POLLIN | select.POLLOUT}
_READABLE = select.POLLIN | select.POLLERR | select.POLLHUP  # errors: libpq reads them


class Polling:
    """Whether the event loop's connections poll: not after a poll that ran out of time,
    for the next 1, 2, 4, ... (at most :data:`POLL_PAUSE`) answers, the pause doubling at
    each poll that runs out again, until one is answered in time. One per pool."""

    def __init__(self) -> None:
        self._paused = 0  # answers left to await without polling
        self._pause = 1  # the next pause

    def wanted(self) -> bool:
        if self._paused:
            self._paused -= 1
            return False
        return True

    def answered(self) -> None:
        self._pause = 1

    def ran_out(self) -> None:
        self._paused = self._pause
        self._pause = min(POLL_PAUSE, 2 * self._pause)


class PollingConnection(psycopg.AsyncConnection[Any]):
    """An async connection whose waits poll first, as its :class:`Polling` allows."""

    polling: Polling | None = None

    async def wait(self, gen: PQGen[RV], *args: Any, **kwargs: Any) -> RV:
        polling = self.polling
        if polling is None or not polling.wanted() or (loop := _idle_loop()) is None:
            return await super().wait(gen, *args, **kwargs)
        outcome, value = _poll(gen, self.pgconn.socket, *loop)
        if outcome is _Outcome.ANSWERED:
            polling.answered()
            return cast(RV, value)
        if outcome is _Outcome.RAN_OUT:
            polling.ran_out()
        return await super().wait(value, *args, **kwargs)


class _Outcome(Enum):
    ANSWERED = "answered"
    RAN_OUT = "ran out"
    LOOP_BUSY = "loop busy"


def _idle_loop() -> tuple[int, Collection[asyncio.Handle]] | None:
    """The running loop's selector and ready callbacks, when it has nothing to do (None
    also on a loop that has no such attributes)."""
    loop = asyncio.get_running_loop()
    fileno = getattr(getattr(loop, "_selector", None), "fileno", None)
    ready: Collection[asyncio.Handle] | None = getattr(loop, "_ready", None)
    if fileno is None or ready is None or _has_work(ready):
        return None
    return fileno(), ready


def _has_work(ready: Collection[asyncio.Handle]) -> bool:
    """Whether the loop's ready callbacks hold one to run (a cancelled one stays there
    until the loop drops it)."""
    return any(not handle.cancelled() for handle in ready)


def _poll(gen: PQGen[RV], fileno: int, loop_fileno: int,
          loop_ready: Collection[asyncio.Handle]) -> tuple[_Outcome, Any]:
    """Drive ``gen`` while its socket becomes ready within :data:`POLL_SECONDS` and the
    loop has nothing else to do: (``ANSWERED``, its result), or (``RAN_OUT`` or
    ``LOOP_BUSY``, ``gen`` resumed where it waits)."""
    poller = select.poll()
    poller.register(loop_fileno, select.POLLIN)
    try:
        wait = next(gen)
        poller.register(fileno, _EVENTS[wait])
        deadline = time.perf_counter() + POLL_SECONDS
        while True:
            mask = 0
            for ready_fd, events in poller.poll(0):
                if ready_fd == loop_fileno:
                    return _Outcome.LOOP_BUSY, _resumed(gen, wait)
                mask = events
            if mask:
                ready = (Ready.R if mask & _READABLE else Ready.NONE) | (
                    Ready.W if mask & select.POLLOUT else Ready.NONE)
                asked, wait = wait, gen.send(ready)
                if wait != asked:
                    poller.modify(fileno, _EVENTS[wait])
            elif loop_ready and _has_work(loop_ready):
                return _Outcome.LOOP_BUSY, _resumed(gen, wait)
            elif time.perf_counter() >= deadline:
                return _Outcome.RAN_OUT, _resumed(gen, wait)
            else:  # PostgreSQL may be waiting for this very CPU
                os.sched_yield()
    except StopIteration as stop:
        return _Outcome.ANSWERED, stop.value


def _resumed(gen: PQGen[RV], wait: Wait) -> PQGen[RV]:
    """``gen``, already started, asking again for the ``wait`` it last asked for."""
    while True:
        ready = yield wait
        try:
            wait = gen.send(ready)
        except StopIteration as stop:
            result: RV = stop.value
            return result
