"""A request's key, its rate-limit tokens and (for a poll) the test read, in one round trip
to a PostgreSQL store.

On SQLite each of these is an in-process read of microseconds (and the bucket is in
memory). On PostgreSQL each is a network round trip made from the server's event loop,
which waits for it; one statement instead of three is most of a poll's cost
(docs/api.md#speed). The statement reads the account under the key's prefix and hash,
takes a token from its shared bucket only when the key is valid (a caller who knows only
a prefix cannot spend another account's budget), and reads the test of that account.
A server still holding tokens it took for the key (``take=0``) skips the bucket: the
statement then only reads.

Nothing about keys is cached: a key revoked on any server is refused by the next request
everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagelab.models import TestReport

from ._accounts import KEY_PREFIX_LENGTH, Account, account_from_row, hash_key
from ._ratelimit import bucket_upsert
from ._records import TEST_COLUMNS, now_ms, test_from_row

if TYPE_CHECKING:
    import psycopg

__all__ = ["KeyCheck", "KeyRead", "check_key", "read_keys"]

_ACCOUNT_COLUMNS = (
    "id", "key_prefix", "lighthouse_credits", "lighthouse_paid_credits", "ttfb_credits",
    "ttfb_paid_credits", "lighthouse_plan", "ttfb_plan", "created_at", "revoked_at",
)
_PREFIX = "account_"
#: The select lists of a key's account (names prefixed) and of a test, as the rows of
#: :func:`~._accounts.account_from_row` and :func:`~._records.test_from_row` want them.
_ACCOUNT_SELECT = ", ".join(f"account.{c} AS {_PREFIX}{c}" for c in _ACCOUNT_COLUMNS)
_TEST_SELECT = ", ".join(f"t.{c.strip()}" for c in TEST_COLUMNS.split(","))


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """What one :func:`check_key` learnt."""

    #: The key's active account; None: unknown, wrong or revoked key (nothing was taken).
    account: Account | None
    #: Tokens taken from the account's bucket (0: none left, no account, or none asked).
    granted: int
    #: Tokens left in the bucket (0 when it was not touched).
    tokens: float
    #: The test asked for, when it exists, is live and is the account's.
    test: TestReport | None


#: An unknown, wrong or revoked key: nothing taken, nothing read.
_NO_KEY = KeyCheck(account=None, granted=0, tokens=0.0, test=None)


def _statement(*, with_test: bool, with_bucket: bool) -> str:
    columns = _ACCOUNT_SELECT
    bucket = join = ""
    if with_bucket:
        columns += ", bucket.granted AS bucket_granted, bucket.tokens AS bucket_tokens"
        bucket = (
            ", bucket AS ("
            + bucket_upsert("FROM (SELECT %(bucket)s || id AS caller FROM account) AS named")
            + ")"
        )
        join = " CROSS JOIN bucket"
    if with_test:
        columns += ", " + _TEST_SELECT
        join += (" LEFT JOIN tests AS t ON t.id = %(test_id)s AND t.account_id = account.id"
                 " AND t.expires_at > %(now)s")
    return (
        "WITH account AS (SELECT * FROM accounts WHERE key_prefix = %(prefix)s"
        " AND key_hash = %(hash)s AND revoked_at IS NULL)"
        f"{bucket} SELECT {columns} FROM account{join}"
    )


@dataclass(frozen=True, slots=True)
class KeyRead:
    """One request's read-only key check, for :func:`read_keys`."""

    key: str
    #: The test to read with it (None: none).
    test_id: str | None = None
    #: The report URL of a test id (None: no URL).
    report_url: Callable[[str], str | None] | None = None


#: By (reads a test, takes tokens).
_STATEMENTS = {
    (with_test, with_bucket): _statement(with_test=with_test, with_bucket=with_bucket)
    for with_test in (False, True) for with_bucket in (False, True)
}


