"""Lighthouse CI's own ``assertions.js`` for the parity tests (not a test module).

``tests/lhci/package.json`` + ``package-lock.json`` pin ``@lhci/utils``; :func:`install`
runs ``npm ci`` into the per-user cache dir (a folder named after the lock's hash, as the
engine's own install does) and :func:`lhci_verdicts` runs ``tests/lhci/assert.cjs`` with the
engine's pinned Node, once for any number of cases.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import filelock

from pagelab._paths import cache_dir
from pagelab.engine._install import install_engine

HERE = Path(__file__).resolve().parent / "lhci"
LOCK = HERE / "package-lock.json"


def install() -> Path:
    """The ``npm ci`` install of the pinned ``@lhci/utils`` (made on first use)."""
    digest = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:12]
    root = cache_dir() / "lhci-parity" / digest
    if (root / ".installed").exists():
        return root
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is missing: the parity tests install @lhci/utils with npm ci")
    root.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(root) + ".lock"):
        if (root / ".installed").exists():
            return root
        staging = root.with_name(f"{root.name}.staging-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(HERE / name, staging / name)
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                              cwd=staging, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise RuntimeError(f"npm ci of tests/lhci failed: {done.stderr[-2000:]}")
        (staging / ".installed").write_text("ok\n")
        shutil.rmtree(root, ignore_errors=True)
        staging.rename(root)
    return root


def lhci_verdicts(
    lhrs: dict[str, dict[str, Any]],
    cases: list[dict[str, Any]],
    budgets: list[Any] | None = None,
) -> dict[str, Any]:
    """Run Lighthouse CI's ``getAllAssertionResults`` on every case in one Node process.

    ``cases`` are ``{"options": ci.assert options, "lhrs": [names of lhrs]}``; the answer
    has ``results`` (per case a list of LHCI assertion results, passed ones included, or
    ``{"error": ...}``), ``presets`` (LHCI's preset assertions) and ``budgets`` (the
    ``assertMatrix`` LHCI makes of each budget.json given).
    """
    root = install()
    node = install_engine(log=False).node
    done = subprocess.run(
        [str(node), str(HERE / "assert.cjs")],
        input=json.dumps({"lhrs": lhrs, "cases": cases, "budgets": budgets or []}),
        capture_output=True, text=True, check=False,
        env={**os.environ, "LHCI_PARITY_DIR": str(root)},
    )
    if done.returncode != 0:
        raise RuntimeError(f"assert.cjs failed: {done.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
