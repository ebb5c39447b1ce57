"""``pagelab run``: one Lighthouse test on the local engine (or the API, if configured)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS, Device, Location, TestReport

__all__ = ["format_report", "register"]


def register(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run one Lighthouse test and print its report")
    run.add_argument("url", help="absolute http(s) URL of the page")
    run.add_argument("--device", default="mobile", metavar="ID",
                     help=f"device id (default mobile; one of {', '.join(Device)})")
    run.add_argument("--location", default="us", metavar="ID",
                     help=f"location id (default us; one of {', '.join(Location)})")
    run.add_argument("--config", metavar="JSON",
                     help='config object, e.g. \'{"connection": "4g"}\'')
    run.add_argument("--json", action="store_true", help="print the report as JSON")
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
        for name, value in report.metrics.model_dump().items():
            lines.append(f"  {name:<26}{METRICS[name].format(value)}")
    if report.error is not None:
        lines.append(f"  error {report.error.code}: {report.error.message}")
    if report.report_url:
        lines.append(f"  report: {report.report_url}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    import pagelab

    config = parse_config(args.config)
    runner = pagelab.connect()
    try:
        report = runner.lighthouse(args.url, args.device, args.location, config)
    finally:
        close = getattr(runner, "close", None)
        if close is not None:
            close()
    print(report.model_dump_json(indent=2) if args.json else format_report(report))
    return 0
