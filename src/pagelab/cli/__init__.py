"""The ``pagelab`` command line."""

from pagelab._public import publish

from ._main import main

__all__ = ["main"]

publish(__name__, globals(), __all__)
