"""Where pagelab keeps things: the data dir (store) and the cache dir (engine, lock)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["cache_dir", "data_dir"]


def data_dir() -> Path:
    """The store's directory: ``$PAGELAB_DATA_DIR``, else the per-user data dir."""
    configured = os.environ.get("PAGELAB_DATA_DIR")
    return Path(configured) if configured else Path(platformdirs.user_data_dir("pagelab"))


def cache_dir() -> Path:
    """The engine's npm install and the engine lock: ``$PAGELAB_CACHE_DIR``, else the
    per-user cache dir."""
    configured = os.environ.get("PAGELAB_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("pagelab"))
