"""The ``pagelab`` command line."""

from ._main import CommandError, build_parser, main

__all__ = ["CommandError", "build_parser", "main"]
