"""``pagelab gate-check URL``: an A/A check of the regression gates on a real page."""

from __future__ import annotations

import argparse
from typing import Any

from ._options import add_progress, exit_status, runs_failed

__all__ = ["register"]


def register(subparsers: Any) -> None:
    check = subparsers.add_parser(
        "gate-check",
        help="measure one page as both sides of a comparison, REPEAT times, and report how "
        "often each regression gate would fail (false alarms)",
        description="An A/A check: per repeat, 2 x RUNS runs of URL, interleaved and split "
        "alternately into a baseline side and a new side of the same page. Reports, per "
        "limit, how many repeats today's fixed threshold (new median beyond baseline median "
        "+ limit) and the regression gate (significant and beyond the limit) would fail. "
        "Exit status 1 when a run failed (its repeat still counts the runs that succeeded).",
    )
    check.add_argument("url", metavar="URL", help="the page (http or https)")
    check.add_argument("--runs", type=int, default=5, metavar="N",
                       help="runs per side and repeat (default 5)")
    check.add_argument("--repeat", type=int, default=10, metavar="K",
                       help="A/A comparisons (default 10)")
    check.add_argument("--devices", default="mobile", metavar="ID",
                       help="one device id (default mobile)")
    check.add_argument("--locations", default="us", metavar="ID",
                       help="one location id (default us)")
    check.add_argument("--limits", default="largest_contentful_paint:10%,performance_score:5",
                       metavar="LIMITS", help="regression limits as for --pagelab-compare-fail "
                       "(default largest_contentful_paint:10%%,performance_score:5)")
    check.add_argument("--alpha", type=float, default=0.05,
                       help="the gate's false-alarm rate (default 0.05)")
    add_progress(check)
    check.set_defaults(handler=_gate_check)


def _gate_check(args: argparse.Namespace) -> int:
    import contextlib

    import pagelab
    from pagelab._exceptions import InvalidInputError
    from pagelab._progress import ProgressBar
    from pagelab.budgets import GateRule, aa_check, parse_regression_limits
    from pagelab.frames import cell_label

    if not 2 <= args.runs <= 50:
        raise InvalidInputError(f"--runs: must be from 2 to 50, got {args.runs}")
    if not 1 <= args.repeat <= 1000:
        raise InvalidInputError(f"--repeat: must be from 1 to 1000, got {args.repeat}")
    for name in ("devices", "locations"):
        if "," in getattr(args, name):
            raise InvalidInputError(f"--{name}: one id (an A/A check is of one cell)")
    limits = parse_regression_limits(args.limits)
    rule = GateRule(alpha=args.alpha)
    repeats = []
    with contextlib.ExitStack() as stack:
        runner = stack.enter_context(pagelab.connect())
        bar = stack.enter_context(ProgressBar(2 * args.runs * args.repeat)) \
            if args.progress else None
        for _ in range(args.repeat):
            results = pagelab.measure(args.url, devices=args.devices, locations=args.locations,
                                      runs=2 * args.runs, runner=runner,
                                      progress=bar.add if bar is not None else False)
            repeats.append(results.frame)
    where = cell_label({"url": args.url, "device": args.devices, "location": args.locations})
    print(f"gate-check: {where}: {args.repeat} A/A "
          f"comparisons of {args.runs} vs {args.runs} runs of the same page, alpha "
          f"{rule.alpha:g}")
    rows = [("limit", "fixed threshold failed", "gate failed", "gate inconclusive")]
    for count in aa_check(repeats, limits, rule):
        def share(n: int, total: int = count.repeats) -> str:
            return f"{n} of {total} ({n / total:.0%})"
        rows.append((count.limit, share(count.fixed_threshold), share(count.gate),
                     share(count.inconclusive)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print("Every failure here is a false alarm: both sides are the same page.")
    return exit_status(failed=any(runs_failed(frame) for frame in repeats))
