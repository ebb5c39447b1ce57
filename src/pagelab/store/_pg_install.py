"""``pagelab setup --database``: Debian's PostgreSQL server, for a team store and its tests.

Plain standard library: importing it loads no database driver.
"""

from __future__ import annotations

import re
from pathlib import Path

from pagelab._apt import apt_command, ensure_installed

__all__ = ["POSTGRES_APT_COMMAND", "find_postgres_bin", "install_postgresql"]

POSTGRES_APT_COMMAND = apt_command("postgresql")
_DEBIAN_ROOT = Path("/usr/lib/postgresql")


def find_postgres_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` holding ``initdb`` and ``pg_ctl``
    (Debian keeps them off PATH), else None."""
    if not _DEBIAN_ROOT.is_dir():
        return None
    found = [
        path / "bin" for path in _DEBIAN_ROOT.iterdir()
        if re.fullmatch(r"\d+", path.name) and (path / "bin" / "initdb").exists()
        and (path / "bin" / "pg_ctl").exists()
    ]
    return max(found, key=lambda bin_dir: int(bin_dir.parent.name)) if found else None


def install_postgresql(*, log: bool = True) -> Path:
    """Install Debian's ``postgresql`` with apt when it is missing (root only); a one-line
    :class:`~pagelab.PagelabError` otherwise. Returns its bin directory. Idempotent.

    Debian starts a system cluster on install; pagelab's tests never use it (they start
    their own on a free loopback port), and a team store may use it or any other server.
    """
    return ensure_installed("postgresql", find_postgres_bin,
                            what="PostgreSQL",
                            setup_option="--database", log=log)
