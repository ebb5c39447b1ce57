"""The event loop's PostgreSQL connections poll for an answer while the loop has nothing else
to do (store/_pg_poll.py): a lone statement's answer is polled for, a slow one is awaited
(and polling pauses, longer each time), and any other work of the loop stops the poll at
once. Real PostgreSQL."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from pagelab.store._pg_poll import POLL_PAUSE, POLL_SECONDS, Polling, PollingConnection


class _Counted(Polling):
    """A :class:`Polling` that records how each poll ended."""

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: list[str] = []

    def answered(self) -> None:
        self.outcomes.append("answered")
        super().answered()

    def ran_out(self) -> None:
        self.outcomes.append("ran out")
        super().ran_out()


def _run(postgres: Any, scenario: Callable[[PollingConnection, _Counted], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        conn = await PollingConnection.connect(postgres.new_database(), autocommit=True)
        conn.polling = polling = _Counted()
        try:
            return await scenario(conn, polling)
        finally:
            await conn.close()

    return asyncio.run(main())


async def _value(conn: PollingConnection, sql: str) -> Any:
    cursor = await conn.execute(sql)
    row = await cursor.fetchone()
    assert row is not None
    return row[0]


def test_a_lone_statement_is_answered_while_polling(postgres: Any) -> None:
    async def scenario(conn: PollingConnection, polling: _Counted) -> tuple[list[Any], list[str]]:
        return [await _value(conn, f"SELECT {n} + 1") for n in range(5)], polling.outcomes

    # Each answer arrives well within POLL_SECONDS on loopback; on a loaded machine one may
    # not, and is then awaited, and after two such the polling pauses: a busy machine got
    # ['ran out', 'ran out'] once. A fresh connection tries again, up to 20 times: a poll
    # that never answers fails them all.
    tries: list[list[str]] = []
    for _ in range(20):
        values, outcomes = _run(postgres, scenario)
        assert values == [1, 2, 3, 4, 5]
        tries.append(outcomes)
        if "answered" in outcomes:
            break
    assert "answered" in tries[-1], tries


def test_a_slow_answer_is_awaited_and_polling_pauses_longer_each_time(postgres: Any) -> None:
    sleep = POLL_SECONDS * 20  # far longer than a poll

    async def scenario(conn: PollingConnection, polling: _Counted) -> list[str]:
        for _ in range(3):
            assert await _value(conn, f"SELECT 7 FROM pg_sleep({sleep})") == 7
        return polling.outcomes

    # The first ran out and paused polling for one answer (the second, awaited); the
    # third polled, ran out again, and pauses for two.
    assert _run(postgres, scenario) == ["ran out", "ran out"]


def test_the_pause_doubles_up_to_its_most_and_an_answer_in_time_ends_it() -> None:
    polling = Polling()
    assert polling.wanted()
    pauses = []
    for _ in range(10):
        polling.ran_out()
        skipped = 0
        while not polling.wanted():
            skipped += 1
        pauses.append(skipped)
    assert pauses == [1, 2, 4, 8, 16, 32, 64, POLL_PAUSE, POLL_PAUSE, POLL_PAUSE]
    polling.answered()
    polling.ran_out()
    assert not polling.wanted()
    assert polling.wanted()  # a pause of one again


def test_a_callback_ready_in_the_loop_is_not_kept_waiting(postgres: Any) -> None:
    async def scenario(conn: PollingConnection, polling: _Counted) -> tuple[list[str], Any]:
        ran: list[bool] = []
        asyncio.get_running_loop().call_soon(ran.append, True)
        value = await _value(conn, "SELECT 42")
        return polling.outcomes, (value, ran)

    outcomes, (value, ran) = _run(postgres, scenario)
    assert value == 42
    assert ran == [True]
    assert outcomes == []  # not polled: the loop had work


def test_a_socket_ready_in_the_loop_stops_the_poll_at_once(postgres: Any) -> None:
    async def scenario(conn: PollingConnection, polling: _Counted) -> tuple[list[str], Any]:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        received: list[bytes] = []
        loop.add_reader(ours, lambda: received.append(ours.recv(16)))
        try:
            theirs.send(b"request")  # another client's request, already here
            # A statement much longer than a poll: had it polled, it would have run out.
            value = await _value(conn, f"SELECT 7 FROM pg_sleep({POLL_SECONDS * 20})")
        finally:
            loop.remove_reader(ours)
            ours.close()
            theirs.close()
        return polling.outcomes, (value, received)

    outcomes, (value, received) = _run(postgres, scenario)
    assert value == 7
    assert received == [b"request"]
    assert outcomes == []  # left the poll for the loop: neither answered nor ran out


@pytest.mark.parametrize("failing", ["SELECT 1/0", "SELECT * FROM no_such_table"])
def test_an_error_polled_for_is_raised_as_psycopg_raises_it(postgres: Any, failing: str) -> None:
    import psycopg

    async def scenario(conn: PollingConnection, polling: _Counted) -> Any:
        with pytest.raises(psycopg.Error):
            await conn.execute(failing)
        return await _value(conn, "SELECT 'still usable'")

    assert _run(postgres, scenario) == "still usable"


def test_the_pools_loop_connections_poll_and_share_one_polling(postgres: Any) -> None:
    from pagelab.store import PgPool, Store

    pool = Store(database=postgres.new_database()).pool(size=2)
    assert isinstance(pool, PgPool)

    async def scenario() -> list[Any]:
        await pool.open_loop_pool(2)
        try:
            async with pool.loop_connection() as one, pool.loop_connection() as two:
                return [one, two]
        finally:
            await pool.close_loop_pool()
            pool.close()

    one, two = asyncio.run(scenario())
    assert isinstance(one, PollingConnection)
    assert isinstance(two, PollingConnection)
    assert one is not two
    assert one.polling is not None
    assert one.polling is two.polling
