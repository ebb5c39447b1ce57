"""Persistent history: SQLite (WAL, transactional writes) plus artifact files."""

from ._artifacts import ARTIFACT_NAMES, ArtifactFiles
from ._db import MIGRATIONS, SCHEMA_VERSION, connect, migrate, transaction
from ._records import (
    LOCAL_ACCOUNT,
    TestQuery,
    batch_status,
    create_batch,
    create_test,
    delete_expired,
    finish_test,
    get_batch,
    get_test,
    list_tests,
    new_id,
    now_ms,
    run_config,
    start_test,
    test_timing,
)
from ._store import DEFAULT_RETENTION, Store

__all__ = [
    "ARTIFACT_NAMES",
    "DEFAULT_RETENTION",
    "LOCAL_ACCOUNT",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ArtifactFiles",
    "Store",
    "TestQuery",
    "batch_status",
    "connect",
    "create_batch",
    "create_test",
    "delete_expired",
    "finish_test",
    "get_batch",
    "get_test",
    "list_tests",
    "migrate",
    "new_id",
    "now_ms",
    "run_config",
    "start_test",
    "test_timing",
    "transaction",
]
