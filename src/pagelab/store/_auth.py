"""A request's key, its rate-limit token and (for a poll) the test read, in one round trip
to a PostgreSQL store.

On SQLite each of these is an in-process read of microseconds (and the bucket is in
memory). On PostgreSQL each is a network round trip made from the server's event loop,
which waits for it; one statement instead of three is most of a poll's cost
(docs/api.md#speed). The statement reads the account under the key's prefix and hash,
takes a token from its shared bucket only when the key is valid (a caller who knows only
a prefix cannot spend another account's budget), and reads the test of that account.

Nothing is cached: a key revoked on any server is refused by the next request everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagelab.models import TestReport

from ._accounts import KEY_PREFIX_LENGTH, Account, account_from_row, hash_key
from ._ratelimit import bucket_upsert
from ._records import TEST_COLUMNS, now_ms, test_from_row

if TYPE_CHECKING:
    import psycopg

__all__ = ["KeyCheck", "check_key"]

_ACCOUNT_COLUMNS = (
    "id", "key_prefix", "lighthouse_credits", "lighthouse_paid_credits", "ttfb_credits",
    "ttfb_paid_credits", "lighthouse_plan", "ttfb_plan", "created_at", "revoked_at",
)
_PREFIX = "account_"


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """What one :func:`check_key` learnt."""

    #: The key's active account; None: unknown, wrong or revoked key (nothing was taken).
    account: Account | None
    #: Whether the account's bucket had a token (False without an account).
    allowed: bool
    #: Tokens left in the bucket.
    tokens: float
    #: The test asked for, when it exists, is live and is the account's.
    test: TestReport | None


def _statement(with_test: bool) -> str:
    account = ", ".join(f"account.{c} AS {_PREFIX}{c}" for c in _ACCOUNT_COLUMNS)
    columns = account + ", bucket.allowed AS bucket_allowed, bucket.tokens AS bucket_tokens"
    join = ""
    if with_test:
        columns += ", " + ", ".join(f"t.{c.strip()}" for c in TEST_COLUMNS.split(","))
        join = (" LEFT JOIN tests AS t ON t.id = %(test_id)s AND t.account_id = account.id"
                " AND t.expires_at > %(now)s")
    return (
        "WITH account AS (SELECT * FROM accounts WHERE key_prefix = %(prefix)s"
        " AND key_hash = %(hash)s AND revoked_at IS NULL),"
        " bucket AS ("
        + bucket_upsert("FROM (SELECT %(bucket)s || id AS caller FROM account) AS named")
        + f") SELECT {columns} FROM account CROSS JOIN bucket{join}"
    )


_CHECK = _statement(with_test=False)
_CHECK_AND_READ = _statement(with_test=True)


async def check_key(
    conn: psycopg.AsyncConnection[Any],
    key: str,
    *,
    bucket: str,
    limit_per_minute: int,
    test_id: str | None = None,
    report_url: Any = None,
) -> KeyCheck:
    """The key's account, a token from its bucket (named ``bucket`` + account id, as
    :func:`~._ratelimit.take_rate_token` names it) and, with ``test_id``, that test as
    :func:`~._records.get_test` reads it: one statement, awaited (the event loop serves
    other requests meanwhile), on a connection of :meth:`~._pg.PgPool.loop_connection`.
    PostgreSQL only.

    The hash is compared by the database, not in constant time: it is the SHA-256 of a
    240-bit random key, so how much of it matched tells nothing about the key.
    """
    parameters: dict[str, Any] = {
        "prefix": key[:KEY_PREFIX_LENGTH],
        "hash": hash_key(key),
        "bucket": bucket,
        "limit": float(limit_per_minute),
    }
    if test_id is not None:
        parameters.update(test_id=test_id, now=now_ms())
    cursor = await conn.execute(_CHECK_AND_READ if test_id is not None else _CHECK, parameters)
    row = await cursor.fetchone()
    if row is None:
        return KeyCheck(account=None, allowed=False, tokens=0.0, test=None)
    test = None
    if test_id is not None and row["id"] is not None:
        test = test_from_row(row, report_url(row["id"]) if report_url else None)
    return KeyCheck(
        account=account_from_row(row, _PREFIX),
        allowed=bool(row["bucket_allowed"]),
        tokens=float(row["bucket_tokens"]),
        test=test,
    )
