"""A busy key's rate-limit tokens are taken in leases on a PostgreSQL store: its requests
mostly only read (and the reads of requests that arrive together share a statement),
servers together never admit more than the limit, and every request still has its key
checked by the database. Real PostgreSQL; each limiter stands for one
server (its own event loop connections, its own leases)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest

from pagelab.models import Device, LighthouseConfig, Location
from pagelab.service._ratelimit import LEASE_SECONDS, MAX_LEASE, SharedRateLimiter
from pagelab.store import (
    PgPool,
    Store,
    create_account,
    create_test,
    revoke_account,
    transaction,
)


class _Spy:
    """The real async connection, counting the statements that write to a bucket."""

    def __init__(self, conn: Any, counts: dict[str, int]) -> None:
        self._conn, self._counts = conn, counts

    async def execute(self, sql: str, *args: Any) -> Any:
        self._counts["takes" if "rate_buckets" in sql else "reads"] += 1
        return await self._conn.execute(sql, *args)


def _spied(pool: PgPool, counts: dict[str, int]) -> Callable[[], Any]:
    """``pool.loop_connection``, its connections counting into ``counts``."""

    @asynccontextmanager
    async def spied() -> AsyncIterator[Any]:
        async with pool.loop_connection() as conn:
            yield _Spy(conn, counts)

    return spied


def _limiter(pool: PgPool, limit: int, counts: dict[str, int],
             clock: Callable[[], float] = time.monotonic) -> SharedRateLimiter:
    return SharedRateLimiter(limit, name="requests", connection=lambda: None,  # type: ignore[arg-type,return-value]
                             loop_connection=_spied(pool, counts), clock=clock)


@pytest.fixture
def store(postgres: Any) -> Store:
    return Store(database=postgres.new_database())


@pytest.fixture
def pool(store: Store) -> PgPool:
    """The store's pool (closed by :func:`_run`)."""
    pool = store.pool(size=4)
    assert isinstance(pool, PgPool)
    return pool


@pytest.fixture
def counts() -> dict[str, int]:
    """Statements sent by the spied connections: bucket takes and reads."""
    return {"takes": 0, "reads": 0}


def _account(store: Store) -> tuple[str, str]:
    with store.connection() as conn, transaction(conn):
        account, key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        test_id = create_test(conn, url="https://example.com/", device=Device.DESKTOP,
                              location=Location.DE, config=LighthouseConfig(),
                              retention=timedelta(days=1), account_id=account.id)
    return key, test_id


def _run(pool: PgPool, scenario: Any) -> Any:
    async def main() -> Any:
        await pool.open_loop_pool(4)
        try:
            return await scenario()
        finally:
            await pool.close_loop_pool()
            pool.close()

    return asyncio.run(main())


