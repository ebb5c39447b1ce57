"""The README's and the docs' snippets run as tests (issue 28), parsed by Sybil.

Each fenced ```` ```python ```` block runs (``>>>`` blocks as doctests: the printed output
must match, whitespace normalised, ``...`` matching anything), and so does each ```` ```sh ````
block, in bash with ``set -euo pipefail``; ``<!-- invisible-code-block: python -->``
comments hold checks a reader does not need to see. One test per page: its blocks share a
namespace and run in order, from the repository root.

What a snippet needs is real and started here, once for the module (``docs_env``): the
bundled demo site and a ``pagelab serve`` app on loopback (its worker off, so created
Lighthouse tests stay queued; TTFB probes run), a key with credits, an empty data dir and a
scratch working directory holding ``runs.csv`` and ``results.json``, the recorded demo runs
of ``tests/data/`` at the demo site's address. Before a shell block runs, the demo site's
documented address ``http://127.0.0.1:8080`` and the API's ``http://127.0.0.1:8000`` are
replaced by the real ones and the outside host of the API examples, ``https://example.com/``,
by the demo site (tests never reach outside hosts); ``$API`` and ``$KEY`` are set as the
pages say.

A block that cannot run here says why in the page, just above it:
``<!-- skip: next "reason" -->``. Pages with a block that runs Lighthouse are marked
``engine``; the quickstarts' engine blocks are skipped here, as ``tests/test_wheel.py`` runs
them word for word from the installed wheel (one Lighthouse run of each, not two).
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import SkipTest

import pytest

from doc_pages import (
    API_ADDRESS,
    DEMO_ADDRESS,
    FENCE,
    QUICKSTARTS,
    console_session,
    fenced_blocks,
)
from docs_reference import REPO

sybil = pytest.importorskip("sybil", reason="the docs extra: pip install 'pagelab[docs]'")
from sybil import Example, Sybil  # noqa: E402
from sybil.example import NotEvaluated  # noqa: E402
from sybil.parsers.markdown import (  # noqa: E402
    ClearNamespaceParser,
    CodeBlockParser,
    PythonCodeBlockParser,
    SkipParser,
)

#: The outside host of the API examples (the tests put the demo site there instead).
OUTSIDE_PAGE = "https://example.com/"
#: Pages with a block that runs here and runs Lighthouse (none now: see the docstring).
ENGINE_PAGES: set[str] = set()
#: The issue's floor: at least this many snippets run (blocks and ``>>>`` examples).
MIN_SNIPPETS = 40


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

    def documented(self, output: str) -> str:
        """The servers of this session shown at their documented addresses."""
        return output.replace(self.demo_url, DEMO_ADDRESS).replace(self.api_url, API_ADDRESS)


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


@pytest.fixture(scope="module")
def docs_env() -> Iterator[DocsEnvironment]:
    sys.path.insert(0, str(REPO / "tests" / "service"))
    from live_server import LiveServer

    from pagelab.demo import DemoServer
    from pagelab.export import export
    from pagelab.frames import read_runs
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
            # runs.csv (docs/analysis.md): the recorded demo runs, at this demo's origin; the
            # same runs as results.json, where docs/quickstart-ci.md's pytest step (skipped
            # here: tests/test_wheel.py runs it) keeps the runs it measured.
            recorded = (REPO / "tests" / "data" / "runs-demo.csv").read_text(encoding="utf-8")
            runs = root / "work" / "runs.csv"
            runs.write_text(recorded.replace("http://demo.test", demo.url), encoding="utf-8")
            export(read_runs(runs), root / "work" / "results.json")
            yield DocsEnvironment(demo.url, api.base_url, key, root / "work", environ)


def _bash(env: DocsEnvironment, source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", source], cwd=env.workdir, env=env.environ,
        capture_output=True, text=True, timeout=600, check=False,
    )


def _failure(source: str, completed: subprocess.CompletedProcess[str]) -> str:
    return (f"exit status {completed.returncode}\n{source}\n--- stdout\n"
            f"{completed.stdout[-2000:]}\n--- stderr\n{completed.stderr[-2000:]}")


def run_shell(example: Example) -> str | None:
    """Run one ``sh`` block; a non-zero exit fails the snippet with its output."""
    env: DocsEnvironment = example.namespace["docs_env"]
    source = env.localize(example.parsed)
    completed = _bash(env, source)
    return _failure(source, completed) if completed.returncode != 0 else None


def run_console(example: Example) -> str | None:
    """Run a ``console`` block's commands; each must exit 0 and print what the page shows."""
    env: DocsEnvironment = example.namespace["docs_env"]
    checker = doctest.OutputChecker()
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    for command, expected in console_session(example.parsed):
        source = env.localize(command)
        completed = _bash(env, source)
        if completed.returncode != 0:
            return _failure(source, completed)
        printed = env.documented(completed.stdout)
        if not checker.check_output(expected, printed, flags):
            return f"$ {command}\n--- the page shows\n{expected}--- printed\n{printed}"
    return None


