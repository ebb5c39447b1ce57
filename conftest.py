"""The README's and the docs' snippets, collected as tests by Sybil (issue 28).

Each fenced ```` ```python ```` block runs (``>>>`` blocks as doctests: the printed output
must match, whitespace normalised, ``...`` matching anything), and so does each ```` ```sh ````
block, in bash with ``set -euo pipefail``. Blocks of one page share a namespace, in order.

What a snippet needs is real and started here, once per session (``docs_env``): the bundled
demo site and a ``pagelab serve`` app on loopback (its worker off, so created Lighthouse tests
stay queued; TTFB probes run), a key with credits, an empty data dir and a scratch working
directory holding ``runs.csv``, the recorded demo runs of ``tests/data/`` at the demo
site's address. Before a shell block runs, the demo site's documented address
``http://127.0.0.1:8080`` and the API's ``http://127.0.0.1:8000`` are replaced by the real
ones and the outside host of the API examples, ``https://example.com/``, by the demo site
(tests never reach outside hosts); ``$API`` and ``$KEY`` are set as the pages say.

A block that cannot run here says why in the page, just above it:
``<!-- skip: next "reason" -->``. Blocks that run Lighthouse carry the ``engine`` marker.
"""

from __future__ import annotations

import doctest
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    from sybil import Example, Sybil
    from sybil.parsers.markdown import (
        ClearNamespaceParser,
        CodeBlockParser,
        PythonCodeBlockParser,
        SkipParser,
    )
except ImportError:  # the docs extra is not installed: the pages are not collected
    Sybil = None  # type: ignore[assignment,misc]

REPO = Path(__file__).resolve().parent
#: Where the documented commands point, and what the tests put there instead.
DEMO_ADDRESS = "http://127.0.0.1:8080"
API_ADDRESS = "http://127.0.0.1:8000"
OUTSIDE_PAGE = "https://example.com/"
#: Shell blocks that run Lighthouse (``engine`` marker): page -> first line of the block.
ENGINE_SNIPPETS = {("docs/quickstart.md", "pagelab run http://127.0.0.1:8080/heavy")}


@dataclass
class DocsEnvironment:
    """What the snippets run against: real servers on loopback, a scratch directory."""

    demo_url: str
    api_url: str
    key: str
    workdir: Path
    environ: dict[str, str] = field(default_factory=dict)

    def localize(self, source: str) -> str:
        """The documented addresses replaced by the servers of this session."""
        return (source.replace(DEMO_ADDRESS, self.demo_url)
                .replace(API_ADDRESS, self.api_url)
                .replace(OUTSIDE_PAGE, f"{self.demo_url}/fast"))


def _commands(bin_dir: Path) -> None:
    """``pagelab``, ``python`` and ``pytest`` on PATH run this checkout with this
    interpreter; ``curl`` fails on an HTTP error (the pages use ``curl -s``, which would not)."""
    python = shlex.quote(sys.executable)
    scripts = {
        "pagelab": f'exec {python} -m pagelab "$@"',
        "python": f'exec {python} "$@"',
        "pytest": f'exec {python} -m pytest "$@"',
        "curl": 'exec /usr/bin/curl --fail-with-body "$@"',
    }
    for name, line in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)


@pytest.fixture(scope="session")
def docs_env() -> Iterator[DocsEnvironment]:
    sys.path.insert(0, str(REPO / "tests" / "service"))
    from live_server import LiveServer

    from pagelab.demo import DemoServer
    from pagelab.service import Settings

    with tempfile.TemporaryDirectory(prefix="pagelab-docs-") as tmp:
        root = Path(tmp)
        (root / "bin").mkdir()
        (root / "work").mkdir()
        _commands(root / "bin")
        settings = Settings(data_dir=root / "api", worker=False,
                            allowed_targets=("127.0.0.1/32",))
        with DemoServer(port=0) as demo, LiveServer(settings) as api:
            key = api.key(lighthouse=100, ttfb=100)
            environ = {
                **os.environ,
                "PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONPATH": os.pathsep.join(
                    [str(REPO / "src"), str(REPO / "pytest_plugin"),
                     os.environ.get("PYTHONPATH", "")]),
                "PAGELAB_DATA_DIR": str(root / "data"),
                "API": api.base_url,
                "KEY": key,
                # The fleet's worker keys derive from it (docs/scale-out.md); a test value.
                "PAGELAB_FLEET_SECRET": "docs-snippets-fleet-secret-0123456789",
            }
            for name in ("PAGELAB_API_URL", "PAGELAB_API_KEY"):
                environ.pop(name, None)
            # runs.csv (docs/quickstart-ci.md): the recorded demo runs, at this demo's origin.
            recorded = (REPO / "tests" / "data" / "runs-demo.csv").read_text(encoding="utf-8")
            (root / "work" / "runs.csv").write_text(
                recorded.replace("http://demo.test", demo.url), encoding="utf-8")
            yield DocsEnvironment(demo.url, api.base_url, key, root / "work", environ)


def run_shell(example: Example) -> str | None:
    """Run one ``sh`` block; a non-zero exit fails the snippet with its output."""
    env: DocsEnvironment = example.namespace["docs_env"]
    source = env.localize(example.parsed)
    completed = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", source], cwd=env.workdir, env=env.environ,
        capture_output=True, text=True, timeout=600, check=False,
    )
    if completed.returncode != 0:
        return (f"exit status {completed.returncode}\n{source}\n--- stdout\n"
                f"{completed.stdout[-2000:]}\n--- stderr\n{completed.stderr[-2000:]}")
    return None


#: pandas' display as wide as the pages show frames (set per page, then restored: the
#: options are global and other tests print frames too).
DISPLAY = {"display.width": 250, "display.max_columns": 40}


def _setup(namespace: dict[str, Any]) -> None:
    import pandas as pd

    namespace["_pandas_display"] = {name: pd.get_option(name) for name in DISPLAY}
    for name, value in DISPLAY.items():
        pd.set_option(name, value)


def _teardown(namespace: dict[str, Any]) -> None:
    import pandas as pd

    for name, value in namespace.get("_pandas_display", {}).items():
        pd.set_option(name, value)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # the figures the page's plots drew
        pyplot.close("all")


if Sybil is not None:
    pytest_collect_file = Sybil(
        parsers=[
            PythonCodeBlockParser(
                doctest_optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS),
            CodeBlockParser(language="sh", evaluator=run_shell),
            SkipParser(),
            ClearNamespaceParser(),
        ],
        patterns=["README.md", "docs/*.md"],
        excludes=["*/README.md"],
        fixtures=["docs_env"],
        setup=_setup,
        teardown=_teardown,
    ).pytest()


def pytest_itemcollected(item: pytest.Item) -> None:
    """The snippets that run Lighthouse get the ``engine`` marker as they are collected, so
    every later hook (``-m``, the xdist groups of tests/conftest.py) sees it."""
    example = getattr(item, "example", None)
    if example is None:
        return
    page = Path(example.path).relative_to(REPO).as_posix()
    source = str(example.parsed).strip()
    first = source.splitlines()[0] if source else ""
    if any(page == p and first.startswith(line) for p, line in ENGINE_SNIPPETS):
        item.add_marker(pytest.mark.engine)
