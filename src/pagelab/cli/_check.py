"""``pagelab check BUDGETS``: measure a budget file's pages and check them (exit 1 on a miss)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
    check.add_argument("--runs", type=int, metavar="N",
                       help="runs per page, device and location (default: the file's, else 3)")
    check.add_argument("--aggregation", metavar="NAME",
                       help="median (default), mean, p75, p90, min, max, representative")
    check.add_argument("--base-url", metavar="URL",
                       help="base URL for relative page URLs (overrides the file's base_url)")
    check.add_argument("--runs-file", metavar="PATH",
                       help="check runs saved earlier (results JSON or wide-frame CSV) "
                       "instead of measuring")
    check.set_defaults(handler=_check)


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
    from pagelab.budgets import evaluate, format_value, load_budgets, load_runs, run_failures

    budget_file = load_budgets(args.budgets)
    if args.runs is not None and not 1 <= args.runs <= 100:
        raise InvalidInputError(f"--runs: must be from 1 to 100, got {args.runs}")
    aggregation = args.aggregation or budget_file.aggregation or "median"
    base_url = args.base_url or budget_file.base_url
    if args.runs_file:
        frame = load_runs(args.runs_file)
    else:
        pages = _pages(budget_file, base_url)
        if not pages:
            raise InvalidInputError(
                f"{args.budgets}: no page to measure (paths with '*' only match measured pages)"
            )
        frames = []
        with pagelab.connect() as runner:
            for url, devices, locations, config, page_runs in pages:
                runs = args.runs or page_runs or budget_file.runs or 3
                measured = pagelab.measure([url], devices=devices, locations=locations,
                                           runs=runs, config=config, runner=runner,
                                           progress=sys.stderr.isatty())
                frames.append(measured.frame)
        frame = pd.concat(frames, ignore_index=True)
    results = evaluate(budget_file, frame, aggregation=aggregation, base_url=base_url)
    rows = [("check", "metric", "budget", "actual", "status")]
    for r in results:
        rows.append((f"{r.device}/{r.location} {r.url}", r.metric,
                     f"{r.operator} {format_value(r.metric, r.expected)}",
                     format_value(r.metric, r.actual), r.label))
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
    print(f"{len(results)} checks: {sum(r.passed for r in results)} passed, {len(misses)} "
          f"failed, {sum(not r.passed and r.level == 'warn' for r in results)} warned")
    return 1 if misses or failed_pages else 0
