"""``pagelab setup --broker``: Redis, the fleet's broker, from Debian's packages.

Plain standard library: importing it loads neither Celery nor Redis's client.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pagelab._apt import apt_install
from pagelab._exceptions import PagelabError

__all__ = ["REDIS_APT_COMMAND", "find_redis_server", "install_redis_server"]

REDIS_APT_COMMAND = "apt-get update && apt-get install -y redis-server"


def find_redis_server() -> Path | None:
    """``redis-server`` on PATH (Debian puts it in /usr/bin), else None."""
    found = shutil.which("redis-server")
    return Path(found) if found else None


def install_redis_server(*, log: bool = True) -> Path:
    """Install Debian's ``redis-server`` with apt when it is missing (root only); a
    one-line :class:`~pagelab.PagelabError` otherwise. Idempotent."""
    found = find_redis_server()
    if found is not None:
        return found
    if os.geteuid() != 0:
        raise PagelabError(
            f"redis-server is missing: run `sudo sh -c '{REDIS_APT_COMMAND}'` "
            "(or `sudo pagelab setup --broker`)"
        )
    if log:
        print("pagelab: installing redis-server with apt")
    apt_install(["redis-server"])
    found = find_redis_server()
    if found is None:
        raise PagelabError("apt installed redis-server but no redis-server binary was found")
    return found
