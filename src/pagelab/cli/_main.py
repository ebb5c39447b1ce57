"""The ``pagelab`` command: argument parsing and error handling shared by every subcommand.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds a
parser whose ``handler`` default is a function ``(args) -> int`` (the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from pagelab._exceptions import PagelabError
from pagelab._url_secrets import redact_url

__all__ = ["CommandError", "build_parser", "main"]

# Subcommand modules, in the order `pagelab --help` lists them.
_COMMAND_MODULES = (
    "pagelab.cli._setup",
    "pagelab.cli._run",
    "pagelab.cli._check",
    "pagelab.cli._gate_check",
    "pagelab.cli._changes",
    "pagelab.cli._batch",
    "pagelab.cli._scan",
    "pagelab.cli._flow",
    "pagelab.cli._ttfb",
    "pagelab.cli._field",
    "pagelab.cli._demo",
    "pagelab.cli._examples",
    "pagelab.cli._serve",
    "pagelab.cli._worker",
    "pagelab.cli._workers",
    "pagelab.cli._worker_keys",
    "pagelab.cli._keys",
    "pagelab.cli._store",
)


class CommandError(PagelabError):
    """A CLI-level failure: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `--agg` must not silently mean `--aggregation` in one command
        # and be refused in another; every option is spelled out, the same everywhere.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # argparse would echo them whole; the value of a mistyped option may be a
            # password (`--databse postgresql://u:PW@...`): name the options, hide values.
            self.error("unrecognized arguments: " + " ".join(_unrecognized(extras)))
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        # One line, no usage dump: bad arguments are a typo to fix, not a manual to read.
        # Any URL password argparse quotes (an invalid value) is hidden.
        self.exit(2, f"pagelab: error: {redact_url(message)} (see '{self.prog} --help')\n")


def _unrecognized(words: Sequence[str]) -> list[str]:
    """Option names as given; their inline values and every other word as ``...``."""
    return [word.partition("=")[0] + ("=..." if "=" in word else "")
            if word.startswith("-") else "..." for word in words]


def build_parser() -> argparse.ArgumentParser:
    from pagelab import __version__

    parser = _Parser(
        prog="pagelab",
        description="Synthetic web-performance testing: real Lighthouse runs, TTFB probes, "
        "an HTTP API service.",
    )
    parser.add_argument("--version", action="version", version=f"pagelab {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in _COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        print("pagelab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader left (`pagelab run --json | head`): stop quietly, as cat does, and point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except PagelabError as exc:
        print(f"pagelab: error: {redact_url(str(exc))}", file=sys.stderr)
        return 2
