"""``pagelab changes``: where a metric's level changed in the stored history of builds, and
whether the newest level is a regression (issue 37, point 4; docs/history.md)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["register"]


def register(subparsers: Any) -> None:
    changes = subparsers.add_parser(
        "changes", help="list the builds where a metric's level changed in the stored history",
        description="Reads the stored runs (the runner pagelab.measure uses: the local store, "
        "or the API server of PAGELAB_API_URL) in build order, finds the change points of "
        "each metric per cell (pagelab.stats.change_points) and prints one row per change. "
        "With --fail-on-regression the exit status is 1 while a regression of a metric searched "
        "is open (no level since came back to the level before it) and names the first, 0 "
        "once a later build restored that level; a smaller improvement leaves it open.")
    changes.add_argument("--url", help="only the runs of this page (exact URL)")
    changes.add_argument("--branch", help="only the runs of builds of this branch")
    changes.add_argument("--metric", action="append", metavar="METRIC",
                         help="a metric to search (name or label, e.g. LCP); repeat for more; "
                         "default: every metric")
    changes.add_argument("--since", metavar="DATE",
                         help="only runs created on or after DATE (ISO 8601, e.g. 2026-11-01)")
    changes.add_argument("--alpha", type=float, default=0.05,
                         help="significance level of a change (default 0.05)")
    changes.add_argument("--min-runs", type=int, default=4,
                         help="fewest runs a level holds (default 4)")
    changes.add_argument("--min-change", type=float, default=0.02, metavar="FRACTION",
                         help="smallest change reported, a fraction of the level before it "
                         "(default 0.02: 2 %%; 0: every significant one)")
    changes.add_argument("--min-diff", type=float, default=None, metavar="AMOUNT",
                         help="smallest change reported, in the metric's unit (default: the "
                         "metric's own: 10 ms for times, 0.01 for CLS, 1 score point; 0: "
                         "every significant one)")
    changes.add_argument("--limit", type=int, default=1000,
                         help="read at most the newest LIMIT runs (default 1000)")
    changes.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 while a regression is open: no level since came back "
                         "to the level before it")
    changes.set_defaults(handler=_changes)


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"--since: {text[:40]!r} is not an ISO 8601 date or time "
                                "(e.g. 2026-11-01 or 2026-11-01T09:30:00Z)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _table(changes: pd.DataFrame) -> str:
    from pagelab.frames import cell_label
    from pagelab.models import metric

    headers = ("cell", "metric", "commit", "previous", "before", "after", "change", "p",
               "direction")
    rows = [headers]
    for row in changes.to_dict("records"):
        m = metric(str(row["metric"]))
        rows.append((
            cell_label(row), m.name, str(row["commit"])[:12], str(row["previous_commit"])[:12],
            m.format(row["before"]), m.format(row["after"]), f"{row['rel_change']:+.1f} %",
            f"{row['p_value']:.2g}", str(row["direction"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(headers))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True))
                     .rstrip() for r in rows)


def _changes(args: argparse.Namespace) -> int:
    import pagelab
    from pagelab._change_points import open_regressions

    since = _since(args.since)
    history = pagelab.history(args.url, branch=args.branch, since=since, limit=args.limit)
    frame = history.frame
    builds = frame["commit"].dropna().nunique()
    print(f"{len(frame)} runs of {builds} builds"
          + (f" on {args.branch}" if args.branch else "")
          + (f" of {args.url}" if args.url else ""))
    # change_points itself, not Results.changes: --min-runs and the floors are passed on.
    changes = pagelab.stats.change_points(frame, metric=args.metric, alpha=args.alpha,
                                          min_runs=args.min_runs, min_change=args.min_change,
                                          min_diff=args.min_diff)
    if changes.empty:
        print("no change found")
    else:
        print(_table(changes))
    if not args.fail_on_regression:
        return 0
    regressions = open_regressions(changes, args.min_change, args.min_diff)
    for row in regressions.to_dict("records"):
        print(f"open regression: {row['metric']} since {row['commit']}")
    return 1 if len(regressions) else 0
