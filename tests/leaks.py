"""Browsers that outlive the process that started them, found while the suite runs.

The engine starts Chromium with a parent-death signal, so it ends with the Python process
that started it. Once, a full run of the suite left one behind (its launcher gone, 75 % of
a core for the rest of the run), which made later engine tests slow and noisy. Where it
came from is unknown. This plugin looks after every test (a process list, about 5 ms): a
Chromium whose profile (``--user-data-dir``, or crashpad's ``--database``) names a
process that has ended is a suspect; seen again, by any worker, at least :data:`GRACE_S`
seconds later it is a leak, as a browser shutting down is gone by then. A leak is killed,
so the rest of the run is measured on a quiet machine, and named at the end of the
terminal summary with the tests each worker was running when it was first seen. Not a
test module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from processes import running, still_running

#: Seconds a suspect must stay before it counts as a leak.
GRACE_S = 5.0
#: The directory the controller and its workers share (set by the first to configure).
_SHARED_ENV = "PAGELAB_SUITE_LEAKS_DIR"
#: A profile's name carries the PID of the Python that made it (engine/_sandbox.py).
_PROFILE = re.compile(r"--(?:user-data-dir|database)=\S*?pagelab-chromium-(\d+)-")


def _orphans() -> dict[int, tuple[int, str]]:
    """Chromium processes whose launcher has ended: pid -> (launcher pid, process type)."""
    found: dict[int, tuple[int, str]] = {}
    for process in psutil.process_iter(["name", "cmdline"]):
        name = process.info["name"] or ""
        if "chrom" not in name:
            continue
        command = " ".join(process.info["cmdline"] or ())
        match = _PROFILE.search(command)
        if match is None or running(int(match.group(1))):
            continue
        kind = re.search(r"--type=(\S+)", command)
        found[process.pid] = (int(match.group(1)),
                              kind.group(1) if kind else name)
    return found


class LeakedBrowsers:
    """Registered by tests/conftest.py on the controller and on each xdist worker."""

    def __init__(self, config: pytest.Config) -> None:
        if _SHARED_ENV not in os.environ:  # the controller (or a run without xdist)
            os.environ[_SHARED_ENV] = tempfile.mkdtemp(prefix="pagelab-suite-leaks-")
        self.shared = Path(os.environ[_SHARED_ENV])
        self.worker = str(getattr(config, "workerinput", {}).get("workerid", "main"))
        self.controller = not hasattr(config, "workerinput")

    def _running_tests(self) -> dict[str, str]:
        tests: dict[str, str] = {}
        for path in self.shared.glob("*.current"):
            try:
                tests[path.stem] = path.read_text(encoding="utf-8")
            except OSError:
                continue
        return tests

    def _look(self) -> None:
        for pid, (launcher, kind) in _orphans().items():
            first, tests = self._first_seen(pid)
            if time.time() - first >= GRACE_S:
                self._kill(pid, launcher, kind, tests)

    def _first_seen(self, pid: int) -> tuple[float, dict[str, str]]:
        """When a suspect was first seen, by any worker, and the tests running then."""
        path = self.shared / f"suspect-{pid}.json"
        try:
            with path.open("x", encoding="utf-8") as out:  # the first to see it writes
                seen = {"at": time.time(), "tests": self._running_tests()}
                json.dump(seen, out)
        except FileExistsError:
            try:
                seen = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # being written: seen just now
                return time.time(), {}
        return float(seen["at"]), dict(seen["tests"])

    def _kill(self, pid: int, launcher: int, kind: str, tests: dict[str, str]) -> None:
        try:
            process = psutil.Process(pid)
            age = time.time() - process.create_time()
            process.kill()
        except psutil.Error:
            return  # ended meanwhile, or another worker killed it
        record = {"pid": pid, "type": kind, "launcher": launcher, "age_s": round(age),
                  "found_by": self.worker, "tests": tests}
        with (self.shared / "leaks.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        current = self.shared / f"{self.worker}.current"
        current.write_text(item.nodeid, encoding="utf-8")
        try:
            return (yield)
        finally:
            self._look()  # while this test is still named as running
            current.unlink(missing_ok=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.controller:
            shutil.rmtree(self.shared, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.controller:
            return
        # The workers have ended: their own browsers end with them (give them the grace).
        left = set(still_running(list(_orphans()), timeout=GRACE_S))
        for pid, (launcher, kind) in _orphans().items():
            if pid in left:
                self._kill(pid, launcher, kind, self._first_seen(pid)[1])
        leaks = self.shared / "leaks.jsonl"
        if not leaks.exists():
            return
        by_launcher: dict[int, list[dict[str, Any]]] = {}
        for line in leaks.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            by_launcher.setdefault(record["launcher"], []).append(record)
        terminalreporter.section("Chromium left running (killed)", yellow=True)
        for launcher, records in by_launcher.items():
            kinds = Counter(str(r["type"]) for r in records)
            first = max(records, key=lambda r: int(r["age_s"]))
            tests = "; ".join(f"{worker}: {test}" for worker, test in first["tests"].items())
            terminalreporter.line(
                f"the Chromium of ended PID {launcher} "
                f"({', '.join(f'{n} {kind}' for kind, n in kinds.items())}), "
                f"{first['age_s']} s old, found by {first['found_by']}; running then: "
                f"{tests or 'no test'}")
