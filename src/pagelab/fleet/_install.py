"""``pagelab setup --broker``: Redis, the fleet's broker, from Debian's packages.

Plain standard library: importing it loads neither Celery nor Redis's client.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pagelab._apt import apt_command, ensure_installed

__all__ = ["REDIS_APT_COMMAND", "find_redis_server", "install_redis_server"]

REDIS_APT_COMMAND = apt_command("redis-server")


def find_redis_server() -> Path | None:
    """``redis-server`` on PATH (Debian puts it in /usr/bin), else None."""
    found = shutil.which("redis-server")
    return Path(found) if found else None


def install_redis_server(*, log: bool = True) -> Path:
    """Install Debian's ``redis-server`` with apt when it is missing (root only); a
    one-line :class:`~pagelab.PagelabError` otherwise. Idempotent."""
    return ensure_installed("redis-server", find_redis_server, what="redis-server",
                            setup_option="--broker", log=log)
