"""``pagelab scan``: discover a site's pages, measure a sample of each template, and print
the templates worst first.

Progress (discovery, then the runs) goes to stderr, the table to stdout. The runs happen on
the service when ``PAGELAB_API_URL`` is set; discovery always runs here (docs/scan.md).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from pagelab._exceptions import InvalidInputError

from ._batch import format_table, summary_table
from ._options import (
    add_config,
    add_matrix,
    add_out,
    add_progress,
    check_outputs,
    exit_status,
    ids,
    runs_failed,
)
from ._run import parse_config

__all__ = ["register"]


def register(subparsers: Any) -> None:
    scan = subparsers.add_parser(
        "scan",
        help="find a site's pages, measure a few of each template, print templates worst first",
        description="Discover the pages under URL (its sitemaps, else its links), group them "
        "by template (/product/*), measure --per-template pages of each --runs times on "
        "every device and location, and print one row per template, worst first. Costs "
        "templates x per-template x runs x devices x locations runs. Uses the API service "
        "when PAGELAB_API_URL is set, else the local engine. Exit status 1 when any run "
        "failed, 2 when the site's pages cannot be found.",
    )
    scan.add_argument("url", help="the start URL: its origin and path are the scan's scope")
    scan.add_argument("--max-pages", type=int, default=500, metavar="N",
                      help="pages discovered at most (default 500)")
    scan.add_argument("--per-template", type=int, default=3, metavar="K",
                      help="pages measured per template (default 3)")
    scan.add_argument("--runs", type=int, default=1, metavar="N",
                      help="runs per page (default 1)")
    scan.add_argument("--include", action="append", metavar="GLOB",
                      help="keep only paths matching GLOB (* within a segment, ** across; "
                      "repeatable)")
    scan.add_argument("--exclude", action="append", metavar="GLOB",
                      help="leave out paths matching GLOB (repeatable)")
    scan.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    add_matrix(scan)
    add_config(scan)
    add_out(scan, "the runs (with their template)")
    add_progress(scan)
    scan.set_defaults(handler=_scan)


def _scan(args: argparse.Namespace) -> int:
    import pagelab

    if args.runs < 1:
        raise InvalidInputError(f"--runs: must be at least 1, got {args.runs}")
    for option, value in (("--max-pages", args.max_pages), ("--per-template", args.per_template)):
        if value < 1:
            raise InvalidInputError(f"{option}: must be at least 1, got {value}")
    check_outputs(args.out)
    results = pagelab.scan(
        args.url,
        max_pages=args.max_pages,
        per_template=args.per_template,
        runs=args.runs,
        devices=ids(args.devices, "--devices"),
        locations=ids(args.locations, "--locations"),
        include=args.include,
        exclude=args.exclude,
        seed=args.seed,
        config=parse_config(args.config),
        progress=args.progress,
    )
    found = results.discovery
    if found is not None:
        print(f"pagelab: {len(found.pages)} pages from the {found.source}, "
              f"{len(results.sample)} templates, {len(results)} runs", file=sys.stderr)
    if len(results) == 0:
        print("pagelab: interrupted before any run finished", file=sys.stderr)
        return 130
    frame = results.frame
    by = ["template", *(c for c in ("device", "location") if frame[c].nunique() > 1)]
    table = summary_table(results, by=by)
    pages = Counter(results.templates.values())
    table.insert(1, "pages", [pages[str(name)] for name in table["template"]])
    print(format_table(table))
    for path in args.out:
        results.export(path)
        print(f"pagelab: wrote {path}", file=sys.stderr)
    if results.interrupted:
        print(f"pagelab: interrupted; the table holds the {len(results)} runs that finished",
              file=sys.stderr)
    return exit_status(failed=runs_failed(frame), interrupted=results.interrupted)
