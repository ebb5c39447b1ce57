"""``pagelab batch``: repeated runs over a matrix, the summary per cell on stdout.

Progress goes to stderr, the table to stdout, so ``pagelab batch ... > summary.txt`` keeps
only the table. The runs happen on the service when ``PAGELAB_API_URL`` is set.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from pagelab.models import HEADLINE_METRICS, METRICS

from ._options import (
    add_aggregation,
    add_config,
    add_matrix,
    add_out,
    add_progress,
    check_measuring,
    exit_status,
    ids,
    runs_failed,
)
from ._run import parse_config

if TYPE_CHECKING:
    import pandas as pd

    from pagelab import Results

__all__ = ["register", "summary_table"]

#: The metrics the table shows (all nine are in --out files): the registry's headline ones.
_SHOWN = HEADLINE_METRICS



def register(subparsers: Any) -> None:
    batch = subparsers.add_parser(
        "batch",
        help="run URLs x devices x locations x connections several times; print the summary",
        description="Run every cell (URL x device x location x connection) --runs times, "
        "interleaved, and print one row per cell: runs, failed runs and the aggregated "
        "metrics. Uses the API service when PAGELAB_API_URL is set, else the local engine. "
        "Exit status 1 when any run failed (the table still shows every cell).",
    )
    batch.add_argument("urls", nargs="+", metavar="URL", help="absolute http(s) URLs")
    add_matrix(batch)
    batch.add_argument("--runs", type=int, default=5, metavar="N",
                       help="runs per cell (default 5)")
    add_aggregation(batch, "median")
    add_config(batch)
    add_out(batch, "the runs")
    add_progress(batch)
    batch.set_defaults(handler=_batch)


def _notes(results: Results, keys: list[str]) -> dict[tuple[str, ...], str]:
    """Per cell with failed runs: how many, and their error codes (most frequent first)."""
    frame = results.frame
    failed = frame[frame["status"] == "failed"]
    notes: dict[tuple[str, ...], str] = {}
    runs = Counter(_key(row, keys) for row in frame[keys].itertuples(index=False))
    codes: dict[tuple[str, ...], Counter[str]] = {}
    for row in failed[[*keys, "error_code"]].itertuples(index=False):
        codes.setdefault(_key(row[:-1], keys), Counter())[str(row[-1])] += 1
    for key, counter in codes.items():
        n_failed = sum(counter.values())
        listed = ", ".join(code for code, _ in counter.most_common())
        notes[key] = (f"failed: {listed}" if n_failed == runs[key]
                      else f"{n_failed} failed: {listed}")
    return notes


def _key(values: Any, keys: list[str]) -> tuple[str, ...]:
    import pandas as pd

    return tuple("" if pd.isna(v) else str(v) for v in values)


def summary_table(results: Results, aggregation: str = "median") -> pd.DataFrame:
    """The printed table: the cell columns, ``runs``, ``failed``, the shown metrics under
    their registry headers (``LCP (ms)``), and ``note`` naming failed runs' error codes.

    A cell whose runs all failed stays in the table with its codes in ``note``."""
    from pagelab.frames import CELL

    summary = results.summary(aggregation=aggregation, metrics=list(_SHOWN))
    keys = [c for c in CELL if c in summary.columns]
    notes = _notes(results, keys)
    table = summary[[*keys, "runs", "failed", *_SHOWN]].copy()
    for key in keys:
        table[key] = table[key].astype("string").fillna("default" if key == "connection"
                                                         else "")
    table["note"] = [
        notes.get(_key(row, keys), "") for row in summary[keys].itertuples(index=False)
    ]
    return table.rename(columns={name: METRICS[name].header for name in _SHOWN})


def _format(table: pd.DataFrame) -> str:
    import pandas as pd

    def formatter(name: str) -> Any:
        return lambda value: METRICS[name].format(None if pd.isna(value) else value,
                                                  unit=False)

    formatters = {METRICS[name].header: formatter(name) for name in _SHOWN}
    text: str = table.to_string(index=False, formatters=formatters, na_rep="-")
    return text


def _batch(args: argparse.Namespace) -> int:
    import pagelab

    check_measuring(args)
    results = pagelab.measure(
        args.urls,
        devices=ids(args.devices, "--devices"),
        locations=ids(args.locations, "--locations"),
        connections=ids(args.connections, "--connections"),
        runs=args.runs,
        config=parse_config(args.config),
        progress=args.progress,
    )
    total = len(results)
    if total == 0:
        print("pagelab: interrupted before any run finished", file=sys.stderr)
        return 130
    print(_format(summary_table(results, args.aggregation)))
    for path in args.out:
        results.export(path)
        print(f"pagelab: wrote {path}", file=sys.stderr)
    if results.interrupted:
        print(f"pagelab: interrupted; the table holds the {total} runs that finished",
              file=sys.stderr)
    return exit_status(failed=runs_failed(results.frame), interrupted=results.interrupted)
