"""The runner for this environment, chosen by two environment variables."""

from __future__ import annotations

import os

from ._api import ApiRunner
from ._base import Runner
from ._local import LocalRunner

__all__ = ["connect"]


def connect(data_dir: str | None = None) -> Runner:
    """The runner for this environment.

    An :class:`ApiRunner` when ``PAGELAB_API_URL`` is set (with ``PAGELAB_API_KEY``),
    else a :class:`LocalRunner` on ``data_dir`` (default ``$PAGELAB_DATA_DIR`` or the
    per-user data dir).
    """
    if os.environ.get("PAGELAB_API_URL"):
        return ApiRunner()
    return LocalRunner(data_dir)
