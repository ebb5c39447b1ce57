"""Where the engine's parts are, and how ``pagelab setup`` installs them.

Lighthouse and a Node.js it supports are npm packages pinned by the committed
``node/package-lock.json``; they are installed with ``npm ci`` into the per-user cache dir,
in a folder named after the lock file's hash, so a new pin never mixes with an old install.
Chromium comes from Debian's ``chromium`` package, FFmpeg (page-load videos) from ``ffmpeg``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import filelock

from pagelab._apt import apt_install
from pagelab._exceptions import EngineNotInstalledError
from pagelab._paths import cache_dir

__all__ = [
    "APT_INSTALL_COMMAND",
    "EngineInstall",
    "chromium_version",
    "engine_install",
    "ensure_browser_user",
    "find_chromium",
    "install_chromium",
    "install_engine",
    "pinned_lighthouse_version",
]

APT_INSTALL_COMMAND = "apt-get update && apt-get install -y chromium ffmpeg"

# Debian's /usr/bin/chromium is a shell wrapper around this binary; starting the binary
# directly spares a shell and its noise on stderr.
_CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome",
)
_NODE_FILES = ("package.json", "package-lock.json", "driver.mjs")


def _node_dir() -> Path:
    return Path(str(resources.files("pagelab.engine") / "node"))


def pinned_lighthouse_version() -> str:
    """The Lighthouse version the committed lock file pins."""
    import json

    lock = json.loads((_node_dir() / "package-lock.json").read_text())
    return str(lock["packages"]["node_modules/lighthouse"]["version"])


@dataclass(frozen=True, slots=True)
class EngineInstall:
    """An npm install of the pinned Lighthouse and Node in the cache dir."""

    root: Path

    @property
    def node(self) -> Path:
        return self.root / "node_modules" / "node" / "bin" / "node"

    @property
    def driver(self) -> Path:
        return _node_dir() / "driver.mjs"

    @property
    def lighthouse_cli(self) -> Path:
        return self.root / "node_modules" / "lighthouse" / "cli" / "index.js"

    @property
    def is_complete(self) -> bool:
        return (self.root / ".installed").exists() and self.node.exists()


def engine_install() -> EngineInstall:
    """The install matching the committed lock file (it may not be installed yet)."""
    digest = hashlib.sha256((_node_dir() / "package-lock.json").read_bytes()).hexdigest()[:12]
    return EngineInstall(cache_dir() / "engine" / digest)


def install_engine(*, log: bool = True) -> EngineInstall:
    """``npm ci`` the pinned packages into the cache dir (idempotent, safe to run in parallel)."""
    target = engine_install()
    if target.is_complete:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise EngineNotInstalledError(
            "npm is missing: install Node.js 20 or newer with npm, then run `pagelab setup`"
        )
    target.root.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(target.root) + ".lock"):
        if target.is_complete:
            return target
        staging = target.root.with_name(f"{target.root.name}.staging-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(_node_dir() / name, staging / name)
        if log:
            version = pinned_lighthouse_version()
            print(f"pagelab: installing Lighthouse {version} into {target.root}")
        completed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=staging, capture_output=True, text=True, check=False,
        )
        if completed.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = (completed.stderr or completed.stdout).strip().splitlines()[-5:]
            raise EngineNotInstalledError("npm ci failed: " + " | ".join(tail))
        (staging / ".installed").write_text(pinned_lighthouse_version() + "\n")
        shutil.rmtree(target.root, ignore_errors=True)
        staging.rename(target.root)
    return target


def find_chromium() -> Path | None:
    """``$PAGELAB_CHROMIUM``, else Debian's Chromium, else one on PATH."""
    configured = os.environ.get("PAGELAB_CHROMIUM")
    if configured:
        return Path(configured) if Path(configured).exists() else None
    for candidate in _CHROMIUM_CANDIDATES:
        found = shutil.which(candidate) if "/" not in candidate else candidate
        if found and Path(found).exists():
            return Path(found)
    return None


@cache
def chromium_version(path: Path) -> str | None:
    """``156.0.8078.79`` from ``chromium --version``."""
    try:
        out = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+\.\d+\.\d+\.\d+)", out)
    return match.group(1) if match else None


def ensure_browser_user(*, log: bool = True) -> str | None:
    """As root: create the ``pagelab-browser`` system user (no home, no shell, its own
    group) that an engine running as root starts Chromium as, sandboxed
    (docs/security.md, "Browser sandbox"). Returns its name; None when not root."""
    import pwd

    from ._sandbox import BROWSER_USER

    if os.geteuid() != 0:
        return None
    with contextlib.suppress(KeyError):
        pwd.getpwnam(BROWSER_USER)
        return BROWSER_USER
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    if log:
        print(f"pagelab: creating the system user {BROWSER_USER} for Chromium")
    completed = subprocess.run(
        [useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", "--comment", "pagelab browser (Chromium)",
         BROWSER_USER],
        capture_output=True, text=True, check=False,
    )
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
        raise EngineNotInstalledError(f"useradd {BROWSER_USER} failed: " + " | ".join(tail))
    return BROWSER_USER


def install_chromium(*, log: bool = True) -> Path:
    """Install Debian's Chromium, and FFmpeg for page-load videos, with apt when either is
    missing (root only). As root, also create the browser's system user
    (:func:`ensure_browser_user`)."""
    from ._video import find_ffmpeg

    ensure_browser_user(log=log)
    found = find_chromium()
    missing = [name for name, present in (("chromium", found), ("ffmpeg", find_ffmpeg()))
               if present is None]
    if found is not None and not missing:
        return found
    if os.geteuid() != 0:
        if found is not None:
            # Chromium is enough to run tests; only `video` needs FFmpeg.
            if log:
                print(f"pagelab: ffmpeg is missing (videos need it): run "
                      f"`sudo sh -c '{APT_INSTALL_COMMAND}'`")
            return found
        raise EngineNotInstalledError(
            f"Chromium is missing: run `sudo sh -c '{APT_INSTALL_COMMAND}'`, then `pagelab setup`"
        )
    if log:
        print(f"pagelab: installing {' and '.join(missing)} with apt")
    apt_install(missing, error=EngineNotInstalledError)
    found = find_chromium()
    if found is None:
        raise EngineNotInstalledError("apt installed chromium but no Chromium binary was found")
    return found
