"""The bare ``lighthouse`` CLI of the pinned version, for benchmarks that compare against it.

Run with the pinned Node, ``CHROME_PATH`` = Debian's Chromium, the engine's Chromium flags and
``--only-categories=performance``; each run launches and kills its own Chromium
(chrome-launcher), as a user of the CLI would, and holds the machine-wide engine lock so that
it never overlaps a run of the engine.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["cli_run"]


def cli_run(url: str, chromium: Path, flags: tuple[str, ...], out: Path) -> dict[str, Any]:
    """One bare CLI run of ``url`` on the mobile defaults; its LHR."""
    from pagelab.engine import engine_install
    from pagelab.engine._lock import engine_lock

    install = engine_install()
    cli = install.root / "node_modules" / "lighthouse" / "cli" / "index.js"
    command = [
        str(install.node), str(cli), url,
        "--only-categories=performance", "--output=json", f"--output-path={out}",
        "--quiet", f"--chrome-flags={' '.join(flags)}",
    ]
    env = {**os.environ, "CHROME_PATH": str(chromium)}
    with engine_lock():
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
    lhr: dict[str, Any] = json.loads(out.read_text())
    return lhr
