"""Optional dependencies: the notebook parts and the server are extras, imported on use."""

from __future__ import annotations

import importlib
from types import ModuleType

from ._exceptions import MissingDependencyError

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or fail with the command that installs the extra providing it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{module} is not installed: pip install 'pagelab[{extra}]'"
        ) from exc
