"""``pagelab flow FILE``: run a user flow file on the local engine; a table per step.

Each step gets its own table (one row per device x location x connection) with the metrics
its mode measures: a navigation the page metrics, a timespan INP, TBT and CLS, a snapshot
none. Progress and failures go to stderr, the tables to stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab.models import HEADLINE_METRICS, METRICS, mode_measures

from ._options import (
    add_aggregation,
    add_config,
    add_matrix,
    add_out,
    add_progress,
    check_measuring,
    exit_status,
    ids,
)
from ._run import parse_config

if TYPE_CHECKING:
    from pagelab import Results

__all__ = ["register", "step_tables"]


def register(subparsers: Any) -> None:
    flow = subparsers.add_parser(
        "flow", help="run a user flow file (YAML/JSON) and print a table per step",
        description="Run the user flow in FILE (docs/flows.md) --runs times on every device "
        "x location x connection, on the local engine, and print one table per step with "
        "the metrics its mode measures, aggregated over the runs. Exit status 1 when any "
        "run failed (its message on stderr).",
    )
    flow.add_argument("file", type=Path, metavar="FILE", help="flow file (.yaml, .yml, .json)")
    add_matrix(flow)
    flow.add_argument("--runs", type=int, default=1, metavar="N",
                      help="runs of the flow per device x location x connection (default 1)")
    add_aggregation(flow, "median")
    add_config(flow)
    add_out(flow, "the steps' runs")
    add_progress(flow)
    flow.set_defaults(handler=_flow)


def step_tables(results: Results, agg: str = "median") -> str:
    """One titled table per step, in the flow's order: the cells' runs, failed runs and
    the metrics the step's mode measures (``agg`` over successful runs)."""
    import pandas as pd

    from pagelab.frames import CELL

    frame = results.frame
    summary = results.summary(None, agg).frame  # the aggregation, positionally
    keys = [c for c in CELL if c in summary.columns and c not in ("flow", "step", "url")]
    blocks: list[str] = []
    # A step's mode and URL from any run that reached it: a run that failed there has none.
    steps = frame.groupby(["flow", "step"], sort=False, observed=True)[
        ["step_index", "mode", "url"]].first().reset_index()
    for flow, step, index, mode, url in steps.itertuples(index=False):
        mode = None if pd.isna(mode) else str(mode)
        rows = summary[(summary["flow"] == flow) & (summary["step"] == step)]
        # INP first (what only a flow measures), then the headline metrics, where measured.
        shown = [m for m in ("interaction_to_next_paint", *HEADLINE_METRICS)
                 if mode is not None and mode_measures(mode, m) and rows[m].notna().any()]
        title = f"{flow} \u00b7 step {index} {step!r} ({mode or 'failed'})"
        title += f"  {url}" if isinstance(url, str) else ""
        table = rows[[*keys, "runs", "failed"]].astype(object).fillna("default").copy()
        for name in shown:
            table[METRICS[name].header] = [
                METRICS[name].format(None if pd.isna(v) else float(v), unit=False)
                for v in rows[name]]
        text = table.to_string(index=False)
        if mode == "snapshot":
            text += "\n(a snapshot measures no metric: its audits are in the flow report)"
        blocks.append(f"{title}\n{text}")
    return "\n\n".join(blocks)


def _flow(args: argparse.Namespace) -> int:
    import pagelab

    check_measuring(args)
    flow = pagelab.Flow.from_file(args.file)  # measure checks it, before any run
    with pagelab.LocalRunner() as runner:
        results = pagelab.measure(
            flow,
            devices=ids(args.devices, "--devices"),
            locations=ids(args.locations, "--locations"),
            connections=ids(args.connections, "--connections"),
            runs=args.runs,
            config=parse_config(args.config),
            runner=runner,
            progress=args.progress,
        )
    if not results.flow_reports:
        print("pagelab: interrupted before any run finished", file=sys.stderr)
        return 130
    print(step_tables(results, args.aggregation))
    failed = [r for r in results.flow_reports if r.error is not None]
    for report in failed:
        assert report.error is not None
        print(f"pagelab: {report.error.code}: {report.error.message}", file=sys.stderr)
    for path in args.out:
        results.export(path)
        print(f"pagelab: wrote {path}", file=sys.stderr)
    return exit_status(failed=bool(failed), interrupted=results.interrupted)
