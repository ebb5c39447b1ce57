"""The command line: one-line errors, exit codes, help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pagelab.cli import main


def _pagelab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "required: url"),
        (["run", "not-a-url"], "url: "),
        (["run", "ftp://a.test/"], "url: "),
        (["run", "http://127.0.0.1:9/", "--device", "nokia3310"], "device: "),
        (["run", "http://127.0.0.1:9/", "--location", "mars"], "location: "),
        (["run", "http://127.0.0.1:9/", "--config", "{bad"], "--config: not valid JSON"),
        (["run", "http://127.0.0.1:9/", "--config", "[1]"], "--config: must be a JSON object"),
        (["run", "http://127.0.0.1:9/", "--config", '{"connection": "6g"}'],
         "config.connection: "),
        (["ttfb", "http://127.0.0.1:9/", "--region", "mars"], "region: unknown TTFB region"),
        (["demo", "serve", "--port", "x"], "invalid int value"),
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


def test_doctor_reports_a_ready_engine() -> None:
    # `make test` runs `pagelab setup` first, so the engine is installed here.
    result = _pagelab("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lighthouse   13.5.0 (pinned 13.5.0)" in result.stdout
    assert result.stdout.strip().endswith("ready")


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
