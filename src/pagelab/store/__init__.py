"""Persistent history: SQLite (WAL, transactional writes) plus artifact files, or a
PostgreSQL database several API servers share (a team store, docs/deployment.md).

Machinery, not public API: the runners, the service, the fleet and the CLI keep their
records here, through the functions below (each takes a connection); users reach the
history through a runner (:func:`pagelab.stats.history`, ``runner.history()``). Nothing
is in ``__all__``; the names below are for the other pagelab packages and may change.
"""

from ._accounts import KEY_PREFIX_LENGTH as KEY_PREFIX_LENGTH
from ._accounts import Account as Account
from ._accounts import CreditKind as CreditKind
from ._accounts import account_credits as account_credits
from ._accounts import batch_owner as batch_owner
from ._accounts import can_pay as can_pay
from ._accounts import charge_credits as charge_credits
from ._accounts import create_account as create_account
from ._accounts import find_account_by_key as find_account_by_key
from ._accounts import list_accounts as list_accounts
from ._accounts import next_refill as next_refill
from ._accounts import record_test_charges as record_test_charges
from ._accounts import refund_credits as refund_credits
from ._accounts import refund_engine_failures as refund_engine_failures
from ._accounts import revoke_account as revoke_account
from ._accounts import test_owner as test_owner
from ._accounts import top_up_account as top_up_account
from ._artifacts import ARTIFACT_NAMES as ARTIFACT_NAMES
from ._artifacts import resource_string as resource_string
from ._auth import KeyCheck as KeyCheck
from ._auth import KeyRead as KeyRead
from ._auth import check_key as check_key
from ._auth import read_keys as read_keys
from ._copy import copy_store as copy_store
from ._db import SCHEMA_VERSION as SCHEMA_VERSION
from ._db import transaction as transaction
from ._db import truncate_wal as truncate_wal
from ._dialect import Connection as Connection
from ._fleet import FleetWorkerKey as FleetWorkerKey
from ._fleet import claim_dispatched_test as claim_dispatched_test
from ._fleet import dispatch_of as dispatch_of
from ._fleet import ensure_fleet_tables as ensure_fleet_tables
from ._fleet import fail_waiting_tests as fail_waiting_tests
from ._fleet import fleet_worker_key as fleet_worker_key
from ._fleet import forget_dispatches as forget_dispatches
from ._fleet import issue_fleet_worker_key as issue_fleet_worker_key
from ._fleet import list_fleet_worker_keys as list_fleet_worker_keys
from ._fleet import mark_dispatched as mark_dispatched
from ._fleet import revoke_fleet_worker_key as revoke_fleet_worker_key
from ._fleet import start_dispatched_test as start_dispatched_test
from ._fleet import status_of_test as status_of_test
from ._fleet import undispatched_tests as undispatched_tests
from ._pg import PgConnection as PgConnection
from ._pg import PgPool as PgPool
from ._pg_install import find_postgres_bin as find_postgres_bin
from ._pg_install import install_postgresql as install_postgresql
from ._pool import ConnectionPool as ConnectionPool
from ._queue import claim_queued_test as claim_queued_test
from ._queue import queue_counts as queue_counts
from ._queue import renew_lease as renew_lease
from ._queue import requeue_interrupted as requeue_interrupted
from ._ratelimit import take_rate_token as take_rate_token
from ._records import TestQuery as TestQuery
from ._records import create_batch as create_batch
from ._records import create_test as create_test
from ._records import create_test_report as create_test_report
from ._records import delete_expired as delete_expired
from ._records import fail_unfinished_test as fail_unfinished_test
from ._records import finish_test as finish_test
from ._records import get_batch as get_batch
from ._records import get_test as get_test
from ._records import list_tests as list_tests
from ._records import now_ms as now_ms
from ._records import run_config as run_config
from ._records import start_test as start_test
from ._records import test_target as test_target
from ._secrets import LINK_SECRET_FILE as LINK_SECRET_FILE
from ._secrets import link_secrets as link_secrets
from ._secrets import rotate_link_secret as rotate_link_secret
from ._store import DATABASE_URL_ENV as DATABASE_URL_ENV
from ._store import DEFAULT_RETENTION as DEFAULT_RETENTION
from ._store import Store as Store
from ._store import parse_database_url as parse_database_url

__all__: list[str] = []
