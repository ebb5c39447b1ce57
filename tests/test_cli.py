"""The command line: one-line errors, exit codes, help."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagelab.cli import main
from pagelab.cli._main import build_parser
from quiet_windows import QUICK_WINDOW_MS

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")


def _pagelab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "required: url"),
        (["run", "not-a-url"], "urls[0]: must be an absolute"),
        (["run", "ftp://a.test/"], "urls[0]: must be an absolute"),
        (["run", "http://127.0.0.1:9/", "--devices", "nokia3310"], "devices[0]: unknown"),
        (["run", "http://127.0.0.1:9/", "--locations", "us,mars"], "locations[1]: unknown"),
        (["run", "http://127.0.0.1:9/", "--dev", "mobile"], "unrecognized arguments: --dev"),
        (["batch", "http://127.0.0.1:9/", "--loc", "us"],
         "unrecognized arguments: --loc"),
        (["check", "budgets.yaml", "--aggreg", "mean"], "unrecognized arguments: --aggreg"),
        (["run", "http://127.0.0.1:9/", "--config", "{bad"], "--config: not valid JSON"),
        (["run", "http://127.0.0.1:9/", "--config", "[1]"], "--config: must be a JSON object"),
        (["run", "http://127.0.0.1:9/", "--config", '{"connection": "6g"}'],
         "config.connection: "),
        (["ttfb", "http://127.0.0.1:9/", "--region", "mars"], "region: unknown TTFB region"),
        (["demo", "serve", "--port", "x"], "invalid int value"),
        (["doctor", "--calibrate", "--runs", "1"], "expected a number of runs of at least 2"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _pagelab(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pagelab: error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in ("setup", "doctor", "run", "ttfb", "demo"):
        assert command in out


def test_doctor_reports_a_ready_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    # `make test` runs `pagelab setup` first, so the engine is installed here.
    result = _pagelab("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lighthouse    13.5.0 (pinned 13.5.0)" in result.stdout
    # This module's window (quick_navigation):
    assert f"quiet window  {QUICK_WINDOW_MS} ms (PAGELAB_QUIET_WINDOW_MS)" in result.stdout
    assert result.stdout.strip().endswith("ready")
    monkeypatch.setenv("PAGELAB_QUIET_WINDOW_MS", "soon")
    bad = _pagelab("doctor")
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("pagelab: error: PAGELAB_QUIET_WINDOW_MS: expected a number, "
                                  "got 'soon'")


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _subparsers(sub)


def test_every_command_has_help_and_no_abbreviations(capsys: pytest.CaptureFixture[str]) -> None:
    parsers = list(_subparsers(build_parser()))
    assert len(parsers) > 10
    for parser in parsers:
        assert parser.allow_abbrev is False, parser.prog
        parser.format_help()  # %-formatting of every help string: a stray % would raise


def test_shared_options_are_spelled_alike() -> None:
    # One vocabulary: the same option means the same thing in every command that has it.
    commands = {p.prog.split()[-1]: p for p in _subparsers(build_parser())}
    flags = {name: {o for a in commands[name]._actions for o in a.option_strings
                    if a.help != argparse.SUPPRESS} for name in ("run", "batch", "check")}
    assert {"--devices", "--locations", "--connections", "--no-progress"} <= flags["run"]
    assert {"--devices", "--locations", "--connections", "--runs", "--aggregation",
            "--no-progress"} <= flags["batch"]
    assert {"--runs", "--aggregation", "--replay", "--no-progress"} <= flags["check"]


def test_old_spellings_still_work_with_a_note() -> None:
    result = _pagelab("batch", "http://127.0.0.1:9/", "--agg", "mode")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "pagelab: --agg is deprecated; use --aggregation",
        "pagelab: error: --aggregation: unknown 'mode' (valid: median, mean, p75, p90, "
        "min, max, representative)",
    ]
    result = _pagelab("run", "http://127.0.0.1:9/", "--device", "nokia3310")
    assert result.stderr.splitlines()[0] == "pagelab: --device is deprecated; use --devices"
    assert "devices[0]: unknown 'nokia3310'" in result.stderr


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # `pagelab ... | head`: the reader is gone before pagelab writes; no traceback.
    with subprocess.Popen([sys.executable, "-m", "pagelab", "examples", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=120) == 141
    assert stderr == ""
    assert (tmp_path / "quickstart.ipynb").exists()


def _refused_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def test_the_cli_reference_states_the_exit_statuses() -> None:
    from docs_reference import load
    from pagelab.cli._options import EXIT_STATUSES

    page = load().cli_page()
    assert "## Exit status" in page
    for status in (0, 1, 2, 130):
        assert f"| {status} | " in page
    assert "a run failed" in EXIT_STATUSES[1]


def test_ttfb_exits_1_when_a_probe_fails() -> None:
    # Nothing listens: every location's probe fails with CONNECTION_REFUSED.
    result = _pagelab("ttfb", _refused_url(), "--region", "north-america")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "CONNECTION_REFUSED" in result.stdout


@pytest.mark.engine
def test_run_exits_1_when_the_page_fails_to_load() -> None:
    result = _pagelab("run", _refused_url(), "--devices", "desktop", "--no-progress")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("failed "), result.stdout
    assert re.search(r"error (CHROME_INTERSTITIAL_ERROR|FAILED_DOCUMENT_REQUEST): ",
                     result.stdout), result.stdout
