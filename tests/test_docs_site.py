"""The documentation site builds with ``mkdocs build --strict`` (no broken link, anchor or
reference) and its generated API reference covers every public name."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs_reference import REPO, load

pytest.importorskip("mkdocs", reason="the docs extra: pip install 'pagelab[docs]'")
pytest.importorskip("mkdocstrings_handlers.python")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=REPO, capture_output=True, text=True, env=env, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return out


def test_every_nav_page_is_built(site: Path) -> None:
    for page in ("install", "quickstart", "quickstart-ci", "quickstart-server", "concepts",
                 "troubleshooting", "benchmarks", "changelog", "versioning", "reference/cli",
                 "reference/configuration",
                 "reference/error-codes", "reference/http", "reference/api"):
        assert (site / page / "index.html").is_file(), page


def test_the_api_reference_documents_every_public_name(site: Path) -> None:
    reference = load()
    missing = []
    for module, names in reference.public_modules().items():
        page = site / "reference" / "api" / module / "index.html"
        ids = set(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))
        missing += [f"{module}.{name}" for name in reference._documented_members(module, names)
                    if f"{module}.{name}" not in ids]
    assert not missing


def test_the_changelog_page_is_the_changelog(site: Path) -> None:
    html = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "Unreleased" in html
    assert "--8&lt;--" not in html


def test_links_outside_the_docs_are_checked() -> None:
    reference = load()
    docs = REPO / "docs"
    shown = reference.unlink_outside("[the notebook](../notebooks/quickstart.ipynb#x)", docs)
    assert shown == "the notebook (`notebooks/quickstart.ipynb`)"
    with pytest.raises(FileNotFoundError, match=r"no-such\.ipynb"):
        reference.unlink_outside("[gone](../notebooks/no-such.ipynb)", docs)


def test_the_api_reference_shows_no_raw_sphinx_role(site: Path) -> None:
    raw = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):<code>")
    pages = sorted((site / "reference" / "api").glob("*/index.html"))
    assert pages
    shown = [page.parent.name for page in pages if raw.search(page.read_text(encoding="utf-8"))]
    assert not shown


def test_sphinx_roles_become_inline_code() -> None:
    spec = importlib.util.spec_from_file_location(
        "pagelab_docs_griffe_roles", REPO / "docs" / "_scripts" / "griffe_roles.py")
    assert spec is not None
    assert spec.loader is not None
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    assert roles.plain_roles(":func:`pagelab.measure` and :class:`~pagelab.Results`") == \
        "`pagelab.measure` and `Results`"
    assert roles.plain_roles(":py:meth:`!Runner.get`, ``literal``") == "`Runner.get`, ``literal``"
