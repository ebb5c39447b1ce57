"""Installing Debian packages with apt (``pagelab setup``): the one place that runs it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from pagelab._exceptions import PagelabError

__all__ = ["apt_install"]


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
