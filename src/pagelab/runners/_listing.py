"""``list``, the same on every runner: each runner only says how it reads one checked page."""

from __future__ import annotations

import builtins
from typing import Protocol

from pagelab.models import TestReport, TimeInput, build_filters, check_paging, epoch_ms_or_none
from pagelab.store import TestQuery

__all__ = ["TestLister"]


class TestLister(Protocol):
    """:meth:`list` over one primitive, :meth:`_list_page`; part of the
    :class:`~pagelab.Runner` interface and inherited by both runners, so the arguments are
    written and checked once."""

    def _list_page(self, query: TestQuery) -> builtins.list[TestReport]:
        """One page of tests as the checked ``query`` asks, newest first."""
        ...

    def list(
        self,
        page: int = 1,
        per_page: int = 10,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
        *,
        branch: str | None = None,
        commit: str | None = None,
    ) -> builtins.list[TestReport]:
        """A page of tests, newest first (``per_page`` 1-100); ``branch`` / ``commit``:
        only that branch's or build's tests."""
        check_paging(page, per_page)
        branch, commit = build_filters(branch, commit)
        return self._list_page(TestQuery(
            page=page,
            per_page=per_page,
            created_at_gt=epoch_ms_or_none(created_at_gt, "created_at_gt"),
            created_at_gte=epoch_ms_or_none(created_at_gte, "created_at_gte"),
            created_at_lt=epoch_ms_or_none(created_at_lt, "created_at_lt"),
            created_at_lte=epoch_ms_or_none(created_at_lte, "created_at_lte"),
            branch=branch,
            commit=commit,
        ))