async def check_key(
    conn: psycopg.AsyncConnection[Any],
    key: str,
    *,
    bucket: str,
    limit_per_minute: int,
    take: int = 1,
    test_id: str | None = None,
    report_url: Any = None,
) -> KeyCheck:
    """The key's account, up to ``take`` tokens from its bucket (named ``bucket`` +
    account id, as :func:`~._ratelimit.take_rate_token` names it; ``take=0``: the bucket
    is not touched) and, with ``test_id``, that test as :func:`~._records.get_test` reads
    it: one statement, awaited (the event loop serves other requests meanwhile), on a
    connection of :meth:`~._pg.PgPool.loop_connection`. PostgreSQL only.

    The hash is compared by the database, not in constant time: it is the SHA-256 of a
    240-bit random key, so how much of it matched tells nothing about the key.
    """
    bucket_parameters = {"bucket": bucket, "limit": float(limit_per_minute), "take": float(take)}
    return await _check_one(conn, key, bucket_parameters, take > 0, test_id, report_url)


async def _check_one(
    conn: psycopg.AsyncConnection[Any],
    key: str,
    bucket_parameters: dict[str, Any],
    takes: bool,
    test_id: str | None,
    report_url: Callable[[str], str | None] | None,
) -> KeyCheck:
    """One request's statement: the key, tokens when ``takes``, the test when asked."""
    parameters = {"prefix": key[:KEY_PREFIX_LENGTH], "hash": hash_key(key),
                  **bucket_parameters}
    if test_id is not None:
        parameters.update(test_id=test_id, now=now_ms())
    cursor = await conn.execute(_STATEMENTS[test_id is not None, takes], parameters)
    row = await cursor.fetchone()
    if row is None:
        return _NO_KEY
    return _check_from_row(
        row, test_id, report_url,
        granted=int(row["bucket_granted"]) if takes else 0,
        tokens=float(row["bucket_tokens"]) if takes else 0.0,
    )


def _check_from_row(row: Any, test_id: str | None,
                    report_url: Callable[[str], str | None] | None, *, granted: int = 0,
                    tokens: float = 0.0) -> KeyCheck:
    test = None
    if test_id is not None and row["id"] is not None:
        test = test_from_row(row, report_url(row["id"]) if report_url else None)
    return KeyCheck(account=account_from_row(row, _PREFIX), granted=granted, tokens=tokens,
                    test=test)


#: Several requests' keys (and tests), checked and read in one statement.
_READ_MANY = (
    f"SELECT request.n AS request, {_ACCOUNT_SELECT}, {_TEST_SELECT}"
    " FROM unnest(%(prefixes)s::text[], %(hashes)s::text[], %(test_ids)s::text[])"
    " WITH ORDINALITY AS request(prefix, hash, test_id, n)"
    " JOIN accounts AS account ON account.key_prefix = request.prefix"
    " AND account.key_hash = request.hash AND account.revoked_at IS NULL"
    " LEFT JOIN tests AS t ON t.id = request.test_id AND t.account_id = account.id"
    " AND t.expires_at > %(now)s"
)


async def read_keys(
    conn: psycopg.AsyncConnection[Any], reads: Sequence[KeyRead]
) -> list[KeyCheck]:
    """:func:`check_key` with ``take=0`` for each of ``reads``, in one statement: the
    requests that arrive together share a round trip. In the order of ``reads``."""
    if len(reads) == 1:  # no arrays to build and unnest (a lone request, the usual case)
        (read,) = reads
        return [await _check_one(conn, read.key, {}, False, read.test_id, read.report_url)]
    parameters = {
        "prefixes": [read.key[:KEY_PREFIX_LENGTH] for read in reads],
        "hashes": [hash_key(read.key) for read in reads],
        "test_ids": [read.test_id for read in reads],
        "now": now_ms(),
    }
    cursor = await conn.execute(_READ_MANY, parameters)
    checks = [_NO_KEY] * len(reads)
    for row in await cursor.fetchall():
        read = reads[row["request"] - 1]
        checks[row["request"] - 1] = _check_from_row(row, read.test_id, read.report_url)
    return checks
