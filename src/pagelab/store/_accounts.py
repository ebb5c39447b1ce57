"""Storage functions for API accounts: keys (hashed), credit pools, charges and refunds.

Each API key is one account. A key is shown once, when it is created; the store keeps its
first characters (to name it in ``pagelab keys list``) and its SHA-256 hash. Keys are 240
random bits, so a fast hash is enough: there is nothing to brute-force.

Each account has two pools, ``lighthouse`` and ``ttfb``. A pool holds plan credits
(``*_credits``, reset to the plan amount on the first day of every month, UTC) and paid
credits (``*_paid_credits``, added by a top-up, never reset). A charge takes plan credits
first. Every function that charges or refunds must run inside ``transaction(conn,
immediate=True)``: the write lock taken at ``BEGIN IMMEDIATE`` makes read-check-update
atomic, so concurrent creations never drive a pool below zero (the CHECK constraints of
the schema back that up).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pagelab.models import CreditPool, Credits, from_epoch, to_epoch_ms

from ._dialect import Connection, integrity_errors, row_lock
from ._records import new_id, now_ms

__all__ = [
    "KEY_PREFIX_LENGTH",
    "Account",
    "CreditKind",
    "account_credits",
    "account_from_row",
    "batch_owner",
    "can_pay",
    "charge_credits",
    "create_account",
    "find_account",
    "find_account_by_key",
    "hash_key",
    "list_accounts",
    "next_refill",
    "record_test_charges",
    "refund_credits",
    "refund_engine_failures",
    "revoke_account",
    "test_owner",
    "top_up_account",
]

CreditKind = Literal["lighthouse", "ttfb"]

#: ``pl_`` and 8 random characters: enough to tell keys apart, useless to guess the rest.
KEY_PREFIX_LENGTH = 11

# Column names per pool: chosen from this fixed table, never from input.
_COLUMNS: dict[CreditKind, tuple[str, str, str]] = {
    "lighthouse": ("lighthouse_credits", "lighthouse_paid_credits", "lighthouse_plan"),
    "ttfb": ("ttfb_credits", "ttfb_paid_credits", "ttfb_plan"),
}


@dataclass(frozen=True, slots=True)
class Account:
    """An API account (one key). Credit counts as stored; see :func:`account_credits`."""

    id: str
    key_prefix: str
    lighthouse_credits: int
    lighthouse_paid_credits: int
    ttfb_credits: int
    ttfb_paid_credits: int
    lighthouse_plan: int
    ttfb_plan: int
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def hash_key(key: str) -> str:
    """What the store keeps of a key (SHA-256, hex)."""
    return hashlib.sha256(key.encode()).hexdigest()


def _month_start(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_refill(now: int | None = None) -> datetime:
    """When plan credits are next reset: the first day of the next month, 00:00 UTC."""
    start = _month_start(from_epoch(now if now is not None else now_ms()))
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(
        month=start.month + 1
    )


def account_from_row(row: Any, prefix: str = "") -> Account:
    """The account of a row of ``accounts``, its columns named ``prefix`` + column."""
    revoked = row[f"{prefix}revoked_at"]
    return Account(
        id=row[f"{prefix}id"],
        key_prefix=row[f"{prefix}key_prefix"],
        lighthouse_credits=row[f"{prefix}lighthouse_credits"],
        lighthouse_paid_credits=row[f"{prefix}lighthouse_paid_credits"],
        ttfb_credits=row[f"{prefix}ttfb_credits"],
        ttfb_paid_credits=row[f"{prefix}ttfb_paid_credits"],
        lighthouse_plan=row[f"{prefix}lighthouse_plan"],
        ttfb_plan=row[f"{prefix}ttfb_plan"],
        created_at=from_epoch(row[f"{prefix}created_at"]),
        revoked_at=from_epoch(revoked) if revoked is not None else None,
    )


def create_account(
    conn: Connection, *, lighthouse_credits: int, ttfb_credits: int
) -> tuple[Account, str]:
    """A new account and its key (returned only here: the store keeps its hash).

    The credit amounts are the plan: the pools start with them and are reset to them
    every month.
    """
    if lighthouse_credits < 0 or ttfb_credits < 0:
        raise ValueError("credits must not be negative")
    created = now_ms()
    while True:
        key = f"pl_{secrets.token_urlsafe(30)}"
        try:
            conn.execute(
                "INSERT INTO accounts (id, key_prefix, key_hash, lighthouse_credits, "
                "ttfb_credits, lighthouse_plan, ttfb_plan, period_start, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    new_id("acct"), key[:KEY_PREFIX_LENGTH], hash_key(key), lighthouse_credits,
                    ttfb_credits, lighthouse_credits, ttfb_credits,
                    to_epoch_ms(_month_start(from_epoch(created))), created,
                ),
            )
        except integrity_errors():
            continue  # two keys sharing a prefix (one chance in 2**48): draw another
        break
    account = find_account(conn, key[:KEY_PREFIX_LENGTH])
    assert account is not None
    return account, key


def find_account(conn: Connection, key_prefix: str) -> Account | None:
    """The account whose key starts with ``key_prefix`` (revoked ones included)."""
    row = conn.execute(
        "SELECT * FROM accounts WHERE key_prefix = ?", (key_prefix[:KEY_PREFIX_LENGTH],)
    ).fetchone()
    return account_from_row(row) if row is not None else None


def find_account_by_key(conn: Connection, key: str) -> Account | None:
    """The active account of ``key``, or None (unknown or revoked key)."""
    row = conn.execute(
        "SELECT * FROM accounts WHERE key_prefix = ? AND revoked_at IS NULL",
        (key[:KEY_PREFIX_LENGTH],),
    ).fetchone()
    # Compare hashes in constant time, so response timing tells nothing about the key.
    expected = row["key_hash"] if row is not None else "0" * 64
    if not hmac.compare_digest(hash_key(key), expected) or row is None:
        return None
    return account_from_row(row)


def list_accounts(conn: Connection) -> list[Account]:
    rows = conn.execute("SELECT * FROM accounts ORDER BY created_at, rowid")
    return [account_from_row(row) for row in rows]


#: Error code of the queued tests of a revoked key: failed unrun, and refunded.
ACCOUNT_REVOKED = "ACCOUNT_REVOKED"


def revoke_account(conn: Connection, key_prefix: str) -> Account | None:
    """Revoke the key; None when unknown. Its queued (``idle``) tests are failed with
    ``ACCOUNT_REVOKED`` and refunded (a revoked key's tests must not run on), their clear
    configs dropped; finished tests stay stored until they expire. Call inside
    ``transaction(conn, immediate=True)``."""
    now = now_ms()
    conn.execute(
        "UPDATE accounts SET revoked_at = ? WHERE key_prefix = ? AND revoked_at IS NULL",
        (now, key_prefix),
    )
    conn.execute(
        "UPDATE tests SET status = 'failed', error_code = ?, error_message = ?, "
        "engine_failure = 1, finished_at = ?, run_config_json = NULL "
        "WHERE status = 'idle' AND account_id = "
        "(SELECT id FROM accounts WHERE key_prefix = ?)",
        (ACCOUNT_REVOKED, "the API key was revoked before the test ran; refunded", now,
         key_prefix),
    )
    refund_engine_failures(conn)
    return find_account(conn, key_prefix)


def top_up_account(
    conn: Connection, key_prefix: str, *, lighthouse: int = 0, ttfb: int = 0
) -> Account | None:
    """Add paid credits (they are never reset by the monthly refill). None when unknown."""
    if lighthouse < 0 or ttfb < 0:
        raise ValueError("a top-up must not be negative")
    conn.execute(
        "UPDATE accounts SET lighthouse_paid_credits = lighthouse_paid_credits + ?, "
        "ttfb_paid_credits = ttfb_paid_credits + ? WHERE key_prefix = ?",
        (lighthouse, ttfb, key_prefix),
    )
    return find_account(conn, key_prefix)


def _refill_if_due(conn: Connection, account_id: str, now: int) -> None:
    # Lazily: the first read or charge of a new month resets the plan credits.
    current = to_epoch_ms(_month_start(from_epoch(now)))
    conn.execute(
        "UPDATE accounts SET lighthouse_credits = lighthouse_plan, ttfb_credits = ttfb_plan, "
        "period_start = ? WHERE id = ? AND period_start < ?",
        (current, account_id, current),
    )


def account_credits(
    conn: Connection, account_id: str, *, now: int | None = None
) -> Credits:
    """The account's pools as the API returns them (applying a due refill)."""
    at = now if now is not None else now_ms()
    _refill_if_due(conn, account_id, at)
    row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
    return Credits(
        lighthouse=CreditPool(
            available_credits=row["lighthouse_credits"],
            available_paid_credits=row["lighthouse_paid_credits"],
        ),
        ttfb=CreditPool(
            available_credits=row["ttfb_credits"],
            available_paid_credits=row["ttfb_paid_credits"],
        ),
        credits_refill_date=next_refill(at).isoformat().replace("+00:00", "Z"),
    )


def can_pay(
    conn: Connection,
    account_id: str,
    kind: CreditKind,
    amount: int,
    *,
    now: int | None = None,
) -> bool:
    """Whether the pool could pay ``amount`` credits now (a due refill counted). Reads
    only: a cheap refusal before slow checks; :func:`charge_credits` decides."""
    plan_column, paid_column, plan_size = _COLUMNS[kind]
    current = to_epoch_ms(_month_start(from_epoch(now if now is not None else now_ms())))
    row = conn.execute(
        f"SELECT CASE WHEN period_start < ? THEN {plan_size} ELSE {plan_column} END "
        f"+ {paid_column} FROM accounts WHERE id = ?",
        (current, account_id),
    ).fetchone()
    return row is not None and amount >= 0 and int(row[0]) >= amount


def charge_credits(
    conn: Connection,
    account_id: str,
    kind: CreditKind,
    amount: int,
    *,
    now: int | None = None,
) -> list[bool] | None:
    """Take ``amount`` credits from the pool, plan credits first.

    Returns, per credit taken, whether it was a paid one (for :func:`refund_credits`), or
    None when the pool cannot pay for all of them, in which case nothing is taken. Call
    inside ``transaction(conn, immediate=True)``.
    """
    plan_column, paid_column, _ = _COLUMNS[kind]
    _refill_if_due(conn, account_id, now if now is not None else now_ms())
    row = conn.execute(
        f"SELECT {plan_column}, {paid_column} FROM accounts WHERE id = ?{row_lock(conn)}",
        (account_id,),
    ).fetchone()
    plan, paid = row[0], row[1]
    if amount < 0 or plan + paid < amount:
        return None
    from_plan = min(plan, amount)
    conn.execute(
        f"UPDATE accounts SET {plan_column} = {plan_column} - ?, "
        f"{paid_column} = {paid_column} - ? WHERE id = ?",
        (from_plan, amount - from_plan, account_id),
    )
    return [False] * from_plan + [True] * (amount - from_plan)


def record_test_charges(
    conn: Connection, account_id: str, test_ids: Sequence[str], paid: Sequence[bool]
) -> None:
    """Remember how each test was paid, so an engine failure can give the credit back."""
    conn.executemany(
        "INSERT INTO credit_charges (test_id, account_id, paid) VALUES (?, ?, ?)",
        [(test_id, account_id, int(was_paid)) for test_id, was_paid in zip(test_ids, paid,
                                                                           strict=True)],
    )


def refund_credits(
    conn: Connection, account_id: str, kind: CreditKind, paid: Sequence[bool]
) -> None:
    """Give back credits taken by :func:`charge_credits` to the pools they came from."""
    plan_column, paid_column, _ = _COLUMNS[kind]
    paid_count = sum(paid)
    conn.execute(
        f"UPDATE accounts SET {plan_column} = {plan_column} + ?, "
        f"{paid_column} = {paid_column} + ? WHERE id = ?",
        (len(paid) - paid_count, paid_count, account_id),
    )


def refund_engine_failures(conn: Connection) -> list[str]:
    """Refund every Lighthouse test that failed because of the engine and was not refunded
    yet; returns their ids. Idempotent, so it is safe to run after every test and at start.
    Call inside ``transaction(conn, immediate=True)``."""
    rows = conn.execute(
        "SELECT c.test_id, c.account_id, c.paid FROM credit_charges AS c "
        "JOIN tests AS t ON t.id = c.test_id "
        "WHERE t.engine_failure = 1 AND c.refunded_at IS NULL" + row_lock(conn, "c")
    ).fetchall()
    refunded_at = now_ms()
    for row in rows:
        refund_credits(conn, row["account_id"], "lighthouse", [bool(row["paid"])])
        conn.execute(
            "UPDATE credit_charges SET refunded_at = ? WHERE test_id = ?",
            (refunded_at, row["test_id"]),
        )
    return [row["test_id"] for row in rows]


def test_owner(conn: Connection, test_id: str) -> str | None:
    """The account id that created the test; None when unknown or when that account's key
    was revoked (its report links die with it)."""
    row = conn.execute(
        "SELECT t.account_id FROM tests t LEFT JOIN accounts a ON a.id = t.account_id "
        "WHERE t.id = ? AND a.revoked_at IS NULL", (test_id,),
    ).fetchone()
    return row["account_id"] if row is not None else None


def batch_owner(conn: Connection, batch_id: str) -> str | None:
    """The account id that created the batch; None when unknown or revoked."""
    row = conn.execute(
        "SELECT b.account_id FROM batches b LEFT JOIN accounts a ON a.id = b.account_id "
        "WHERE b.id = ? AND a.revoked_at IS NULL", (batch_id,),
    ).fetchone()
    return row["account_id"] if row is not None else None
