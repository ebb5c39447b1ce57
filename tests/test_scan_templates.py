"""Whole-site scans, templates and sampling (issue 39), and the scan's results: the
``template`` column and the summary ranked worst first (over real recorded runs)."""

from __future__ import annotations

import pickle

import pytest

import pagelab
from pagelab._discovery import group_templates, sample_templates
from pagelab._readable import rank_worst_first
from pagelab.frames import to_reports
from recorded_runs import ORIGIN, load_runs


def urls(*paths: str) -> list[str]:
    return [f"http://shop.test{path}" for path in paths]


def templates_of(*paths: str, rule: object = None) -> list[str]:
    found = group_templates(urls(*paths), rule)  # type: ignore[arg-type]
    return [found[url] for url in urls(*paths)]


def test_slugs_that_vary_among_three_siblings_share_a_template() -> None:
    assert templates_of("/product/red-shoe", "/product/blue-hat", "/product/green-cap",
                        "/product/green-cap/reviews", "/product/red-shoe/reviews") == [
        "/product/*", "/product/*", "/product/*", "/product/*/reviews", "/product/*/reviews"]


def test_two_siblings_stay_apart_unless_they_look_like_ids() -> None:
    assert templates_of("/category/shoes", "/category/hats", "/p/123", "/p/456",
                        "/o/5f3a9c2e1b", "/o/0c1d2e3f4a", "/d/2024-05-01") == [
        "/category/shoes", "/category/hats", "/p/*", "/p/*", "/o/*", "/o/*", "/d/*"]


def test_the_roots_sections_are_not_merged_but_their_ids_are() -> None:
    assert templates_of("/", "/about", "/contact", "/help", "/2024", "/shop/", "/shop?page=2"
                        ) == ["/", "/about", "/contact", "/help", "/*", "/shop", "/shop"]


def test_a_slug_below_merged_paths_varies_a_repeated_name_does_not() -> None:
    assert templates_of("/blog/2024/05/hello", "/blog/2023/01/bye",
                        "/u/1/settings", "/u/2/settings") == [
        "/blog/*/*/*", "/blog/*/*/*", "/u/*/settings", "/u/*/settings"]


def test_a_section_beside_pages_is_not_merged_with_them() -> None:
    products = [f"/store/product/p{c}" for c in "abcd"]
    categories = [f"/store/category/{c}" for c in ("shoes", "hats", "bags")]
    assert templates_of("/store/about", *products, *categories) == [
        "/store/about", *["/store/product/*"] * 4, *["/store/category/*"] * 3]


def test_many_sections_whose_children_repeat_are_one_template() -> None:
    listings = [f"/category/{name}/{page}" for name in ("red", "blue", "wool")
                for page in ("1", "2", "3")]
    guides = [f"/docs/{name}/{page}" for name, pages in
              (("guide", "abc"), ("api", "def"), ("cli", "ghi")) for page in pages]
    assert set(templates_of(*listings)) == {"/category/*/*"}
    # Three sections, each with children of its own: three templates.
    assert set(templates_of(*guides)) == {"/docs/guide/*", "/docs/api/*", "/docs/cli/*"}


def test_the_rule_does_not_depend_on_the_order() -> None:
    paths = ["/product/a", "/product/b", "/product/c", "/blog/1/x", "/blog/2/y", "/about"]
    assert templates_of(*paths) == templates_of(*reversed(paths))[::-1]


def test_a_users_function_or_globs_name_the_templates() -> None:
    paths = ("/product/a", "/product/b", "/docs/intro", "/docs/api/x")
    assert templates_of(*paths, rule=["/docs/**"]) == [
        "/product/a", "/product/b", "/docs/**", "/docs/**"]
    by_function = templates_of(
        *paths, rule=lambda url: "product" if "/product/" in url else None)
    assert by_function == ["product", "product", "/docs/intro", "/docs/api/x"]
    with pytest.raises(pagelab.InvalidInputError, match="template: the function returned 3"):
        templates_of(*paths, rule=lambda url: 3)
    with pytest.raises(pagelab.InvalidInputError, match="template: expected"):
        templates_of(*paths, rule=[1])


def test_the_sample_is_seeded_and_spread_over_the_template() -> None:
    pages = {url: "/p/*" for url in urls(*(f"/p/{i:03d}" for i in range(90)))}
    pages.update({url: "/" for url in urls("/")})
    sample = sample_templates(pages, 3, seed=7)
    assert sample == sample_templates(dict(reversed(pages.items())), 3, seed=7)
    assert sample["/"] == urls("/")
    chosen = [int(url.rsplit("/", 1)[1]) for url in sample["/p/*"]]
    assert [n // 30 for n in chosen] == [0, 1, 2]  # one from each third
    seeds = {tuple(sample_templates(pages, 3, seed=s)["/p/*"]) for s in range(10)}
    assert len(seeds) > 1  # the seed matters
    with pytest.raises(pagelab.InvalidInputError, match="per_template"):
        sample_templates(pages, 0)


def test_scan_results_have_a_template_column_and_rank_templates_worst_first() -> None:
    frame = load_runs()  # real runs: 10 of /fast, 5 of /heavy
    reports = to_reports(frame)
    templates = {f"{ORIGIN}/fast": "/fast", f"{ORIGIN}/heavy": "/heavy"}
    results = pagelab.ScanResults(reports, list(range(len(reports))), templates=templates)

    columns = list(results.frame.columns)
    assert columns[columns.index("url") + 1] == "template"
    assert set(results.frame["template"]) == {"/fast", "/heavy"}
    summary = results.summary(by="template")
    assert isinstance(summary, pagelab.Summary)
    assert list(summary["template"]) == ["/heavy", "/fast"]
    assert summary["performance_score"].iloc[0] < summary["performance_score"].iloc[1]
    # Grouped otherwise, the summary is measure's, in cell order.
    assert list(results.summary(by="url")["url"]) == [f"{ORIGIN}/fast", f"{ORIGIN}/heavy"]
    assert repr(pagelab.ScanResults) == "<class 'pagelab.ScanResults'>"
    assert pickle.loads(pickle.dumps(pagelab.DiscoveryError("x"))).args == ("x",)


def test_ranking_puts_a_template_without_values_first() -> None:
    import pandas as pd

    table = pd.DataFrame({"template": ["/a", "/b", "/c", "/d"],
                          "performance_score": [90.0, None, 90.0, 40.0],
                          "largest_contentful_paint": [1000.0, None, 3000.0, 800.0]})
    assert list(rank_worst_first(table)["template"]) == ["/b", "/d", "/c", "/a"]
