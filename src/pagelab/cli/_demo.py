"""``pagelab demo``: real tests of the bundled demo site, printed as a DataFrame."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from pagelab.models import HEADLINE_METRICS, METRICS, TestReport

from ._options import exit_status, runs_failed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["register"]

#: The columns printed: the page, then the registry's headline metrics.
_SHOWN = ["url", "device", "status", *HEADLINE_METRICS, "lighthouse_version"]


# Short headers with units (from the metric registry), so the table fits a terminal.
_HEADERS = {name: METRICS[name].header for name in _SHOWN if name in METRICS} | {
    "lighthouse_version": "lighthouse"
}


def _formatter(name: str) -> Any:
    # Imported when the table is printed: the CLI's parser must not load pandas.
    import pandas as pd

    return lambda value: METRICS[name].format(None if pd.isna(value) else value, unit=False)


def register(subparsers: Any) -> None:
    demo = subparsers.add_parser(
        "demo", help="test each page of the bundled demo site and print the DataFrame",
        description="Test each page of the bundled demo site and print the DataFrame. Exit "
        "status 1 when a test failed.",
    )
    demo.add_argument("--devices", default="mobile", metavar="IDS",
                      help="comma-separated device ids (default mobile)")
    demo.set_defaults(handler=_demo)
    demo_commands = demo.add_subparsers(dest="demo_command", metavar="COMMAND")
    serve = demo_commands.add_parser("serve", help="serve the demo site until Ctrl-C")
    serve.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from pagelab.demo import serve_forever

    serve_forever(port=args.port)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from pagelab.demo import PAGES, serve
    from pagelab.runners import LocalRunner

    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    reports: list[TestReport] = []
    with serve() as base_url, LocalRunner() as runner:
        for device in devices:
            for page in PAGES:
                url = f"{base_url}/{page}"
                print(f"pagelab: testing {url} on {device} ...", flush=True)
                reports.append(runner.lighthouse(url, device=device))
    frame = runner_frame(reports)
    table = frame[_SHOWN].rename(columns=_HEADERS)
    formatters = {_HEADERS[name]: _formatter(name) for name in _SHOWN if name in METRICS}
    print(table.to_string(index=False, formatters=formatters, na_rep="-"))
    print(f"\nstored in {runner.store.data_dir}")
    return exit_status(failed=runs_failed(frame))


def runner_frame(reports: list[TestReport]) -> pd.DataFrame:
    from pagelab.frames import to_frame

    frame = to_frame(reports)
    frame["url"] = frame["url"].str.replace(r"^https?://[^/]+", "", regex=True)
    return frame
