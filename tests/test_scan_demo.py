"""``pagelab scan`` and the demo store (issue 39): the store's sitemaps and templates, the
command's errors, and a real scan (engine) that ranks the slow product template first and
writes a report."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

from fixtures_http import closed_port
from pagelab._discovery import discover, group_templates
from pagelab.cli import main
from pagelab.demo import DemoServer
from pagelab.demo._store import STORE_PATHS

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    with DemoServer() as site:
        yield site.url


def test_the_store_is_found_through_its_sitemap_index_and_gzipped_sitemap(store: str) -> None:
    found = discover(f"{store}/store/")
    assert found.source == "sitemap"
    assert found.sitemaps == [f"{store}/store/sitemap.xml", f"{store}/store/sitemap-pages.xml",
                              f"{store}/store/sitemap-products.xml.gz"]
    assert found.pages == [store + path for path in STORE_PATHS]
    assert found.dropped == {"off_scope": 1}  # the site's home page, outside /store/
    assert sorted(set(group_templates(found.pages).values())) == [
        "/store", "/store/about", "/store/category/*", "/store/product/*"]
    products = httpx.get(f"{store}/store/sitemap-products.xml.gz")
    assert products.headers["content-type"] == "application/gzip"
    assert gzip.decompress(products.content).count(b"<loc>") == 12


def test_include_keeps_the_store_out_of_the_whole_site(store: str) -> None:
    found = discover(f"{store}/", include="/store/**", max_pages=50)
    assert found.pages == [store + path for path in STORE_PATHS]
    assert found.dropped == {"filtered": 1}  # the site's home page


@pytest.mark.parametrize("path", ["/store/product/unknown", "/store/category/<b>", "/store/x"])
def test_unknown_store_paths_are_404(store: str, path: str) -> None:
    response = httpx.get(store + path)
    assert response.status_code == 404
    assert "<b>" not in response.text or "text/plain" in response.headers["content-type"]


@pytest.mark.parametrize(("args", "message"), [
    (["--per-template", "0"], "--per-template: must be at least 1"),
    (["--max-pages", "0"], "--max-pages: must be at least 1"),
    (["--runs", "0"], "--runs: must be at least 1"),
    (["--out", "scan.txt"], "--out scan.txt: unknown suffix"),
    (["--include", "store/*"], "must start with '/'"),
])
def test_bad_options_give_one_line_and_exit_2(
        store: str, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", f"{store}/store/", "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_an_unreachable_site_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    assert main(["scan", url, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pagelab: error: start URL {url} cannot be reached")
    assert err.count("\n") == 1


@pytest.mark.engine
def test_a_scan_of_the_store_ranks_the_slow_product_template_first(
        store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, runs = tmp_path / "report.html", tmp_path / "runs.csv"
    status = main(["scan", f"{store}/store/", "--per-template", "1", "--runs", "1",
                   "--out", str(report), "--out", str(runs), "--no-progress"])
    out, err = capsys.readouterr()
    assert status == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [row[1] for row in rows if row[0] == "/store/product/*"] == ["12"]  # pages
    table = [row[0] for row in rows]
    assert table[0] == "/store/product/*"
    assert sorted(table) == ["/store", "/store/about", "/store/category/*", "/store/product/*"]
    assert "17 pages from the sitemap, 4 templates, 4 runs" in err
    page = report.read_text(encoding="utf-8")
    section = page[page.index('<h2 id="templates">'):]
    section = section[:section.index("</table>")]
    keys = [part.split('"', 1)[0] for part in section.split('<tr data-key="')[1:]]
    assert keys == table  # the report's templates, in the command's order (worst first)
    assert section.count("/report.html") >= 2 * 4  # each template: representative, its run
    frame = pd.read_csv(runs)
    assert len(frame) == 4
    assert (frame["status"] == "success").all()
    products = frame[frame["template"] == "/store/product/*"]
    assert products["url"].str.contains("/store/product/").all()
    assert set(frame["url"].str.rsplit("/", n=1).str[-1]) >= {"about"}
