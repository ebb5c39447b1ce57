"""pytest-pagelab's retry of an engine failure, on the real engine: a run the engine fails
(here: Chromium dies mid-run) is measured once more and the second run is used; a second
failure is an error (EngineFailure), not a missed budget.

The failure is real, not mocked: a loopback page whose image is held back for the first N
requests; when one is held, the test kills the runner's Chromium with SIGKILL, so the engine
ends the run as ENGINE_CRASHED (an engine failure) and starts a new browser for the next
run, which gets the image at once and succeeds. (A crash rather than a run past its time
limit: the same engine failure to the plugin, without a wait of tens of seconds; the time
limit itself is tested in tests/test_engine.py.)
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# Imported out here: pytester's in-process runs drop the modules first imported inside
# them, and numpy cannot be loaded twice in one process.
import pandas  # noqa: F401
import pytest

import pagelab

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

PAGE = b"""<!doctype html><html><head><title>held image</title></head>
<body><h1>A page whose image comes late</h1><img src="/image.png" alt=""></body></html>"""
# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63600000000200010ee2e3c80000000049454e44ae426082"
)


class HeldImageSite:
    """Serves ``/`` and ``/image.png``; the first ``held`` image requests get no answer
    until the site closes, and call ``on_held`` first. Counts the requests of each path."""

    def __init__(self, held: int) -> None:
        self.held = held
        self.on_held: Callable[[], None] = lambda: None
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with site._lock:
                    count = site.counts.get(self.path, 0)
                    site.counts[self.path] = count + 1
                if self.path == "/image.png" and count < site.held:
                    site.on_held()
                    site._closing.wait()  # held: the page's load event never fires
                    return
                body, kind = {"/": (PAGE, "text/html"), "/image.png": (PNG, "image/png")}.get(
                    self.path, (b"", "text/plain"))
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def engine_cache() -> str:
    """The installed engine's cache dir, read before pytester points HOME elsewhere."""
    from pagelab._paths import cache_dir

    return str(cache_dir())


@pytest.fixture
def held_once() -> Iterator[HeldImageSite]:
    site = HeldImageSite(held=1)
    yield site
    site.close()


@pytest.fixture
def held_always() -> Iterator[HeldImageSite]:
    site = HeldImageSite(held=1000)
    yield site
    site.close()


