"""A real JupyterLab on loopback, driven by Debian's Chromium through Playwright.

Nothing here downloads a browser: Playwright launches ``/usr/bin/chromium`` by path (its
own ``playwright install`` is never run). The server gets a free loopback port, a random
token, a temporary root directory and no browser of its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
_START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class JupyterLab:
    """``jupyter lab`` as a child process serving ``root`` on ``http://127.0.0.1:port``."""

    def __init__(self, root: Path, log_path: Path) -> None:
        self.root = root
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> JupyterLab:
        jupyter = Path(sys.executable).with_name("jupyter")
        command = [
            str(jupyter), "lab", "--no-browser",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0", f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
            # The browser test reaches the app's command registry (run all cells).
            "--LabApp.expose_app_in_browser=True",
            # Loopback only: no update check and no news feed.
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=None",
            "--LabApp.extension_manager=readonly",
        ]
        if os.geteuid() == 0:  # CI runs as root
            command.append("--allow-root")
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(self.root / ".jupyter-config"),
               "JUPYTERLAB_SETTINGS_DIR": str(self.root / ".jupyterlab-settings"),
               "JUPYTERLAB_WORKSPACES_DIR": str(self.root / ".jupyterlab-workspaces"),
               "JUPYTER_RUNTIME_DIR": str(self.root / ".jupyter-runtime")}
        self._write_settings()
        # The child keeps its own copy of the log's descriptor: ours is closed at once.
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {self.log_path.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                response = httpx.get(f"{self.url}/api/status", params={"token": self.token},
                                     timeout=2)
                if response.status_code == 200:
                    return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"jupyter lab did not start: {self.log_path.read_text()[-2000:]}")

    def _write_settings(self) -> None:
        settings = self.root / ".jupyterlab-settings" / "@jupyterlab"
        for plugin, text in (
            # No "get notified about news?" toast over the notebook in screenshots.
            ("apputils-extension/notification",
             '{"fetchNews": "false", "checkForUpdates": false}'),
            # The notebook's own kernel starts without a "Select Kernel" dialog.
            ("notebook-extension/tracker", '{"autoStartDefaultKernel": true}'),
        ):
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"

    def stop(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        # The server's own group: its kernels go with it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Debian Chromium under Playwright."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: `pagelab setup` installs it")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()


def execute_command(page: Page, command: str) -> None:
    """Run one of JupyterLab's commands (``notebook:run-all-cells``...)."""
    # Not awaited: a run command's promise settles only when its cells have run.
    page.evaluate("(command) => { window.jupyterapp.commands.execute(command); }", command)


def run_all_cells(page: Page) -> None:
    """Run every cell of the open notebook."""
    execute_command(page, "notebook:run-all-cells")


def wait_for_kernel_idle(page: Page, timeout_ms: float) -> None:
    """Wait until the notebook's kernel has started and is idle."""
    page.wait_for_function(
        "() => { const name = document.querySelector('.jp-Toolbar-kernelName');"
        " const s = document.querySelector('.jp-Notebook-ExecutionIndicator');"
        " return name && !name.textContent.includes('No Kernel') && s &&"
        " s.getAttribute('data-status') === 'idle'; }",
        timeout=timeout_ms,
    )


def wait_for_output(page: Page, text: str, timeout_ms: float) -> None:
    """Wait until a cell's output (not its source) shows ``text``."""
    page.locator(".jp-OutputArea-output", has_text=text).first.wait_for(timeout=timeout_ms)
