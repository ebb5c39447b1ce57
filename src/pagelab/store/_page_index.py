"""The deep-page index of the test list: where page N of an account's tests starts.

The list is newest first (``created_at DESC, rowid DESC``). A deep page is found without
stepping over every entry before it: triggers keep per-day and per-minute counts of each
account's tests (``test_counts_day``, ``test_counts_minute``, in :mod:`._db`), :func:`seek`
sums them down to the minute that holds the page's first entry, and :func:`live_window`
reads that window off the ``(account_id, created_at)`` index, leaving out expired rows the
sweep has not deleted yet. Used by :func:`pagelab.store.list_tests`.
"""

from __future__ import annotations

import bisect
from typing import Any

from ._dialect import Connection

__all__ = ["created_range", "live_window", "seek"]


def live_window(
    conn: Connection,
    where: str,
    params: list[Any],
    offset: int,
    per_page: int,
    expired: list[Any],
    start: tuple[int, int] | None,
) -> list[int]:
    """The rowids of the unexpired rows ranked ``offset`` to ``offset + per_page - 1``.

    The live row ranked ``r`` sits at position ``r + e`` of the whole index order, ``e``
    being the expired rows before it (at most ``len(expired)``): a window that long
    holds the page, and a row's live rank is its position minus the expired rows whose
    key is newer. ``start`` is where position ``offset`` is (:func:`seek`): the entry
    ``skip`` of the rows created at or before ``upper``; None: past the end.
    """
    if start is None:
        return []
    upper, skip = start
    expired_keys = sorted((row[0], row[1]) for row in expired)
    expired_ids = {row[1] for row in expired}
    window = conn.execute(
        f"SELECT created_at, rowid FROM tests WHERE {where} AND created_at <= ? "
        "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
        [*params, upper, per_page + len(expired), skip],
    )
    page: list[int] = []
    for position, (created, rowid) in enumerate(window, start=offset):
        if rowid in expired_ids:
            continue
        newer_expired = len(expired_keys) - bisect.bisect_right(expired_keys, (created, rowid))
        if offset <= position - newer_expired < offset + per_page:
            page.append(rowid)
    return page


_MINUTE_MS = 60_000
_DAY_MS = 86_400_000
#: Beyond any created_at (epoch ms fit in far less).
_NO_BOUND = 2**62
#: Offsets below this are stepped over on the index (about 50 ns an entry): cheaper than
#: reading the counts.
_SEEK_FROM = 2_000


def created_range(
    gt: int | None, gte: int | None, lt: int | None, lte: int | None
) -> tuple[int, int]:
    """A list query's created_at filters (epoch ms) as one inclusive range."""
    low, high = -_NO_BOUND, _NO_BOUND
    if gt is not None:
        low = max(low, gt + 1)
    if gte is not None:
        low = max(low, gte)
    if lt is not None:
        high = min(high, lt - 1)
    if lte is not None:
        high = min(high, lte)
    return low, high


def seek(
    conn: Connection, account_id: str, bounds: tuple[int, int], offset: int
) -> tuple[int, int] | None:
    """Where the entry at ``offset`` of the account's index order (created_at DESC,
    rowid DESC; expired rows included) within ``bounds`` is: ``(upper, skip)``, it is the
    entry ``skip`` of the rows within ``bounds`` created at or before ``upper``; None
    when there is no such entry.

    ``skip`` is at most one minute's tests: the per-day and per-minute counts the
    triggers keep (``test_counts_day``, ``test_counts_minute``) are summed from the
    newest down to the day, then the minute, that holds the entry. A minute cut by a
    bound is counted on the index; one cut by the lower bound is left to the final
    query. Small offsets skip the counts altogether.
    """
    low, high = bounds
    if low > high:
        return None
    if offset < _SEEK_FROM:
        return high, offset
    rest = offset
    upper = high
    if upper < _NO_BOUND:
        # The newest minute, when the upper bound cuts it: counted on the index.
        minute = upper // _MINUTE_MS
        if upper != (minute + 1) * _MINUTE_MS - 1:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM tests WHERE account_id = ? "
                "AND created_at BETWEEN ? AND ?",
                (account_id, max(low, minute * _MINUTE_MS), upper),
            ).fetchone()
            if rest < count:
                return upper, rest
            rest -= count
            upper = minute * _MINUTE_MS - 1
        # The minutes of the newest day, when the upper bound cuts it.
        day = upper // _DAY_MS
        if upper >= low and upper != (day + 1) * _DAY_MS - 1:
            found, rest = _seek_minutes(conn, account_id, low, upper, rest)
            if found is not None:
                return found, rest
            upper = day * _DAY_MS - 1
        if upper < low:
            return None
    for day, count in conn.execute(
        "SELECT day, n FROM test_counts_day WHERE account_id = ? AND day BETWEEN ? AND ? "
        "ORDER BY day DESC",
        (account_id, low // _DAY_MS, upper // _DAY_MS),
    ):
        if day * _DAY_MS < low or rest < count:
            # The day that holds the entry, or the last one the bounds reach into.
            found, rest = _seek_minutes(
                conn, account_id, low, min(upper, (day + 1) * _DAY_MS - 1), rest
            )
            return (found, rest) if found is not None else None
        rest -= count
    return None


def _seek_minutes(
    conn: Connection, account_id: str, low: int, upper: int, rest: int
) -> tuple[int | None, int]:
    """:func:`seek` within one day, from ``upper`` (a minute's last ms) down to ``low``:
    ``(upper, skip)`` of the entry ``rest``, or ``(None, rest left)`` past the range."""
    for minute, count in conn.execute(
        "SELECT minute, n FROM test_counts_minute WHERE account_id = ? "
        "AND minute BETWEEN ? AND ? ORDER BY minute DESC",
        (account_id, max(low, (upper // _DAY_MS) * _DAY_MS) // _MINUTE_MS,
         upper // _MINUTE_MS),
    ):
        if minute * _MINUTE_MS < low or rest < count:
            return (minute + 1) * _MINUTE_MS - 1, rest
        rest -= count
    return None, rest
