"""Who Chromium runs as, and whether with its own sandbox (docs/security.md, "Browser sandbox").

Chromium refuses its sandbox as root. So an engine running as root starts Chromium as an
unprivileged user (``$PAGELAB_BROWSER_USER``, else the ``pagelab-browser`` system user
``pagelab setup`` creates, else ``nobody``) with the sandbox on; an engine running as any
other user starts it as that user, sandbox on. Debian's Chromium without its optional SUID
helper (package ``chromium-sandbox``) sandboxes with unprivileged user namespaces. Where
the kernel forbids them the browser starts with ``--no-sandbox`` at once; where a
sandboxed start fails anyway (a container's seccomp profile, an AppArmor restriction), the
engine starts it again with ``--no-sandbox``, still as the unprivileged user, remembers that
for the rest of the process and says so (:func:`sandbox_status`, ``/healthz``, the log).
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = [
    "BROWSER_USER",
    "NO_SANDBOX",
    "BrowserSandbox",
    "browser_env",
    "chown_tree",
    "kernel_blocks_sandbox",
    "new_profile",
    "profile_parent",
    "record_failure",
    "record_start",
    "sandbox_plan",
    "sandbox_status",
    "sweep_stale_profiles",
    "without_sandbox",
]

logger = logging.getLogger("pagelab.engine")

#: The system user ``pagelab setup`` creates (as root) for the browser.
BROWSER_USER = "pagelab-browser"
#: Used as root when that user does not exist.
_FALLBACK_USER = "nobody"
NO_SANDBOX = "--no-sandbox"

#: Environment a browser started as another user keeps (never the server's secrets).
_KEPT_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "FONTCONFIG_PATH", "FONTCONFIG_FILE")


@dataclass(frozen=True, slots=True)
class BrowserSandbox:
    """How the engine starts (or started) Chromium."""

    #: True: Chromium's own sandbox is on (no ``--no-sandbox``).
    sandboxed: bool
    #: The user Chromium runs as, and its ids.
    user: str
    uid: int
    gid: int
    #: True when that user is not the engine's own (the engine runs as root).
    switches_user: bool
    #: True once a Chromium has started this way; False: what the next start will try.
    verified: bool = False
    #: Why the sandbox is off (None when it is on).
    reason: str | None = None


# (binary, uid, extra flags) -> why a sandboxed start failed; and the last browser started.
_failures: dict[tuple[str, int, tuple[str, ...]], str] = {}
_last_start: BrowserSandbox | None = None
_state_lock = threading.Lock()


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _has_suid_helper(binary: Path) -> bool:
    """A root-owned SUID ``chrome-sandbox`` (Google's builds) works without namespaces."""
    helper = Path(os.environ.get("CHROME_DEVEL_SANDBOX") or binary.resolve().parent
                  / "chrome-sandbox")
    try:
        info = helper.stat()
    except OSError:
        return False
    return info.st_uid == 0 and bool(info.st_mode & stat.S_ISUID)


def kernel_blocks_sandbox(binary: Path) -> str | None:
    """Why the kernel certainly forbids Chromium's sandbox to an unprivileged user, or None.

    Only settings that rule it out count (Debian's ``unprivileged_userns_clone = 0``, no
    user namespaces at all); anything else is found out by starting Chromium.
    """
    if _has_suid_helper(binary):
        return None
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return "the kernel forbids unprivileged user namespaces " \
               "(kernel.unprivileged_userns_clone = 0)"
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        return "the kernel allows no user namespaces (user.max_user_namespaces = 0)"
    return None


def _user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _browser_account() -> tuple[pwd.struct_passwd | None, str | None]:
    """The account Chromium runs as, or (None, why) when root has none to use."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()), None
    configured = os.environ.get("PAGELAB_BROWSER_USER")
    if configured:
        account = _user(configured)
        if account is None:
            raise RuntimeError(f"PAGELAB_BROWSER_USER={configured}: no such user")
        if account.pw_uid == 0:
            return None, f"PAGELAB_BROWSER_USER={configured} is root"
        return account, None
    for name in (BROWSER_USER, _FALLBACK_USER):
        account = _user(name)
        if account is not None and account.pw_uid != 0:
            return account, None
    return None, (f"no unprivileged user to run Chromium as (neither {BROWSER_USER} nor "
                  f"{_FALLBACK_USER}): run `pagelab setup` as root")


def sandbox_plan(binary: Path, extra_flags: tuple[str, ...] = ()) -> BrowserSandbox:
    """How the next Chromium of ``binary`` with ``extra_flags`` will be started."""
    account, why_not = _browser_account()
    if NO_SANDBOX in extra_flags:
        why_not = "--no-sandbox is among the engine's chromium_flags"
    if account is None:
        return BrowserSandbox(sandboxed=False, user="root", uid=0, gid=0, switches_user=False,
                              reason=why_not)
    plan = BrowserSandbox(
        sandboxed=True, user=account.pw_name, uid=account.pw_uid, gid=account.pw_gid,
        switches_user=account.pw_uid != os.geteuid(),
    )
    with _state_lock:
        failed = _failures.get((str(binary), account.pw_uid, extra_flags))
    reason = why_not or failed or kernel_blocks_sandbox(binary)
    return replace(plan, sandboxed=False, reason=reason) if reason else plan


def without_sandbox(plan: BrowserSandbox, error: str) -> BrowserSandbox:
    """The retry of a sandboxed start that failed with ``error``."""
    return replace(plan, sandboxed=False, reason=f"Chromium's sandbox did not start: {error}")


def record_failure(binary: Path, extra_flags: tuple[str, ...], started: BrowserSandbox) -> None:
    """A sandboxed start failed and ``started`` (without the sandbox) worked: the sandbox
    was the cause, so later starts go without it at once."""
    with _state_lock:
        _failures[(str(binary), started.uid, extra_flags)] = started.reason or ""
    logger.warning("%s; started Chromium with --no-sandbox as %s", started.reason,
                   started.user)


def record_start(started: BrowserSandbox) -> BrowserSandbox:
    global _last_start
    started = replace(started, verified=True)
    with _state_lock:
        _last_start = started
    return started


def sandbox_status(binary: Path | None) -> BrowserSandbox | None:
    """The last Chromium this process started, else the plan for ``binary`` (None if
    Chromium is missing)."""
    with _state_lock:
        last = _last_start
    if last is not None:
        return last
    if binary is None:
        return None
    try:
        return sandbox_plan(binary)
    except RuntimeError as exc:  # a misconfigured PAGELAB_BROWSER_USER
        return BrowserSandbox(sandboxed=False, user=os.environ.get("PAGELAB_BROWSER_USER", ""),
                              uid=-1, gid=-1, switches_user=True, reason=str(exc))


def _can_traverse(path: Path, uid: int, gid: int) -> bool:
    for part in (path, *path.parents):
        try:
            info = part.stat()
        except OSError:
            return False
        if info.st_uid == uid:
            bit = stat.S_IXUSR
        elif info.st_gid == gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not info.st_mode & bit:
            return False
    return True


def profile_parent(plan: BrowserSandbox, candidates: Iterable[Path] | None = None) -> Path:
    """Where the engine creates the browser's profile: the temp dir, unless the browser's
    user cannot reach it (then ``/var/tmp`` or ``/dev/shm``)."""
    if not plan.switches_user:
        return Path(tempfile.gettempdir())
    for candidate in candidates or (Path(tempfile.gettempdir()), Path("/var/tmp"),
                                    Path("/dev/shm")):
        resolved = candidate.resolve()
        if resolved.is_dir() and _can_traverse(resolved, plan.uid, plan.gid):
            return resolved
    raise RuntimeError(f"no temp directory that {plan.user} can reach for Chromium's profile")


_PROFILE_PREFIX = "pagelab-chromium-"
_PROFILE_NAME = re.compile(re.escape(_PROFILE_PREFIX) + r"(\d+)-")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_profiles(parent: Path) -> list[Path]:
    """Remove the profiles in ``parent`` of engines whose process is gone.

    A profile's name carries the pid of the Python that made it; an engine that was
    SIGKILLed could not remove its own (its Chromium died with it: parent-death signal).
    A pid reused since only keeps a stale profile a while longer, never removes a live one.
    """
    removed: list[Path] = []
    try:
        entries = list(parent.glob(_PROFILE_PREFIX + "*"))
    except OSError:
        return removed
    for entry in entries:
        match = _PROFILE_NAME.match(entry.name)
        if match is None or not entry.is_dir() or entry.is_symlink():
            continue
        if int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1))):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
    return removed


def new_profile(plan: BrowserSandbox) -> Path:
    """A fresh ``0700`` profile dir the browser's user can reach, named after this process;
    stale ones of dead engines are removed first."""
    parent = profile_parent(plan)
    sweep_stale_profiles(parent)
    return Path(tempfile.mkdtemp(prefix=f"{_PROFILE_PREFIX}{os.getpid()}-", dir=parent))


#: Chromium puts its singleton socket at ``$TMPDIR/org.chromium.Chromium.XXXXXX/
#: SingletonSocket``; a Unix socket path has at most 107 bytes.
_MAX_TMPDIR = 107 - len("/org.chromium.Chromium.XXXXXX/SingletonSocket")


def browser_env(plan: BrowserSandbox, profile: Path) -> dict[str, str] | None:
    """The environment of a browser started as another user: its home, config, cache and
    temp files inside the profile (removed with it), none of the server's variables.

    ``TMPDIR`` is the profile only where the singleton socket's path fits under it, else
    the system's default (``/tmp``)."""
    if not plan.switches_user:
        return None
    env = {key: value for key, value in os.environ.items()
           if key in _KEPT_ENV or key.startswith("LC_")}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if len(str(profile).encode()) <= _MAX_TMPDIR:
        env["TMPDIR"] = str(profile)
    env.update({
        "HOME": str(profile),
        "XDG_CONFIG_HOME": str(profile / ".config"),
        "XDG_CACHE_HOME": str(profile / ".cache"),
        "XDG_DATA_HOME": str(profile / ".local" / "share"),
        "USER": plan.user,
        "LOGNAME": plan.user,
    })
    return env


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` and everything in it to ``uid``/``gid``."""
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)
