"""The stored runs of a runner as :class:`~pagelab.Results`, in build order:
:func:`pagelab.history` (issue 37; docs/history.md).

Reading is :func:`pagelab.runners.read_history`'s (filters, paging, limit); the build order
is :func:`pagelab._change_points.build_sequence`'s, the order change points read builds in.
"""

from __future__ import annotations

from collections.abc import Iterable

from pagelab._change_points import build_sequence
from pagelab._exceptions import InvalidInputError
from pagelab._measure import Results
from pagelab._public import publish
from pagelab.models import TimeInput
from pagelab.runners import Runner, connect, read_history

__all__ = ["history"]


def history(
    url: str | Iterable[str] | None = None,
    *,
    device: str | Iterable[str] | None = None,
    location: str | Iterable[str] | None = None,
    branch: str | None = None,
    since: TimeInput = None,
    until: TimeInput = None,
    runner: Runner | None = None,
    limit: int = 1000,
) -> Results:
    """The stored runs of ``runner`` (default: the runner :func:`pagelab.measure` would use,
    :func:`pagelab.connect`: the local store, the team store or the API server) as
    :class:`~pagelab.Results`, ordered by build: builds by their first run's
    ``created_at``, each build's runs in ``created_at`` order, a run without a build at its
    own time.

    Filters: ``url`` (exact), ``device``, ``location`` (each a value or a list), ``branch``
    (the store or the server keeps only that branch's runs), ``since`` / ``until``
    (inclusive ``created_at`` bounds, a datetime or epoch seconds / milliseconds). The
    newest ``limit`` runs that pass are read (:func:`pagelab.runners.read_history`). The
    frame's ``commit`` and ``branch`` columns name each run's build, what
    :func:`pagelab.stats.change_points` reads. Bad arguments raise
    :class:`~pagelab.InvalidInputError` before anything is read.
    """
    if runner is not None and not isinstance(runner, Runner):
        raise InvalidInputError(f"runner: expected a pagelab Runner, got {type(runner).__name__}")
    owned = runner is None
    active = connect() if runner is None else runner
    try:
        reports = read_history(active, since=since, until=until, url=url, device=device,
                               location=location, branch=branch, limit=limit)
    finally:
        if owned:
            active.close()  # as measure does: Results.runner names it still
    results = Results(reports, runner=active)
    order = build_sequence(results.frame)
    return Results([reports[i] for i in order], runner=active)


publish("pagelab", globals(), __all__)
