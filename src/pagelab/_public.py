"""One helper for the package ``__init__`` files: show each public name's public home."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping


def publish(module: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Set ``__module__`` of the classes and functions among ``names`` to ``module`` (as
    httpx does), so reprs, docs and pickles say ``pagelab.models.TestReport``, not the
    private module that happens to define it. Names another public module already claimed
    (the root re-exports ``pagelab.models.Device``) keep that home."""
    for name in names:
        obj = namespace.get(name)  # the root's lazy names are not loaded yet
        if not (isinstance(obj, type) or inspect.isfunction(obj)):
            continue  # constants and type aliases have no __module__ of their own
        if obj.__module__.startswith("pagelab") and _is_private(obj.__module__):
            obj.__module__ = module


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))
