"""``pagelab run``: one Lighthouse test on the local engine (or the API, if configured)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS, TestReport

from ._options import add_matrix, add_progress, add_renamed, exit_status, ids, runs_failed

__all__ = ["format_report", "register"]


def register(subparsers: Any) -> None:
    run = subparsers.add_parser(
        "run", help="run one Lighthouse test per device x location and print the reports",
        description="One Lighthouse test of URL on every device x location x connection "
        "given (one by default). With --json, one report is a JSON object, several a list. "
        "Exit status 1 when a test failed (the page did not load).",
    )
    run.add_argument("url", help="absolute http(s) URL of the page")
    add_matrix(run)
    add_renamed(run, "--device", "--devices", "devices")
    add_renamed(run, "--location", "--locations", "locations")
    run.add_argument("--config", metavar="JSON",
                     help='config object, e.g. \'{"throttling_method": "applied"}\'')
    run.add_argument("--json", action="store_true", help="print the report(s) as JSON")
    add_progress(run)
    run.set_defaults(handler=_run)


def parse_config(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"--config: not valid JSON ({exc.msg})") from exc
    if not isinstance(config, dict):
        raise InvalidInputError("--config: must be a JSON object")
    return config


def format_report(report: TestReport) -> str:
    """A few readable lines: status, target, metrics or error, report location."""
    lines = [
        f"{report.status.value}  {report.url}  {report.device.value} / {report.location.value}"
        f"  Lighthouse {report.lighthouse_version or '?'}  ({report.id})"
    ]
    if report.metrics is not None:
        values = report.metrics.model_dump()
        # The registry's metrics only: user_timings is a mapping, not one value.
        for name, metric in METRICS.items():
            if name in values:
                lines.append(f"  {name:<26}{metric.format(values[name])}")
    if report.error is not None:
        lines.append(f"  error {report.error.code}: {report.error.message}")
    if report.report_url:
        lines.append(f"  report: {report.report_url}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    import pagelab

    results = pagelab.measure(
        args.url,
        devices=ids(args.devices, "--devices"),
        locations=ids(args.locations, "--locations"),
        connections=ids(args.connections, "--connections"),
        runs=1,
        config=parse_config(args.config),
        progress=args.progress,
    )
    reports = results.reports
    if args.json:
        if len(reports) == 1:
            print(reports[0].model_dump_json(indent=2))
        else:
            print(json.dumps([r.model_dump(mode="json") for r in reports], indent=2))
    else:
        print("\n\n".join(format_report(report) for report in reports))
    return exit_status(failed=runs_failed(results.frame), interrupted=results.interrupted)
