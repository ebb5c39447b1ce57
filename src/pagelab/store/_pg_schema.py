"""The PostgreSQL schema: numbered, forward-only migrations, as for SQLite (:mod:`._db`).

The tables and columns are SQLite's (so the store functions' SQL runs on both) with
PostgreSQL's types: epoch milliseconds are ``BIGINT``; ``rowid`` is an identity column,
so the list's tie-break and the deep-page index read as on SQLite. The per-minute and
per-day counts are kept by PL/pgSQL triggers. Only here: the lease of a claimed test (so
another server reclaims the test of a server that died), the artifacts' bytes (compressed,
so every server serves every report), and the rate-limit buckets every server shares.

Numbered on their own: entry i takes a PostgreSQL store from version i to i + 1. Never
edit a released entry; append one. Released entries are frozen text, so the two dialects
are not rendered from one description; ``tests/test_store_schemas.py`` migrates a store
of each and fails when their tables, columns, keys, indexes or triggers differ beyond the
PostgreSQL-only parts named above: a change to one schema needs its twin here.
"""

from __future__ import annotations

__all__ = ["PG_MIGRATIONS", "PG_SCHEMA_VERSION"]

_COUNT_TRIGGERS = """
CREATE FUNCTION pagelab_count_tests(account TEXT, created BIGINT, delta INTEGER)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO test_counts_minute (account_id, minute, n)
    VALUES (account, floor(created / 60000.0)::BIGINT, delta)
    ON CONFLICT (account_id, minute) DO UPDATE SET n = test_counts_minute.n + delta;
    INSERT INTO test_counts_day (account_id, day, n)
    VALUES (account, floor(created / 86400000.0)::BIGINT, delta)
    ON CONFLICT (account_id, day) DO UPDATE SET n = test_counts_day.n + delta;
$$;
CREATE FUNCTION pagelab_tests_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM pagelab_count_tests(OLD.account_id, OLD.created_at, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pagelab_count_tests(NEW.account_id, NEW.created_at, 1);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER tests_count_insert AFTER INSERT ON tests
    FOR EACH ROW EXECUTE FUNCTION pagelab_tests_counted();
CREATE TRIGGER tests_count_delete AFTER DELETE ON tests
    FOR EACH ROW EXECUTE FUNCTION pagelab_tests_counted();
CREATE TRIGGER tests_count_move AFTER UPDATE OF account_id, created_at ON tests
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id
                       OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION pagelab_tests_counted();
"""

PG_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        urls_json TEXT NOT NULL,
        devices_json TEXT NOT NULL,
        locations_json TEXT NOT NULL,
        batch_type TEXT NOT NULL,
        config_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX batches_account ON batches (account_id, created_at);
    CREATE TABLE tests (
        rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        batch_id TEXT REFERENCES batches (id) ON DELETE CASCADE,
        position INTEGER NOT NULL DEFAULT 0,
        url TEXT NOT NULL,
        device TEXT NOT NULL,
        location TEXT NOT NULL,
        config_json TEXT NOT NULL,
        run_config_json TEXT,
        status TEXT NOT NULL,
        lighthouse_version TEXT,
        metrics_json TEXT,
        error_code TEXT,
        error_message TEXT,
        engine_failure INTEGER NOT NULL DEFAULT 0,
        vantage TEXT,
        environment_json TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        started_at BIGINT,
        finished_at BIGINT,
        -- the server running an active test, and until when its claim holds unrenewed
        lease_owner TEXT,
        lease_expires_at BIGINT
    );
    CREATE INDEX tests_account_created ON tests (account_id, created_at DESC, rowid DESC);
    CREATE INDEX tests_status ON tests (status, created_at, rowid);
    CREATE INDEX tests_batch ON tests (batch_id, position);
    CREATE INDEX tests_expires ON tests (expires_at);
    CREATE INDEX tests_engine_failures ON tests (id) WHERE engine_failure = 1;
    CREATE INDEX tests_leases ON tests (lease_expires_at) WHERE status = 'active';
    CREATE TABLE artifacts (
        test_id TEXT NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        -- a file under --artifacts-dir, or NULL: the bytes are in `data` (zlib)
        relpath TEXT,
        media_type TEXT NOT NULL,
        size BIGINT NOT NULL,
        data BYTEA,
        PRIMARY KEY (test_id, name)
    );
    CREATE TABLE accounts (
        rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        id TEXT PRIMARY KEY,
        key_prefix TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL,
        lighthouse_credits BIGINT NOT NULL CHECK (lighthouse_credits >= 0),
        lighthouse_paid_credits BIGINT NOT NULL DEFAULT 0 CHECK (lighthouse_paid_credits >= 0),
        ttfb_credits BIGINT NOT NULL CHECK (ttfb_credits >= 0),
        ttfb_paid_credits BIGINT NOT NULL DEFAULT 0 CHECK (ttfb_paid_credits >= 0),
        lighthouse_plan BIGINT NOT NULL CHECK (lighthouse_plan >= 0),
        ttfb_plan BIGINT NOT NULL CHECK (ttfb_plan >= 0),
        period_start BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
    );
    CREATE TABLE credit_charges (
        test_id TEXT PRIMARY KEY REFERENCES tests (id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        paid INTEGER NOT NULL,
        refunded_at BIGINT
    );
    CREATE TABLE service_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE test_counts_minute (
        account_id TEXT NOT NULL,
        minute BIGINT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (account_id, minute)
    );
    CREATE TABLE test_counts_day (
        account_id TEXT NOT NULL,
        day BIGINT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (account_id, day)
    );
    CREATE TABLE rate_buckets (
        caller TEXT PRIMARY KEY,
        tokens DOUBLE PRECISION NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        allowed BOOLEAN NOT NULL
    );
    CREATE TABLE fleet_dispatches (
        test_id TEXT PRIMARY KEY,
        queue TEXT NOT NULL,
        dispatched_at BIGINT NOT NULL
    );
    """
    + _COUNT_TRIGGERS,
    # 2: the fleet's per-worker keys (name, current key generation, locations, revoked or
    # not) and which worker took each dispatched test, at which delivery attempt.
    """
    ALTER TABLE fleet_dispatches ADD COLUMN worker TEXT;
    ALTER TABLE fleet_dispatches ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE fleet_workers (
        name TEXT PRIMARY KEY,
        generation INTEGER NOT NULL,
        locations TEXT NOT NULL,
        issued_at BIGINT NOT NULL,
        revoked_at BIGINT
    );
    """,
    # 3: how many tokens the last take granted: a server takes several at once for a busy
    # key and spends them without a write (service/_ratelimit.py).
    """
    ALTER TABLE rate_buckets ADD COLUMN granted DOUBLE PRECISION NOT NULL DEFAULT 0;
    """,
    # 4: the user flow step a test measured, as SQLite's migration 4.
    """
    ALTER TABLE tests ADD COLUMN flow TEXT;
    ALTER TABLE tests ADD COLUMN step TEXT;
    ALTER TABLE tests ADD COLUMN step_index INTEGER;
    ALTER TABLE tests ADD COLUMN mode TEXT;
    """,
    # 5: the build a test measured, as SQLite's migration 5.
    """
    ALTER TABLE tests ADD COLUMN build_commit TEXT;
    ALTER TABLE tests ADD COLUMN build_branch TEXT;
    ALTER TABLE tests ADD COLUMN build_commit_time BIGINT;
    ALTER TABLE tests ADD COLUMN build_url TEXT;
    ALTER TABLE tests ADD COLUMN build_pull_request TEXT;
    """,
)

PG_SCHEMA_VERSION = len(PG_MIGRATIONS)
