"""``pagelab setup`` and ``pagelab doctor``."""

from __future__ import annotations

import argparse
import json
import subprocess
from typing import Any

from pagelab._exceptions import EngineNotInstalledError
from pagelab._paths import cache_dir
from pagelab.engine import (
    APT_INSTALL_COMMAND,
    QUIET_WINDOW_VARIABLE,
    chromium_version,
    engine_install,
    find_chromium,
    find_ffmpeg,
    install_chromium,
    install_engine,
    pinned_lighthouse_version,
    quiet_window_ms,
)
from pagelab.store import Store

__all__ = ["register"]


def register(subparsers: Any) -> None:
    setup = subparsers.add_parser(
        "setup", help="install Chromium (apt, as root) and the pinned Lighthouse and Node (npm)"
    )
    setup.add_argument("--broker", action="store_true",
                       help="also install Redis, the fleet's broker (Debian's redis-server, "
                       "apt, as root; docs/scale-out.md)")
    setup.add_argument("--database", action="store_true",
                       help="also install PostgreSQL, the team store (Debian's postgresql, "
                       "apt, as root; docs/deployment.md); the tests start their own cluster")
    setup.set_defaults(handler=_setup)
    doctor = subparsers.add_parser("doctor", help="check Chromium, Node, Lighthouse and the store")
    doctor.add_argument("--calibrate", action="store_true",
                        help="then measure this machine's noise floor on the demo site: the "
                        "CV per metric over interleaved runs and the smallest change the "
                        "gate can find at 5, 10 and 20 runs a side")
    doctor.add_argument("--runs", type=_positive_runs, default=10, metavar="N",
                        help="runs of each demo page for --calibrate (default 10)")
    doctor.set_defaults(handler=_doctor)


def _positive_runs(text: str) -> int:
    try:
        runs = int(text)
    except ValueError:
        runs = 0
    if runs < 2:
        raise argparse.ArgumentTypeError(f"expected a number of runs of at least 2, got {text!r}")
    return runs


def _setup(args: argparse.Namespace) -> int:
    install_chromium()
    install_engine()
    if args.broker:
        from pagelab.fleet import install_redis_server

        redis_server = install_redis_server()
        print(f"redis-server  {redis_server}")
    if args.database:
        from pagelab.store import install_postgresql

        print(f"postgresql    {install_postgresql()}")
    return _doctor(args)


def _node_version(node: str) -> str | None:
    try:
        return subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip() or None
    except OSError:
        return None


def _doctor(args: argparse.Namespace) -> int:
    problems: list[str] = []
    rows: list[tuple[str, str]] = []

    chromium = find_chromium()
    if chromium is None:
        rows.append(("chromium", "missing"))
        problems.append(f"Chromium: run `{APT_INSTALL_COMMAND}` as root, or `pagelab setup`")
    else:
        rows.append(("chromium", f"{chromium_version(chromium)} at {chromium}"))

    install = engine_install()
    pinned = pinned_lighthouse_version()
    if install.is_complete:
        rows.append(("node", f"{_node_version(str(install.node))} at {install.node}"))
        package = json.loads(
            (install.root / "node_modules" / "lighthouse" / "package.json").read_text()
        )
        rows.append(("lighthouse", f"{package['version']} (pinned {pinned})"))
    else:
        rows.append(("node", "missing"))
        rows.append(("lighthouse", f"missing (pinned {pinned})"))
        problems.append("Lighthouse and Node: run `pagelab setup`")

    ffmpeg = find_ffmpeg()
    if ffmpeg is None:
        rows.append(("ffmpeg", "missing (only needed for video)"))
        problems.append(f"FFmpeg (page-load videos): run `{APT_INSTALL_COMMAND}` as root")
    else:
        rows.append(("ffmpeg", str(ffmpeg)))

    store = Store()
    rows.append(("store", str(store.data_dir)))
    rows.append(("engine lock", str(cache_dir() / "engine.lock")))
    window = quiet_window_ms()
    rows.append(("quiet window", "1000 ms (Lighthouse's)" if window is None
                 else f"{window} ms ({QUIET_WINDOW_VARIABLE})"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for problem in problems:
        print(f"missing: {problem}")
    if problems:
        raise EngineNotInstalledError("the engine is not ready (see above)")
    print("ready")
    if getattr(args, "calibrate", False):
        from ._calibrate import calibrate

        return calibrate(args.runs)
    return 0
