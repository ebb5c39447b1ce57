"""The SQLite and PostgreSQL schemas stay in step (issue 21).

Each dialect has its own numbered migrations (``store/_db.py``, ``store/_pg_schema.py``):
released ones are never edited, so the two cannot be rendered from one description after
the fact. Instead this test migrates a fresh store of each, reads back what the databases
say they hold, and requires the same tables, columns, nullability, primary keys, indexes
and triggers, with compatible types. What only PostgreSQL has is listed below with its
reason; anything else added to one dialect and not the other fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pagelab.store import Store, ensure_fleet_tables

#: Tables only a PostgreSQL store has: its schema version (SQLite keeps it in
#: ``PRAGMA user_version``) and the rate-limit buckets every server shares (one SQLite
#: server keeps them in memory).
PG_ONLY_TABLES = {"pagelab_schema", "rate_buckets"}
#: Columns only PostgreSQL has: ``rowid`` (SQLite's is implicit; the list's tie-break and
#: the deep-page index read it), a running test's lease (servers reclaim a dead one's
#: test) and an artifact's bytes (every server serves every report).
PG_ONLY_COLUMNS = {
    ("tests", "rowid"), ("tests", "lease_owner"), ("tests", "lease_expires_at"),
    ("accounts", "rowid"), ("artifacts", "data"),
}
#: Nullable only on PostgreSQL: an artifact kept in ``data`` has no file.
PG_NULLABLE = {("artifacts", "relpath")}
#: Indexes only PostgreSQL has: the one that finds expired leases.
PG_ONLY_INDEXES = {"tests_leases"}
#: SQLite's declared type -> the PostgreSQL types it may be (epoch milliseconds and
#: counts need 64 bits there; SQLite's INTEGER has them).
COMPATIBLE = {"INTEGER": {"integer", "bigint"}, "TEXT": {"text"}}


def _sqlite_schema(path: Path) -> dict[str, Any]:
    store = Store(path)
    with store.connection() as conn:
        ensure_fleet_tables(conn)  # made on a fleet server's first use on SQLite
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        columns = {
            (table, row["name"]): (row["type"].upper(), bool(row["notnull"] or row["pk"]))
            for table in tables for row in conn.execute(f"PRAGMA table_info({table})")
        }
        keys = {
            table: [row["name"] for row in sorted(conn.execute(f"PRAGMA table_info({table})"),
                                                  key=lambda r: r["pk"]) if row["pk"]]
            for table in tables
        }
        indexes = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' "
            "AND name NOT LIKE 'sqlite_autoindex_%'")}
        triggers = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return {"tables": set(tables), "columns": columns, "keys": keys, "indexes": indexes,
            "triggers": triggers}


def _postgres_schema(url: str) -> dict[str, Any]:
    with Store(database=url).connection() as conn:
        columns = {
            (row["table_name"], row["column_name"]): (row["data_type"],
                                                      row["is_nullable"] == "NO")
            for row in conn.execute(
                "SELECT table_name, column_name, data_type, is_nullable "
                "FROM information_schema.columns WHERE table_schema = 'public'")
        }
        keys: dict[str, list[str]] = {}
        for row in conn.execute(
            "SELECT t.relname AS table_name, a.attname AS column_name FROM pg_index i "
            "JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public' "
            "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON TRUE "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
            "WHERE i.indisprimary ORDER BY t.relname, k.position"
        ):
            keys.setdefault(row["table_name"], []).append(row["column_name"])
        # Indexes made by a PRIMARY KEY or UNIQUE constraint are SQLite's autoindexes.
        indexes = {row[0] for row in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' "
            "AND indexname NOT IN (SELECT conname FROM pg_constraint)")}
        triggers = {row[0] for row in conn.execute(
            "SELECT DISTINCT trigger_name FROM information_schema.triggers "
            "WHERE trigger_schema = 'public'")}
    return {"tables": {table for table, _ in columns}, "columns": columns, "keys": keys,
            "indexes": indexes, "triggers": triggers}


def test_the_postgresql_schema_keeps_step_with_sqlites(tmp_path: Path, postgres: Any) -> None:
    lite = _sqlite_schema(tmp_path)
    pg = _postgres_schema(postgres.new_database())

    assert pg["tables"] - PG_ONLY_TABLES == lite["tables"]
    pg_columns = {name: kind for name, kind in pg["columns"].items()
                  if name not in PG_ONLY_COLUMNS and name[0] not in PG_ONLY_TABLES}
    assert set(pg_columns) == set(lite["columns"])
    for name, (declared, not_null) in lite["columns"].items():
        pg_type, pg_not_null = pg_columns[name]
        assert pg_type in COMPATIBLE[declared], (name, declared, pg_type)
        assert pg_not_null == (not_null and name not in PG_NULLABLE), name
    assert {table: key for table, key in pg["keys"].items()
            if table not in PG_ONLY_TABLES} == {
        table: key for table, key in lite["keys"].items() if key}
    assert pg["indexes"] - PG_ONLY_INDEXES == lite["indexes"]
    assert pg["triggers"] == lite["triggers"]
