"""Options shared by several subcommands, defined once so every command spells them alike.

The words are those of :func:`pagelab.measure`, the budget files and the pytest plugin
(docs/decisions.md, "One vocabulary"): ``--devices``, ``--locations``, ``--connections``,
``--runs``, ``--aggregation``, ``--replay``, ``--no-progress``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pagelab._exceptions import InvalidInputError
from pagelab.models import Connection, Device, Location, unknown_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXIT_STATUSES",
    "OUT_FORMATS",
    "add_aggregation",
    "add_config",
    "add_matrix",
    "add_out",
    "add_progress",
    "add_renamed",
    "check_measuring",
    "check_outputs",
    "exit_status",
    "ids",
    "runs_failed",
]

_AGGREGATIONS = "median (default), mean, p75, p90, min, max, representative"

#: --out suffixes, and the module each needs beyond the core (checked before any run, so a
#: missing extra fails in a second, not after the whole matrix).
OUT_FORMATS: dict[str, tuple[str, str] | None] = {
    ".csv": None,
    ".json": None,
    ".parquet": ("pyarrow", "notebook"),
    ".xlsx": ("openpyxl", "notebook"),
    ".html": ("matplotlib", "notebook"),
}


#: Every command's exit statuses: one rule, so a script can trust ``$?`` whatever it ran.
#: The CLI reference (docs/_scripts/reference.py) prints this table.
EXIT_STATUSES: dict[int, str] = {
    0: "done: every run succeeded (and, for `check`, every error-level budget was met)",
    1: "a run failed (a page that did not load, a flow that stopped, a TTFB probe that "
       "failed; any one of many), or `check` missed a budget; the output still shows "
       "every run",
    2: "bad input, one line on stderr, before anything is measured",
    130: "interrupted (Ctrl-C); the output shows the runs that finished",
    141: "the reader of stdout left (`pagelab run --json | head`)",
}


def exit_status(*, failed: bool, interrupted: bool = False) -> int:
    """The status by :data:`EXIT_STATUSES`: 130 after an interrupt, 1 when a run failed."""
    return 130 if interrupted else 1 if failed else 0


def runs_failed(frame: pd.DataFrame) -> bool:
    """Whether any run (row) of a wide frame failed."""
    return bool((frame["status"] == "failed").any()) if len(frame) else False


class _Renamed(argparse.Action):
    """An old option name that still works, with a note on stderr naming the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str,
                 **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"pagelab: {option_string} is deprecated; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: argparse.ArgumentParser, old: str, new: str, dest: str) -> None:
    """Accept ``old`` as a hidden, deprecated spelling of ``new`` (same ``dest``)."""
    parser.add_argument(old, dest=dest, action=_Renamed, new=new, help=argparse.SUPPRESS)


def add_matrix(parser: argparse.ArgumentParser) -> None:
    """``--devices``, ``--locations`` and ``--connections``: comma-separated ids."""
    parser.add_argument("--devices", default="mobile", metavar="IDS",
                        help=f"comma-separated device ids (default mobile; of {', '.join(Device)})")
    parser.add_argument("--locations", default="us", metavar="IDS",
                        help=f"comma-separated location ids (default us; of {', '.join(Location)})")
    parser.add_argument("--connections", metavar="IDS",
                        help="comma-separated connection ids (default: each device's own; of "
                        f"{', '.join(Connection)})")


def add_aggregation(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--aggregation NAME`` (``--agg``, its old spelling in ``batch``, still works)."""
    parser.add_argument("--aggregation", default=default, metavar="NAME",
                        help=f"how the runs of a cell are aggregated: {_AGGREGATIONS}")
    add_renamed(parser, "--agg", "--aggregation", "aggregation")


def add_config(parser: argparse.ArgumentParser) -> None:
    """``--config JSON``: the config object every run gets."""
    parser.add_argument("--config", metavar="JSON",
                        help='config object for every run, e.g. \'{"throttling_method": '
                        '"applied"}\'')


def add_out(parser: argparse.ArgumentParser, what: str) -> None:
    """``--out PATH`` (repeatable): ``what`` written to a file by its suffix."""
    parser.add_argument("--out", action="append", default=[], type=Path, metavar="PATH",
                        help=f"also write {what} to PATH, by suffix: "
                        f"{', '.join(OUT_FORMATS)} (repeatable)")


def check_outputs(paths: list[Path]) -> None:
    from pagelab._extras import require

    for path in paths:
        suffix = path.suffix.lower()
        if suffix not in OUT_FORMATS:
            raise InvalidInputError(
                f"--out {path}: unknown suffix {path.suffix or '(none)'!r}; "
                f"use one of {', '.join(OUT_FORMATS)}"
            )
        if not path.resolve().parent.is_dir():
            raise InvalidInputError(f"--out {path}: the directory {path.parent} does not exist")
        needed = OUT_FORMATS[suffix]
        if needed is not None:
            require(*needed)


def check_measuring(args: argparse.Namespace) -> None:
    """``--aggregation``, ``--runs`` and ``--out`` of a command that measures, checked
    before the first run: a typo costs a second, not a matrix."""
    from pagelab.stats import AGGREGATIONS

    if args.aggregation not in AGGREGATIONS:
        raise InvalidInputError(
            f"--aggregation: {unknown_value(args.aggregation, AGGREGATIONS)}")
    if args.runs < 1:
        raise InvalidInputError(f"--runs: must be at least 1, got {args.runs}")
    check_outputs(args.out)


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", dest="progress", action="store_false",
                        help="no progress bar on stderr")


@overload
def ids(text: str, option: str) -> list[str]: ...
@overload
def ids(text: None, option: str) -> None: ...
@overload
def ids(text: str | None, option: str) -> list[str] | None: ...


def ids(text: str | None, option: str) -> list[str] | None:
    """The ids of a comma-separated option (None when the option was not given)."""
    if text is None:
        return None
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise InvalidInputError(f"{option}: give at least one id")
    return found
