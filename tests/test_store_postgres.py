"""The team store on a real PostgreSQL: the test cluster, the dialect layer, migrations."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from pagelab.store import find_postgres_bin, install_postgresql


def _test_of(conn: Any, account_id: str) -> str:
    """A new idle test of ``account_id``, kept for a day."""
    from datetime import timedelta

    from pagelab.models import Device, LighthouseConfig, Location
    from pagelab.store import create_test

    return create_test(conn, url="https://example.com/", device=Device.DESKTOP,
                       location=Location.DE, config=LighthouseConfig(),
                       retention=timedelta(days=1), account_id=account_id)


def test_an_installed_postgresql_is_found_without_apt() -> None:
    # `make test` ran `pagelab setup --database`, so Debian's postgresql is installed here.
    found = find_postgres_bin()
    assert found is not None, "run `pagelab setup --database` first"
    assert install_postgresql(log=False) == found
    assert (found / "initdb").exists()


def test_the_test_cluster_listens_on_loopback_only_and_needs_its_password(postgres: Any) -> None:
    url = postgres.new_database()
    with psycopg.connect(url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("SHOW unix_socket_directories").fetchone() == ("",)
    wrong = url.replace(postgres.password, "not-the-password")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong).close()


def _queued_store(postgres: Any, count: int) -> tuple[Any, list[str]]:
    from datetime import timedelta

    from pagelab.models import Device, LighthouseConfig, Location
    from pagelab.store import Store, create_test, transaction
    from pagelab.store._records import now_ms

    store = Store(database=postgres.new_database())
    base = now_ms() - count
    with store.connection() as conn, transaction(conn):
        ids = [
            create_test(conn, url=f"https://example.com/{n}", device=Device.DESKTOP,
                        location=Location.DE, config=LighthouseConfig(),
                        retention=timedelta(days=1), account_id="acct_team",
                        created_at=base + n)
            for n in range(count)
        ]
    return store, ids


def test_a_newer_schema_is_refused(postgres: Any) -> None:
    from pagelab import StoreError
    from pagelab.store import Store
    from pagelab.store._pg import PgConnection, _open, migrate_postgres

    url = postgres.new_database()
    with Store(database=url).connection() as conn:
        conn.execute("UPDATE pagelab_schema SET version = 99")
    conn = PgConnection(_open(url))
    try:
        with pytest.raises(StoreError, match="schema version 99, newer than this pagelab"):
            migrate_postgres(conn)
    finally:
        conn.close()  # left open, it is a ResourceWarning (filterwarnings = error)


def test_claims_skip_each_others_rows_and_take_over_expired_leases(postgres: Any) -> None:
    from pagelab.store import claim_queued_test, renew_lease

    store, ids = _queued_store(postgres, 3)
    with store.connection() as one, store.connection() as other:
        # One server's claim is still open (its transaction holds the row lock): the other
        # skips that row instead of waiting for it.
        one.execute("BEGIN")
        first = claim_queued_test(one, owner="a", lease_ms=60_000)
        second = claim_queued_test(other, owner="b", lease_ms=60_000)
        one.execute("COMMIT")
        assert (first, second) == (ids[0], ids[1])
        assert renew_lease(one, ids[0], owner="a", lease_ms=60_000)
        assert not renew_lease(one, ids[0], owner="b", lease_ms=60_000)
        # A lease that ran out (its server died) is claimed again, before newer tests.
        other.execute("UPDATE tests SET lease_expires_at = 0 WHERE id = ?", (ids[0],))
        assert claim_queued_test(other, owner="b", lease_ms=60_000) == ids[0]
        assert not renew_lease(one, ids[0], owner="a", lease_ms=60_000)
        assert claim_queued_test(one, owner="a", lease_ms=60_000) == ids[2]
        assert claim_queued_test(one, owner="a", lease_ms=60_000) is None


def test_the_deep_page_index_counts_on_postgresql(postgres: Any) -> None:
    from pagelab.store import TestQuery, list_tests

    store, ids = _queued_store(postgres, 2500)
    with store.connection() as conn:
        page = list_tests(conn, TestQuery(page=241, per_page=10), account_id="acct_team")
        minutes = conn.execute("SELECT SUM(n) FROM test_counts_minute").fetchone()[0]
    assert minutes == 2500
    # Newest first: page 241 holds entries 2400..2409 counted from the newest.
    assert [test.id for test in page] == list(reversed(ids))[2400:2410]


def test_the_first_pages_in_one_statement_equal_the_ids_first_pages_on_postgresql(
    postgres: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pagelab.store import TestQuery, _records, list_tests, transaction

    store, ids = _queued_store(postgres, 60)
    with store.connection() as conn:
        with transaction(conn):  # every third one expired, not yet swept
            conn.execute("UPDATE tests SET expires_at = 0 WHERE id = ANY(?)", (ids[::3],))

        def pages() -> list[list[str | None]]:
            return [[test.id for test in list_tests(conn, TestQuery(page=page, per_page=7),
                                                    account_id="acct_team")]
                    for page in range(1, 9)]

        one_statement = pages()
        monkeypatch.setattr(_records, "_ONE_STATEMENT_BELOW", 0)
        ids_first = pages()
    live = [test_id for n, test_id in enumerate(ids) if n % 3]
    expected = [list(reversed(live))[start:start + 7] for start in range(0, 56, 7)]
    assert one_statement == ids_first == expected


def test_link_secrets_are_shared_through_the_database_and_rotate_there(
    postgres: Any, tmp_path: Any
) -> None:
    from pagelab.store import Store, link_secrets, rotate_link_secret, transaction

    url = postgres.new_database()
    first, second = Store(tmp_path / "a", database=url), Store(tmp_path / "b", database=url)
    with first.connection() as one, second.connection() as other:
        secrets = link_secrets(first.data_dir, one)
        assert link_secrets(second.data_dir, other) == secrets  # every server verifies
        with transaction(one):
            rotate_link_secret(first.data_dir, conn=one)
        rotated = link_secrets(second.data_dir, other)
        assert rotated[1:] == secrets[:1]
        assert rotated[0] not in secrets
        with transaction(one):
            rotate_link_secret(first.data_dir, keep_previous=False, conn=one)
        assert len(link_secrets(second.data_dir, other)) == 1
    # Nothing on disk: the data dirs hold no key file.
    assert not list((tmp_path).rglob("report-links.key"))


def test_rate_buckets_are_shared_and_swept_once_full(postgres: Any) -> None:
    from pagelab.store import Store, delete_expired, take_rate_token, transaction

    store = Store(database=postgres.new_database())
    with store.connection() as one, store.connection() as other:
        taken = [take_rate_token(conn, "requests:acct", 3)[0] for conn in (one, other) * 2]
        assert taken == [True, True, True, False]
        other.execute("UPDATE rate_buckets SET at = at - 61")
        with transaction(one):
            delete_expired(one)
        assert one.execute("SELECT COUNT(*) FROM rate_buckets").fetchone()[0] == 0


def test_fleet_worker_keys_and_dispatch_claims_on_postgresql(postgres: Any) -> None:
    from pagelab.store import (
        claim_dispatched_test,
        dispatch_of,
        ensure_fleet_tables,
        fleet_worker_key,
        issue_fleet_worker_key,
        list_fleet_worker_keys,
        mark_dispatched,
        revoke_fleet_worker_key,
        transaction,
    )

    store, ids = _queued_store(postgres, 1)
    with store.connection() as conn:
        with transaction(conn):
            ensure_fleet_tables(conn)  # the migrations made them: nothing to do
            first = issue_fleet_worker_key(conn, "berlin", ["de"])
            again = issue_fleet_worker_key(conn, "berlin", ["de", "uk"])
        assert (first.generation, again.generation) == (1, 2)
        assert again.locations == ("de", "uk")
        assert conn.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'fleet_workers' AND column_name = 'issued_at'"
        ).fetchone()[0] == "bigint"
        with transaction(conn):
            assert revoke_fleet_worker_key(conn, "berlin")
            assert not revoke_fleet_worker_key(conn, "berlin")
        assert fleet_worker_key(conn, "berlin") is None
        revoked = fleet_worker_key(conn, "berlin", revoked=True)
        assert revoked is not None
        assert revoked.revoked_at is not None
        assert [key.name for key in list_fleet_worker_keys(conn)] == ["berlin"]
        with transaction(conn):
            mark_dispatched(conn, ids[0], "de")
            assert claim_dispatched_test(conn, ids[0], "berlin", 1)
            assert not claim_dispatched_test(conn, ids[0], "paris", 1)
            assert claim_dispatched_test(conn, ids[0], "paris", 2)  # a later delivery
        dispatch = dispatch_of(conn, ids[0])
        assert dispatch is not None
        assert (dispatch.worker, dispatch.attempt) == ("paris", 2)


def test_a_version_1_team_store_gains_the_fleet_tables(postgres: Any) -> None:
    from pagelab.store import Store, issue_fleet_worker_key, transaction
    from pagelab.store._pg_schema import PG_MIGRATIONS

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as raw:  # as the first team store left it
        raw.execute(PG_MIGRATIONS[0].encode())
        raw.execute("CREATE TABLE pagelab_schema (version INTEGER NOT NULL)")
        raw.execute("INSERT INTO pagelab_schema (version) VALUES (1)")
        raw.execute("INSERT INTO fleet_dispatches VALUES ('lt_old', 'de', 1)")
    with Store(database=url).connection() as conn, transaction(conn):
        assert issue_fleet_worker_key(conn, "berlin", ["de"]).generation == 1
        assert conn.execute("SELECT worker, attempt FROM fleet_dispatches").fetchone() == (
            None, 0)
        assert conn.execute("SELECT version FROM pagelab_schema").fetchone()[0] == len(
            PG_MIGRATIONS)


def test_one_statement_checks_the_key_takes_its_token_and_reads_the_test(postgres: Any) -> None:
    import asyncio

    from pagelab.models import TestStatus
    from pagelab.store import (
        PgPool,
        Store,
        check_key,
        create_account,
        revoke_account,
        transaction,
    )

    store = Store(database=postgres.new_database())
    with store.connection() as conn, transaction(conn):
        account, key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        _other, other_key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        test_id = _test_of(conn, account.id)
    pool = store.pool(size=2)
    assert isinstance(pool, PgPool)

    def tokens(caller: str) -> Any:
        with store.connection() as conn:
            row = conn.execute("SELECT tokens FROM rate_buckets WHERE caller = ?",
                               (caller,)).fetchone()
        return row[0] if row is not None else None

    async def check(key: str, test: str | None = None, take: int = 1) -> Any:
        async with pool.loop_connection() as conn:
            return await check_key(conn, key, bucket="requests:", limit_per_minute=3,
                                   take=take, test_id=test, report_url=lambda i: f"/r/{i}")

    async def scenario() -> None:
        await pool.open_loop_pool(2)
        try:
            read = await check(key, test_id)
            assert read.account is not None
            assert read.account.id == account.id
            assert read.granted == 1
            assert read.tokens == 2
            assert read.test is not None
            assert read.test.id == test_id
            assert read.test.status == TestStatus.IDLE
            assert read.test.report_url is None
            # Another account's test is not read; its key is checked all the same.
            foreign = await check(other_key, test_id)
            assert foreign.account is not None
            assert foreign.test is None
            # A key with the right prefix and a wrong rest is refused without taking
            # the account's token (knowing a prefix must not spend its budget).
            wrong = await check(key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB"))
            assert wrong.account is None
            assert wrong.granted == 0
            assert tokens(f"requests:{account.id}") == 2
            # take=0 reads the key (and the test) without touching the bucket.
            unread = await check(key, test_id, take=0)
            assert unread.account is not None
            assert unread.test is not None
            assert (unread.granted, unread.tokens) == (0, 0.0)
            assert tokens(f"requests:{account.id}") == 2
            # A take grants what the bucket has, up to what it asks for...
            assert (await check(key, take=5)).granted == 2
            # ... and none once the budget (3 a minute) has run out.
            assert (await check(key)).granted == 0
            # ... and a revocation is seen by the very next check (nothing cached).
            with store.connection() as conn, transaction(conn):
                revoke_account(conn, account.key_prefix)
            assert (await check(key, test_id)).account is None
        finally:
            await pool.close_loop_pool()
            pool.close()

    asyncio.run(scenario())


def test_the_event_loops_connections_are_bounded_reused_and_closed(postgres: Any) -> None:
    import asyncio

    from pagelab import StoreError
    from pagelab.store import PgPool, Store

    pool = Store(database=postgres.new_database()).pool(size=2)
    assert isinstance(pool, PgPool)

    async def backends() -> int:
        async with pool.loop_connection() as conn:
            cursor = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'pagelab' AND backend_type = 'client backend'")
            row = await cursor.fetchone()
            assert row is not None
            return int(row[0])

    async def scenario() -> None:
        # The thread pool opens its first connection in the background: counted from the
        # start, not arriving in the middle of the count (it did on a busy machine).
        pool._pool.wait(timeout=120)
        await pool.open_loop_pool(3)
        before = await backends()

        async def hold() -> None:
            async with pool.loop_connection() as conn:
                await conn.execute("SELECT pg_sleep(0.05)")

        # Ten at once through three connections: the others wait their turn.
        await asyncio.gather(*(hold() for _ in range(10)))
        assert await backends() - before <= 2  # the first kept one, at most two more
        # A statement's error leaves its connection usable (autocommit): still three.
        async with pool.loop_connection() as conn:
            with pytest.raises(psycopg.errors.DivisionByZero):
                await conn.execute("SELECT 1 / 0")
        assert await backends() - before <= 2
        await pool.close_loop_pool()
        with pytest.raises(StoreError, match="not open"):
            async with pool.loop_connection():
                pass
        pool.close()

    asyncio.run(scenario())


def test_one_statement_checks_several_requests_keys_and_reads_their_tests(
    postgres: Any,
) -> None:
    import asyncio

    from pagelab.store import (
        KeyRead,
        PgPool,
        Store,
        create_account,
        read_keys,
        revoke_account,
        transaction,
    )

    store = Store(database=postgres.new_database())
    with store.connection() as conn, transaction(conn):
        account, key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        other, other_key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        revoked, revoked_key = create_account(conn, lighthouse_credits=1, ttfb_credits=0)
        revoke_account(conn, revoked.key_prefix)
        test_id = _test_of(conn, account.id)
    pool = store.pool(size=2)
    assert isinstance(pool, PgPool)
    wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    reads = [
        KeyRead(key, test_id, lambda i: f"/r/{i}"),
        KeyRead(other_key, test_id),  # another account's test: not read
        KeyRead(wrong, test_id),  # a right prefix, a wrong rest
        KeyRead(revoked_key),
        KeyRead(key),  # the same key twice, without a test
        KeyRead(key, "lt_nosuchtest"),
    ]

    async def scenario() -> Any:
        await pool.open_loop_pool(1)
        try:
            async with pool.loop_connection() as conn:
                # A lone request reads with the one-request statement: the same answers.
                for read in reads:
                    (alone,) = await read_keys(conn, [read])
                    assert (alone.account is None) == (read.key in (wrong, revoked_key))
                    assert (alone.test is not None) == (read is reads[0])
                return await read_keys(conn, reads)
        finally:
            await pool.close_loop_pool()
            pool.close()

    checks = asyncio.run(scenario())
    assert [c.account.id if c.account else None for c in checks] == [
        account.id, other.id, None, None, account.id, account.id]
    assert checks[0].test is not None
    assert checks[0].test.id == test_id
    assert [c.test for c in checks[1:]] == [None] * 5
    # Reads take nothing from any bucket.
    assert all((c.granted, c.tokens) == (0, 0.0) for c in checks)
    with store.connection() as conn:
        assert conn.execute("SELECT COUNT(*) FROM rate_buckets").fetchone()[0] == 0
