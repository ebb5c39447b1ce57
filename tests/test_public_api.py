"""The public API is deliberate: this test pins it."""

from __future__ import annotations

import pagelab
import pagelab.frames
import pagelab.models
import pagelab.runners
import pagelab.stats


def test_public_names_are_sorted_and_exist() -> None:
    for module in (pagelab, pagelab.models, pagelab.runners, pagelab.frames,
                   pagelab.stats):
        names = module.__all__
        # isort style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions.
        assert names == sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper()
                                                     else 2, n)), module.__name__
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_top_level_api() -> None:
    assert set(pagelab.__all__) >= {
        "APIError", "BatchReport", "BatchType", "Device", "InvalidInputError",
        "LighthouseConfig", "LocalRunner", "Location", "Metrics", "NotFoundError",
        "PagelabError", "Runner", "TTFBResult", "TestReport", "__version__", "connect",
        "Summary", "Comparison",
    }
    assert pagelab.__version__ == "0.1.0"


def test_exceptions_share_one_root() -> None:
    for name in pagelab.__all__:
        obj = getattr(pagelab, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, pagelab.PagelabError), name


def test_connect_picks_the_local_runner_without_api_settings() -> None:
    runner = pagelab.connect()
    assert isinstance(runner, pagelab.LocalRunner)
    assert isinstance(runner, pagelab.Runner)


def test_cli_parser_and_server_do_not_load_the_analysis_stack() -> None:
    # `pagelab serve` and every CLI start pay only for what they use: pandas, matplotlib,
    # scipy and ipywidgets load when an analysis runs, not at import.
    import subprocess
    import sys

    code = (
        "import sys, pagelab\n"
        "from pagelab.cli._main import build_parser\n"
        "build_parser()\n"
        "import pagelab.service\n"
        "heavy = {'pandas', 'matplotlib', 'scipy', 'ipywidgets'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
