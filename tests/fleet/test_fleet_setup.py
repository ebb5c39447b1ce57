"""``pagelab setup --broker``: Redis from Debian's packages, or one line saying how."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pagelab

_CALL = (
    "from pagelab.fleet import install_redis_server\n"
    "from pagelab import PagelabError\n"
    "try:\n"
    "    print(install_redis_server())\n"
    "except PagelabError as exc:\n"
    "    print('error:', exc)\n"
)


def _as_unprivileged(path: str) -> subprocess.CompletedProcess[str]:
    """The install helper in a child process as an unprivileged user (nobody when this
    runs as root), with ``PATH`` set to ``path``."""
    source = str(Path(pagelab.__file__).resolve().parents[1])
    prefix = ([] if os.geteuid() != 0 else
              [shutil.which("setpriv") or "setpriv", "--reuid=65534", "--regid=65534",
               "--clear-groups"])
    return subprocess.run(
        [*prefix, sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {source!r})\n"
         + _CALL],
        env={"PATH": path, "HOME": "/nonexistent"}, capture_output=True, text=True,
        timeout=60, check=False,
    )


def test_without_root_a_missing_redis_is_one_line_saying_how(tmp_path: Path) -> None:
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to drop root")
    result = _as_unprivileged(str(tmp_path))  # an empty PATH: no redis-server on it
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        "error: redis-server is missing: run `sudo sh -c 'apt-get update && apt-get install "
        "-y redis-server'` (or `sudo pagelab setup --broker`)"
    ]


def test_an_installed_redis_is_found_without_apt() -> None:
    # `make test` ran `pagelab setup --broker`, so redis-server is installed here.
    found = shutil.which("redis-server")
    assert found is not None, "run `pagelab setup --broker` first"
    result = _as_unprivileged(os.environ.get("PATH", "/usr/bin:/bin"))
    assert result.stdout.strip() == found, result.stdout + result.stderr
