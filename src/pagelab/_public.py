"""The public API's housekeeping: each public name's public home, and keywords renamed
without breaking callers."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterable, Mapping
from typing import TypeVar

_T = TypeVar("_T")


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


def renamed_keyword(old: str, old_value: _T | None, new: str, new_value: _T) -> _T:
    """The value of a keyword argument renamed from ``old`` to ``new``: ``old_value`` (with a
    DeprecationWarning pointing at the caller's caller) when the caller still used ``old``,
    else ``new_value``."""
    if old_value is None:
        return new_value
    warnings.warn(f"{old}= is deprecated: use {new}= (the same word as everywhere else)",
                  DeprecationWarning, stacklevel=3)
    return old_value