SYBIL = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS),
        CodeBlockParser(language="sh", evaluator=run_shell),
        CodeBlockParser(language="console", evaluator=run_console),
        SkipParser(),
        ClearNamespaceParser(),
    ],
    path=str(REPO),
)
PAGES = ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))]
#: pandas' display as wide as the pages show frames (restored after each page: the options
#: are global and other tests print frames too).
DISPLAY = {"display.width": 250, "display.max_columns": 40}


def _kind(example: Example) -> str:
    """``code`` (a block or a ``>>>`` example), ``skip`` (a skip directive) or ``other`` (an
    invisible check, a namespace clear)."""
    line = example.document.text.splitlines()[example.line - 1].strip()
    if line.startswith(("```", ">>>")):
        return "code"
    return "skip" if line.startswith("<!-- skip") else "other"


def snippets_that_run(page: str) -> int:
    """The page's code snippets its test runs: the skip directives are followed, nothing is
    run (a counting evaluator answers before the real ones)."""
    document = SYBIL.parse(REPO / page)
    count = 0

    def counter(example: Example) -> str | None:
        nonlocal count
        kind = _kind(example)
        if kind == "skip":
            raise NotEvaluated()  # the skip directive does its work
        count += kind == "code"
        return None

    document.push_evaluator(counter)
    for example in document.examples():
        try:
            example.evaluate()
        except SkipTest:
            continue
    return count


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.engine) if p in ENGINE_PAGES else p
             for p in PAGES])
def test_the_snippets_of_the_page_run(page: str, docs_env: DocsEnvironment,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    monkeypatch.chdir(REPO)  # the pages' Python reads tests/data/..., as from a checkout
    document = SYBIL.parse(REPO / page)
    document.namespace["docs_env"] = docs_env
    with pd.option_context(*[x for item in DISPLAY.items() for x in item]):
        try:
            for example in document.examples():
                try:
                    example.evaluate()
                except SkipTest:
                    continue
        finally:
            pyplot = sys.modules.get("matplotlib.pyplot")
            if pyplot is not None:  # the figures the page's plots drew
                pyplot.close("all")


def test_at_least_the_issues_number_of_snippets_run() -> None:
    counts = {page: snippets_that_run(page) for page in PAGES}
    assert sum(counts.values()) >= MIN_SNIPPETS, counts
    # The engine is among the snippets: the quickstarts' `pagelab run` lines, which
    # tests/test_wheel.py runs word for word.
    engine = [block.source for page in QUICKSTARTS
              for block in fenced_blocks((REPO / page).read_text(encoding="utf-8"))
              if block.language == "sh" and "pagelab run " in block.source]
    assert engine, "the engine is among the snippets"


def test_the_count_follows_skip_directives() -> None:
    skipped = snippets_that_run("docs/install.md")  # most of its blocks set a machine up
    text = (REPO / "docs/install.md").read_text(encoding="utf-8")
    blocks = text.count("```sh") + text.count("```python")
    assert 0 < skipped < blocks


ILLUSTRATIVE = re.compile(r"_Illustrative: \S.*\._")


def unmarked_outputs(text: str) -> list[str]:
    """The blocks of a page that break the output convention (module docstring), as
    ``line: problem``."""
    lines = text.splitlines()
    problems: list[str] = []
    opening: int | None = None
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if fence is None:
            continue
        if opening is not None:  # the closing fence
            opening = None
            continue
        opening = number
        language = fence.group(1)
        above = next((x.strip() for x in reversed(lines[:number - 1]) if x.strip()), "")
        body = lines[number] if number < len(lines) else ""
        if not language:
            problems.append(f"{number}: no language (console: checked output, output: "
                            "illustrative output, text: not an output)")
        elif language == "output" and not ILLUSTRATIVE.fullmatch(above):
            problems.append(f"{number}: an output block without its caption "
                            "'_Illustrative: why._' just above it")
        elif language == "console" and (above.startswith("<!-- skip")
                                        or not body.startswith("$ ")):
            problems.append(f"{number}: a console block that is not run "
                            "(it starts with '$ command' and is not skipped)")
    return problems


def test_every_printed_output_is_checked_or_marked() -> None:
    problems = {page: found for page in PAGES
                if (found := unmarked_outputs((REPO / page).read_text(encoding="utf-8")))}
    assert not problems, problems


def test_an_unmarked_output_is_found() -> None:
    page = ("Run it:\n\n```\n$ pagelab demo\n```\n\n```output\n42\n```\n\n"
            "_Illustrative: the engine._\n\n```output\n42\n```\n\n"
            "<!-- skip: next \"no\" -->\n```console\n$ true\n```\n\n```text\na -> b\n```\n")
    assert [problem.split(":")[0] for problem in unmarked_outputs(page)] == ["3", "7", "18"]


def test_a_console_block_is_split_into_commands_and_outputs() -> None:
    block = "$ echo a\na\n$ true\n$ printf 'b\\nc'\nb\nc\n"
    assert console_session(block) == [("echo a", "a\n"), ("true", "\n"),
                                       ("printf 'b\\nc'", "b\nc\n")]