def _check_budget(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                  engine_cache: str, site: HeldImageSite) -> pytest.RunResult:
    """One budget test of the site, one run, on the real engine; each held image request
    kills the runner's Chromium."""
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    # The plugin's runner is pagelab.LocalRunner(): the real engine, kept here to kill.
    runners: list[pagelab.LocalRunner] = []

    def local_runner(*args: Any, **kwargs: Any) -> pagelab.LocalRunner:
        runners.append(original(*args, **kwargs))
        return runners[-1]

    def kill_chromium() -> None:
        browser = runners[-1].engine._processes.browser
        assert browser is not None
        os.kill(browser.process.pid, signal.SIGKILL)

    original = pagelab.LocalRunner
    monkeypatch.setattr(pagelab, "LocalRunner", local_runner)
    site.on_held = kill_chromium
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.budget(largest_contentful_paint=30000)
        def test_page(perf):
            perf.measure("{site.url}", device="desktop")
    """)
    return pytester.runpytest("--pagelab-runs=1", "--pagelab-results=results.json")


@pytest.mark.timeout(1200)
def test_an_engine_failure_is_measured_once_more(
    pytester: pytest.Pytester, held_once: HeldImageSite, engine_cache: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = _check_budget(pytester, monkeypatch, engine_cache, held_once)
    result.assert_outcomes(passed=1)
    # Two runs of the page: the crashed one and the retry, which got its image.
    assert held_once.counts.get("/", 0) == 2, held_once.counts
    assert held_once.counts.get("/image.png", 0) == 2, held_once.counts
    results = json.loads((pytester.path / "results.json").read_text())
    (run,) = results["runs"]  # the retry replaced the failed run
    assert (run["status"], run["run"], run["engine_failure"]) == ("success", 0, False)
    assert all(check["passed"] for check in results["checks"])
    assert results.get("errors", []) == []


@pytest.mark.timeout(1200)
def test_two_engine_failures_are_an_engine_error(
    pytester: pytest.Pytester, held_always: HeldImageSite, engine_cache: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = _check_budget(pytester, monkeypatch, engine_cache, held_always)
    result.assert_outcomes(errors=1)
    message = (f"the engine failed twice on desktop/us {held_always.url}: ENGINE_CRASHED "
               "(not a budget miss; the page was not measured)")
    result.stdout.fnmatch_lines([f"*{message}*"])
    result.stdout.no_fnmatch_line("*Traceback*")
    assert held_always.counts.get("/", 0) == 2, held_always.counts
    results = json.loads((pytester.path / "results.json").read_text())
    assert [e["message"] for e in results["errors"]] == [message]
    assert results["checks"] == []


def _check_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                engine_cache: str, site: HeldImageSite, folder: Path) -> tuple[int, str, str]:
    """``pagelab check`` of a budget file naming the site, one run, on the real engine (in
    this process, so its runner is reachable); each held image request kills the
    runner's Chromium. Returns (exit status, stdout, stderr)."""
    from pagelab.cli import main

    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    monkeypatch.delenv("PAGELAB_API_URL", raising=False)
    # `pagelab check` opens its runner with pagelab.connect(): the real engine, kept here.
    runners: list[Any] = []
    original = pagelab.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        runners.append(original(*args, **kwargs))
        return runners[-1]

    def kill_chromium() -> None:
        browser = runners[-1].engine._processes.browser
        assert browser is not None
        os.kill(browser.process.pid, signal.SIGKILL)

    monkeypatch.setattr(pagelab, "connect", connect)
    site.on_held = kill_chromium
    budgets = folder / "budgets.yaml"
    budgets.write_text("devices: [desktop]\nruns: 1\nbudgets: {largest_contentful_paint: "
                       f"30000}}\npages: [{{url: '{site.url}'}}]\n", encoding="utf-8")
    capsys.readouterr()
    code = main(["check", str(budgets), "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.timeout(1800)
def test_pagelab_check_retries_an_engine_failure_as_pytest_does(
    pytester: pytest.Pytester, engine_cache: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    # Both faces measure through pagelab.budgets' pipeline: one crash is measured once
    # more and passes; two are an error (pytest: E; pagelab check: exit 2) with one message.
    once = HeldImageSite(held=1)
    try:
        code, out, err = _check_file(monkeypatch, capsys, engine_cache, once, tmp_path)
    finally:
        once.close()
    assert (code, err) == (0, ""), out + err
    assert once.counts.get("/", 0) == 2, once.counts  # the crashed run and its retry
    assert "page failed to load" not in out
    assert "1 check: 1 passed, 0 failed, 0 warned" in out, out

    always = HeldImageSite(held=1000)
    try:
        code, out, err = _check_file(monkeypatch, capsys, engine_cache, always, tmp_path)
    finally:
        always.close()
    message = (f"the engine failed twice on desktop/us {always.url}: ENGINE_CRASHED "
               "(not a budget miss; the page was not measured)")
    assert code == 2, out + err
    assert err == f"pagelab: error: {message}\n"
    assert always.counts.get("/", 0) == 2, always.counts

    # pytest, on a site that crashes the engine every time too: the same message.
    again = HeldImageSite(held=1000)
    try:
        result = _check_budget(pytester, monkeypatch, engine_cache, again)
    finally:
        again.close()
    result.assert_outcomes(errors=1)
    assert again.counts.get("/", 0) == 2, again.counts
    errors = json.loads((pytester.path / "results.json").read_text())["errors"]
    assert [e["message"] for e in errors] == [message.replace(always.url, again.url)]
