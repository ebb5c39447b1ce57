"""Reading a runner's past tests, filtered, for trends: :func:`pagelab.runners.read_history`
and :func:`pagelab.stats.history`.

A room of its own below both: it needs of a runner only its ``list`` (:class:`PagedTests`),
so the statistics read history without importing the runners, and through them the
engine, the store and the client (docs/decisions.md, "History reading has its own room").
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Protocol

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    DEVICE_ALIASES,
    Device,
    Location,
    TestReport,
    TimeInput,
    epoch_ms_or_none,
    to_epoch_ms,
    unknown_value,
)

__all__ = ["PagedTests", "read_history"]


class PagedTests(Protocol):
    """What history reading needs of a runner (every :class:`pagelab.runners.Runner` is
    one): its tests a page at a time, newest first, within ``created_at`` bounds, of one
    branch or build when asked."""

    # Only what the reader passes: a runner's ``list`` takes more (``created_at_gt``, ...).
    def list(self, page: int = 1, per_page: int = 10, *, created_at_gte: TimeInput = None,
             created_at_lte: TimeInput = None, branch: str | None = None,
             commit: str | None = None) -> builtins.list[TestReport]: ...

#: Tests asked for per ``runner.list`` page (the API's maximum).
_PER_PAGE = 100
#: How far past the oldest test read the next request reaches: the API reports times in
#: whole seconds on some servers (the spec allows either unit).
_SLACK_MS = 999


def _wanted(value: str | Iterable[str] | None, what: str,
            valid: Iterable[str] | None = None) -> set[str] | None:
    """The accepted values of one filter (None: any)."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    out: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise InvalidInputError(f"{what}: expected a string or a list of them, got {item!r}")
        out.add(item)
    if valid is not None:
        choices = list(valid)
        unknown = sorted(out - set(choices))
        if unknown:
            raise InvalidInputError(f"{what}: {unknown_value(unknown[0], choices)}")
    return out


def read_history(
    runner: PagedTests,
    *,
    since: TimeInput = None,
    until: TimeInput = None,
    url: str | Iterable[str] | None = None,
    device: str | Iterable[str] | None = None,
    location: str | Iterable[str] | None = None,
    branch: str | None = None,
    commit: str | None = None,
    limit: int = 1000,
) -> list[TestReport]:
    """The newest ``limit`` past tests that pass the filters, oldest first.

    Pages through ``runner.list`` (100 a page, newest first; ``since`` / ``until`` are
    inclusive ``created_at`` bounds, a datetime or epoch seconds / milliseconds) until
    ``limit`` tests pass the filters (``url`` exact, ``device``, ``location``; each a value or
    a list) or no test is left. Equal timestamps keep their creation order. ``branch`` /
    ``commit`` (one value each) are the runner's own filters (the store's, or the server's):
    only the tests measuring that branch or build.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"limit: expected a positive integer, got {limit!r}")
    urls = _wanted(url, "url")
    devices = _wanted(
        [DEVICE_ALIASES.get(d, d) for d in ([device] if isinstance(device, str) else device)]
        if device is not None else None,
        "device", [d.value for d in Device],
    )
    locations = _wanted(location, "location", [loc.value for loc in Location])
    # Asked for only when given: a runner written before builds were stored still reads.
    by_build = {name: value for name, value in (("branch", branch), ("commit", commit))
                if value is not None}
    found: list[TestReport] = []
    seen: set[str] = set()
    # Keyset paging: each request asks for the tests up to the oldest one seen so far
    # (inclusive, plus the slack of a server that reports whole seconds; what is read twice
    # is skipped by id), so every request is a first page. Numbered pages would make the
    # store step over every test already read, again for each page: quadratic in the
    # history's length (a 50 000-test store took half a minute to read). Only when a whole
    # page shares one time does the bound not move, and the next page number is asked for.
    bound = epoch_ms_or_none(until, "until")
    page = 1
    while len(found) < limit:
        batch = runner.list(page, per_page=_PER_PAGE, created_at_gte=since,
                            created_at_lte=bound, **by_build)
        for report in batch:
            if report.id is not None:
                if report.id in seen:
                    continue
                seen.add(report.id)
            if (
                (urls is None or report.url in urls)
                and (devices is None or report.device.value in devices)
                and (locations is None or report.location.value in locations)
            ):
                found.append(report)
                if len(found) >= limit:
                    break
        if len(batch) < _PER_PAGE:
            break
        last = batch[-1].created_at
        oldest = to_epoch_ms(last) + _SLACK_MS if last is not None else None
        if oldest is not None and (bound is None or oldest < bound):
            bound, page = oldest, 1
        else:
            page += 1
    return found[::-1]
