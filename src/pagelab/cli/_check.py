"""``pagelab check BUDGETS``: measure a budget file's pages and check them (exit 1 on a miss)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from ._options import add_aggregation, add_progress, add_renamed

__all__ = ["register"]


def register(subparsers: Any) -> None:
    check = subparsers.add_parser(
        "check",
        help="measure the pages of a budget file and check their budgets (exit 1 on a miss)",
        description="Budget files: pagelab YAML/JSON, Lighthouse CI assertions (lighthouserc."
        "json) or Lighthouse budget.json. Exit status 0: every error-level budget met; 1: one "
        "missed or a page failed to load; 2: bad input.",
    )
    check.add_argument("budgets", metavar="BUDGETS", help="budget file (.yaml, .yml, .json)")
    check.add_argument("--runs", type=_runs, metavar="N",
                       help="runs per page, device and location (default: the file's, else 3)"
                       "; auto (or auto:MIN-MAX, default 5-15): add runs one at a time until "
                       "the interval of each budgeted metric's median is wholly on one side "
                       "of its budget")
    add_aggregation(check, None)
    check.add_argument("--base-url", metavar="URL",
                       help="base URL for relative page URLs (overrides the file's base_url)")
    check.add_argument("--replay", metavar="PATH",
                       help="check runs saved earlier (results JSON or wide-frame CSV) "
                       "instead of measuring")
    add_renamed(check, "--runs-file", "--replay", "replay")
    add_progress(check)
    check.set_defaults(handler=_check)


def _runs(text: str) -> int | str:
    if text.strip().lower().startswith("auto"):
        return text.strip().lower()
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number or auto, got {text!r}") from None


def _measure_auto(runner: Any, budget_file: Any, base_url: str | None, url: str,
                  devices: list[str], locations: list[str], config: Any, runs: str,
                  progress: Any) -> Any:
    """One page's runs with ``--runs auto``: until each budget is clearly met or missed."""
    import pandas as pd

    import pagelab
    from pagelab.budgets import AutoRuns, parse_auto_runs, resolve_checks

    rule = parse_auto_runs(runs)
    assert rule is not None
    checks = [c for c in resolve_checks(budget_file, base_url=base_url)
              if any(c.matches(url, d, loc) for d in devices for loc in locations)]

    def measure(cells: Any, count: int) -> pd.DataFrame:
        frames = [pagelab.measure([u], devices=[d], locations=[loc], runs=count, config=config,
                                  runner=runner, progress=progress).frame
                  for u, d, loc in cells]
        return pd.concat(frames, ignore_index=True)

    auto = AutoRuns(rule, checks=checks)
    frame = auto.run(measure, [(url, d, loc) for d in devices for loc in locations])
    for note in auto.notes():
        print(note)
    return frame


def _most(runs: int | str) -> int:
    if isinstance(runs, int):
        return runs
    from pagelab.budgets import parse_auto_runs

    rule = parse_auto_runs(runs)
    return rule.max_runs if rule is not None else 0


def _pages(budget_file: Any, base_url: str | None) -> list[tuple[str, list[str], list[str],
                                                              dict[str, Any] | None, int | None]]:
    from pagelab._exceptions import InvalidInputError

    pages = []
    for page in budget_file.pages:
        if "*" in page.url:
            continue
        url = budget_file.page_url(page, base_url)
        if "://" not in url:
            raise InvalidInputError(
                f"page {page.url!r} is relative: set base_url in the file or --base-url"
            )
        pages.append((
            url,
            [d.value for d in page.devices or budget_file.devices],
            [loc.value for loc in page.locations or budget_file.locations],
            page.config if page.config is not None else budget_file.config,
            page.runs,
        ))
    return pages


def _check(args: argparse.Namespace) -> int:
    import pandas as pd

    import pagelab
    from pagelab._exceptions import InvalidInputError
    from pagelab._progress import ProgressBar
    from pagelab.budgets import (
        evaluate,
        format_tally,
        format_value,
        load_budgets,
        load_runs,
        run_failures,
    )

    budget_file = load_budgets(args.budgets)
    if isinstance(args.runs, int) and not 1 <= args.runs <= 100:
        raise InvalidInputError(f"--runs: must be from 1 to 100, got {args.runs}")
    if isinstance(args.runs, str):
        from pagelab.budgets import parse_auto_runs

        if parse_auto_runs(args.runs) is None:
            raise InvalidInputError(f"--runs: expected a whole number or auto, got {args.runs!r}")
    aggregation = args.aggregation or budget_file.aggregation or "median"
    base_url = args.base_url or budget_file.base_url
    if args.replay:
        frame = load_runs(args.replay)
    else:
        pages = _pages(budget_file, base_url)
        if not pages:
            raise InvalidInputError(
                f"{args.budgets}: no page to measure (paths with '*' only match measured pages)"
            )
        planned = [(url, devices, locations, config,
                    args.runs or page_runs or budget_file.runs or 3)
                   for url, devices, locations, config, page_runs in pages]
        frames = []
        with contextlib.ExitStack() as stack:
            runner = stack.enter_context(pagelab.connect())
            # One bar on stderr for the whole file (it also says when it waits for the engine).
            # With --runs auto the total is the maximum: the bar may end early.
            bar = stack.enter_context(ProgressBar(
                sum(len(d) * len(loc) * _most(runs) for _, d, loc, _, runs in planned)
            )) if args.progress else None
            progress = bar.add if bar is not None else False
            for url, devices, locations, config, runs in planned:
                if isinstance(runs, str):
                    frames.append(_measure_auto(runner, budget_file, base_url, url, devices,
                                                locations, config, runs, progress))
                    continue
                measured = pagelab.measure([url], devices=devices, locations=locations,
                                           runs=runs, config=config, runner=runner,
                                           progress=progress)
                frames.append(measured.frame)
        frame = pd.concat(frames, ignore_index=True)
    results = evaluate(budget_file, frame, aggregation=aggregation, base_url=base_url)
    rows = [("check", "metric", "budget", "actual", "status")]
    for r in results:
        rows.append((f"{r.device}/{r.location} {r.url}", r.metric,
                     f"{r.operator} {format_value(r.metric, r.expected)}",
                     format_value(r.metric, r.actual), r.status.upper() if r.status == "fail"
                     else r.status))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    failed_pages = run_failures(frame)
    for (url, device, location), codes in failed_pages.items():
        print(f"page failed to load: {device}/{location} {url}: {', '.join(sorted(set(codes)))}")
    misses = [r for r in results if not r.passed and r.level == "error"]
    for r in results:
        if not r.passed:
            print(f"{'error' if r.level == 'error' else 'warning'}: {r.message}")
    print(format_tally([r.status for r in results]))
    return 1 if misses or failed_pages else 0