def test_a_busy_key_takes_leases_and_its_requests_only_read(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    key, test_id = _account(store)
    limiter = _limiter(pool, 600_000, counts)  # leases up to MAX_LEASE

    async def scenario() -> list[Any]:
        return [await limiter.check_key(key, test_id=test_id) for _ in range(300)]

    results = _run(pool, scenario)
    assert all(decision is not None and decision.allowed for _, decision in results)
    assert all(check.test is not None and check.test.id == test_id for check, _ in results)
    # Leases of 1, 2, 4, ... MAX_LEASE tokens: a handful of takes for 300 requests.
    assert counts["takes"] + counts["reads"] == 300
    assert counts["takes"] <= 2 + math.ceil(math.log2(MAX_LEASE)) + 300 // MAX_LEASE


def test_concurrent_requests_of_a_busy_key_mostly_only_read(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    key, test_id = _account(store)
    limiter = _limiter(pool, 600_000, counts)

    async def scenario() -> tuple[list[Any], list[int]]:
        results: list[Any] = []
        takes = []
        for _ in range(20):  # 20 waves of 32 at once, on 4 connections
            before = counts["takes"]
            results += await asyncio.gather(
                *(limiter.check_key(key, test_id=test_id) for _ in range(32)))
            takes.append(counts["takes"] - before)
        return results, takes

    results, takes = _run(pool, scenario)
    assert all(decision is not None and decision.allowed for _, decision in results)
    # Leases grow by doubling at each take; once grown, the next is taken while half of
    # this one is left, so a wave of 32 rarely finds it empty.
    assert sum(takes[10:]) <= 10, takes
    # The reads of a wave share their round trips.
    assert counts["reads"] < 640 - counts["takes"], counts


def test_two_servers_never_admit_more_than_the_limit(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    key, _ = _account(store)
    limit = 600  # 10 a second: leases of up to 10 tokens
    servers = [_limiter(pool, limit, counts) for _ in range(2)]

    async def scenario() -> tuple[int, float]:
        started = time.monotonic()
        allowed = 0
        for n in range(limit + 200):  # alternately, as a load balancer would
            _, decision = await servers[n % 2].check_key(key)
            allowed += decision is not None and decision.allowed
        return allowed, time.monotonic() - started

    allowed, elapsed = _run(pool, scenario)
    refilled = limit / 60 * elapsed
    # The full bucket, plus what refilled meanwhile: never more (leases are charged to
    # the shared bucket before a token is spent).
    assert allowed <= limit + math.ceil(refilled), (allowed, elapsed)
    # And at most one lease per server lapses unspent when the bucket runs dry.
    assert allowed >= limit - 2 * 10, (allowed, elapsed)
    assert counts["takes"] < (limit + 200) / 2


def test_a_key_revoked_is_refused_at_once_though_tokens_are_leased(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    key, test_id = _account(store)
    limiter = _limiter(pool, 600_000, counts)

    async def scenario() -> tuple[Any, Any]:
        for _ in range(20):  # leases with tokens to spare
            await limiter.check_key(key)
        with store.connection() as conn, transaction(conn):
            revoke_account(conn, key[:11])
        return await limiter.check_key(key, test_id=test_id)

    check, decision = _run(pool, scenario)
    assert check.account is None
    assert decision is None


def test_a_wrong_key_with_a_right_prefix_spends_no_leased_token(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    key, _ = _account(store)
    # A frozen clock: the lease never lapses, so remaining counts only what is spent.
    limiter = _limiter(pool, 600_000, counts, clock=lambda: 0.0)
    wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")

    async def scenario() -> tuple[int, int, int]:
        for _ in range(8):
            await limiter.check_key(key)
        _, before = await limiter.check_key(key)
        takes = counts["takes"]
        for _ in range(5):
            check, refused = await limiter.check_key(wrong)
            assert check.account is None
            assert refused is None
        _, after = await limiter.check_key(key)
        assert before is not None
        assert after is not None
        return before.remaining, after.remaining, counts["takes"] - takes

    before, after, takes = _run(pool, scenario)
    assert takes == 0  # all from the lease
    assert before - after == 1


def test_a_lease_lapses_after_its_time(store: Store, pool: PgPool, counts: dict[str, int]) -> None:
    key, _ = _account(store)
    now = [0.0]
    limiter = _limiter(pool, 600_000, counts, clock=lambda: now[0])

    async def scenario() -> int:
        for _ in range(8):  # leases of 1, 2 and 4: tokens to spare
            await limiter.check_key(key)
        takes = counts["takes"]
        now[0] += LEASE_SECONDS
        await limiter.check_key(key)
        return counts["takes"] - takes

    assert _run(pool, scenario) == 1  # the tokens left had lapsed: a new take


def test_a_request_that_leaves_while_its_read_waits_does_not_disturb_the_others(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    from pagelab.service._key_reads import KeyReads
    from pagelab.store import KeyRead

    key, test_id = _account(store)
    reads = KeyReads(_spied(pool, counts))

    async def scenario() -> list[Any]:
        tasks = [asyncio.create_task(reads.read(KeyRead(key, test_id))) for _ in range(5)]
        await asyncio.sleep(0)  # the reads are asked for; the first is sent, the rest wait
        assert counts["reads"] == 1
        tasks[2].cancel()  # a client gone
        return await asyncio.gather(*tasks, return_exceptions=True)

    results = _run(pool, scenario)
    assert isinstance(results[2], asyncio.CancelledError)
    assert all(r.test.id == test_id for n, r in enumerate(results) if n != 2)
    assert counts["reads"] == 2  # the three left behind the first shared one statement


def test_a_read_that_finds_none_under_way_is_sent_at_once(
    store: Store, pool: PgPool, counts: dict[str, int]
) -> None:
    from pagelab.service._key_reads import KeyReads
    from pagelab.store import KeyRead

    key, test_id = _account(store)
    reads = KeyReads(_spied(pool, counts))

    async def scenario() -> list[int]:
        sent = []
        for _ in range(3):  # one after another: none finds another under way
            task = asyncio.create_task(reads.read(KeyRead(key, test_id)))
            await asyncio.sleep(0)  # the task's first step only
            sent.append(counts["reads"])
            test = (await task).test
            assert test is not None
            assert test.id == test_id
        return sent

    assert _run(pool, scenario) == [1, 2, 3]  # each sent in its first step, not a turn later


def test_a_failed_read_fails_every_request_that_shared_it(store: Store, pool: PgPool) -> None:
    from pagelab._exceptions import StoreError
    from pagelab.service._key_reads import KeyReads
    from pagelab.store import KeyRead

    key, _ = _account(store)
    reads = KeyReads(pool.loop_connection)

    async def scenario() -> list[Any]:
        await pool.close_loop_pool()  # the store goes away
        return await asyncio.gather(*(reads.read(KeyRead(key)) for _ in range(3)),
                                    return_exceptions=True)

    results = _run(pool, scenario)
    assert all(isinstance(r, StoreError) for r in results), results
