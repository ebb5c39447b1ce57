"""Optional extras: a missing one fails with the command that installs it.

A child process hides the module (``sys.modules[name] = None`` makes its import fail), as a
lean ``pip install pagelab`` would.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pagelab import MissingDependencyError
from pagelab._extras import require


def _without(module: str, code: str) -> subprocess.CompletedProcess[str]:
    script = f"import sys\nsys.modules[{module!r}] = None\n{code}"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)


def test_require_names_the_extra() -> None:
    assert require("json", "notebook").__name__ == "json"
    with pytest.raises(MissingDependencyError, match=r"pip install 'pagelab\[server\]'"):
        require("no_such_module_here", "server")
    assert issubclass(MissingDependencyError, ImportError)


@pytest.mark.parametrize(
    ("module", "argv", "extra"),
    [
        ("fastapi", ["serve", "--port", "0"], "server"),
        ("uvicorn", ["serve", "--port", "0"], "server"),
    ],
)
def test_cli_without_an_extra_says_how_to_install_it(module: str, argv: list[str],
                                                     extra: str) -> None:
    result = _without(module, f"from pagelab.cli import main\nsys.exit(main({argv!r}))")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"pip install 'pagelab[{extra}]'" in lines[0]


def test_core_analysis_needs_no_extra() -> None:
    # measure, frames and stats are the CI user's: they load without the notebook extra.
    result = _without("matplotlib", "import pagelab, pagelab.stats\n"
                      "pagelab.measure, pagelab.Results, pagelab.frames.to_frame\n"
                      "assert 'ipywidgets' not in sys.modules\n")
    assert result.returncode == 0, result.stderr


def test_demo_site_needs_no_image_library() -> None:
    # The hero image is a shipped file: without Pillow the demo site serves it whole.
    result = _without("PIL", (
        "import urllib.request\n"
        "from pagelab.demo import DemoServer\n"
        "opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
        "with DemoServer() as site:\n"
        "    body = opener.open(site.url + '/static/hero.jpg').read()\n"
        "assert body[:3] == b'\\xff\\xd8\\xff' and len(body) == 1_345_230, len(body)\n"
        "assert 'PIL' not in sys.modules or sys.modules['PIL'] is None\n"
    ))
    assert result.returncode == 0, result.stderr
