"""Installing Debian packages with apt (``pagelab setup``): the one place that runs it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from pagelab._exceptions import PagelabError

__all__ = ["apt_command", "apt_install", "ensure_installed"]


def apt_install(packages: Sequence[str], *,
                error: type[PagelabError] = PagelabError) -> None:
    """``apt-get update`` then ``apt-get install -y PACKAGES``, non-interactive (as root);
    ``error`` with the failing command and the tail of its output otherwise."""
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        completed = subprocess.run(
            command, capture_output=True, text=True, check=False,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        if completed.returncode != 0:
            tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
            raise error(f"{' '.join(command)} failed: " + " | ".join(tail))


def apt_command(package: str) -> str:
    """The shell command a user runs as root to install ``package`` (said in errors)."""
    return f"apt-get update && apt-get install -y {package}"


def ensure_installed(package: str, find: Callable[[], Path | None], *, what: str,
                     setup_option: str, log: bool = True) -> Path:
    """What ``find`` finds of ``package``, installed with apt first when it is missing (root
    only); a one-line :class:`PagelabError` otherwise, naming ``what`` (the program or
    files ``find`` looks for) and ``pagelab setup SETUP_OPTION``. Idempotent."""
    found = find()
    if found is not None:
        return found
    if os.geteuid() != 0:
        raise PagelabError(
            f"{what} is missing: run `sudo sh -c '{apt_command(package)}'` "
            f"(or `sudo pagelab setup {setup_option}`)"
        )
    if log:
        print(f"pagelab: installing {package} with apt")
    apt_install([package])
    found = find()
    if found is None:
        raise PagelabError(f"apt installed {package} but no {what} was found")
    return found
