"""pagelab's Lighthouse CI assertions against Lighthouse CI's own ``assertions.js``.

Every case is one ``ci.assert`` config over one set of real LHRs (tests/data, and variants
derived from them: scaled metric values, set scores, nulled scores, errored and removed
audits, a second URL, desktop runs, user timings, resource sizes). ``@lhci/utils`` 0.15.1
(pinned by tests/lhci/package-lock.json, ``npm ci`` into the cache) evaluates all cases in
one Node process; each test compares one case, result by result: pass/fail, level, operator,
expected, aggregated value, the values of every run and the message.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lhci_parity import lhci_verdicts
from pagelab._exceptions import InvalidInputError
from pagelab.budgets._lhci import (
    assert_lhrs,
    budget_json_to_assertions,
    lhci_data,
    validate_options,
)

DATA = Path(__file__).parent / "data"
LHR = dict[str, Any]


def _load(name: str) -> LHR:
    lhr: LHR = json.loads((DATA / name).read_text())
    for heavy in ("i18n", "fullPageScreenshot", "timing"):
        lhr.pop(heavy, None)
    return lhr


MOBILE = _load("lhr-success-shift-mobile.json")
DESKTOP = _load("lhr-success-heavy-desktop.json")
FAILED = _load("lhr-failed-connection-refused.json")
ALL_CATEGORIES = sorted(DATA.glob("lhr-all-*.json"))
METRICS = [k for k, v in MOBILE["audits"].items()
           if v.get("scoreDisplayMode") == "numeric" and not k.endswith("-insight")]
METHODS = ["median", "optimistic", "pessimistic", "median-run"]

# --- LHR variants -----------------------------------------------------------------------


def scaled(lhr: LHR, factor: float) -> LHR:
    """Every metric's numericValue times ``factor`` (the scores left as recorded)."""
    out = copy.deepcopy(lhr)
    for audit in METRICS:
        if isinstance(out["audits"].get(audit, {}).get("numericValue"), int | float):
            out["audits"][audit]["numericValue"] *= factor
    return out


def scored(lhr: LHR, score: float | None, category: str = "performance") -> LHR:
    out = copy.deepcopy(lhr)
    out["categories"][category]["score"] = score
    return out


def errored(lhr: LHR, audits: list[str]) -> LHR:
    """The audits errored, as Lighthouse writes an audit that threw."""
    out = copy.deepcopy(lhr)
    for audit in audits:
        entry = out["audits"][audit]
        entry.update(score=None, scoreDisplayMode="error", errorMessage="NO_LCP")
        entry.pop("numericValue", None)
        entry.pop("details", None)
    return out


def nulled(lhr: LHR, audits: list[str]) -> LHR:
    out = copy.deepcopy(lhr)
    for audit in audits:
        out["audits"][audit]["score"] = None
        out["audits"][audit]["numericValue"] = None
    return out


def removed(lhr: LHR, audits: list[str]) -> LHR:
    out = copy.deepcopy(lhr)
    for audit in audits:
        del out["audits"][audit]
    return out


def with_timings(lhr: LHR, hero: float, measure: float | None) -> LHR:
    out = copy.deepcopy(lhr)
    items: list[dict[str, Any]] = [{"name": "hero:loaded", "timingType": "Mark",
                                    "startTime": hero}]
    if measure is not None:
        items.append({"name": "appBoot", "timingType": "Measure", "startTime": 12.5,
                      "duration": measure})
    out["audits"]["user-timings"]["details"]["items"] = items
    out["audits"]["user-timings"]["scoreDisplayMode"] = "informative"
    return out


def with_bytes(lhr: LHR, factor: float, extra_script: int | None = None) -> LHR:
    out = copy.deepcopy(lhr)
    items = out["audits"]["resource-summary"]["details"]["items"]
    for item in items:
        item["transferSize"] = round(item["transferSize"] * factor)
    if extra_script is not None:
        items.append({"resourceType": "script", "label": "Script", "requestCount": 2,
                      "transferSize": extra_script})
    return out


def moved(lhr: LHR, url: str) -> LHR:
    out = copy.deepcopy(lhr)
    out["finalUrl"] = out["finalDisplayedUrl"] = url
    return out


RUNS: dict[str, LHR] = {}


def _run(name: str, lhr: LHR) -> str:
    RUNS[name] = lhr
    return name


M = [_run(f"m{f}", scaled(MOBILE, f)) for f in (1.0, 1.2, 0.9, 1.3, 1.05)]
M_TIE = [_run("m-tie", scaled(MOBILE, 1.2))]
D = [_run(f"d{f}", scaled(DESKTOP, f)) for f in (1.0, 0.8, 1.4)]
M_ERR = _run("m-errored", errored(scaled(MOBILE, 1.1), ["largest-contentful-paint",
                                                          "speed-index"]))
M_NULL = _run("m-nulled", nulled(scaled(MOBILE, 0.95), ["largest-contentful-paint"]))
M_GONE = _run("m-removed", removed(scaled(MOBILE, 1.15), ["speed-index", "interactive"]))
M_NOSCORE = _run("m-noscore", scored(MOBILE, None))
F_SAME = _run("failed-same-url", moved(FAILED, MOBILE["finalUrl"]))
SCORES = {s: [_run(f"m-score{s}-{i}", scored(scaled(MOBILE, 1 + i / 10), s if i == 1 else v))
              for i, v in enumerate((0.3, s, 0.99))]
          for s in (0.55, 0.07, 0.14, 0.28, 0.56, 0.29, 0.57, 0.58)}
TIMED = [_run(f"m-timed{i}", with_timings(MOBILE, h, m))
         for i, (h, m) in enumerate(((820.5, 96.25), (910.0, None), (760.0, 130.0)))]
BYTES = [_run(f"m-bytes{i}", with_bytes(MOBILE, f, s))
         for i, (f, s) in enumerate(((1.0, 310_000), (1.1, 290_000), (0.9, None)))]
ALL = [_run(f"all-{p.stem}", _load(p.name)) for p in ALL_CATEGORIES]
if ALL:
    ALL.append(_run("all-a11y-failed", scored(errored(scored(RUNS[ALL[0]], 0.82, "accessibility"),
                                                      ["image-alt"]), 0.75, "seo")))


# --- cases ------------------------------------------------------------------------------


def _near(runs: list[str], audit: str, method: str) -> float:
    """A threshold next to the aggregated value, so cases pass and fail."""
    values = [RUNS[r]["audits"].get(audit, {}).get("numericValue") for r in runs]
    numbers = sorted(v for v in values if isinstance(v, int | float))
    if not numbers:
        return 1000.0
    middle = numbers[len(numbers) // 2]
    return round(middle * (1.01 if method in ("median", "optimistic") else 0.99), 3)


def _cases() -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    sets = {"3runs": M[:3], "5runs": M, "4runs-tie": M[:2] + M_TIE + M[2:3],
            "desktop": D, "2urls": M[:3] + D, "errored": [*M[:2], M_ERR],
            "nulled": [M_NULL, *M[:2]], "removed": [M[0], M_GONE, M[1]],
            "failed-run": [*M[:2], F_SAME]}
    for set_name in ("3runs", "5runs", "4runs-tie", "desktop", "2urls"):
        runs = sets[set_name]
        for audit in METRICS:
            for method in METHODS:
                level = "warn" if len(audit) % 2 else "error"
                yield (f"{set_name}-{audit}-{method}", {"assertions": {audit: [level, {
                    "maxNumericValue": _near(runs, audit, method),
                    "aggregationMethod": method}]}}, runs)
    for set_name in ("errored", "nulled", "removed", "failed-run"):
        runs = sets[set_name]
        for method in METHODS:
            yield (f"{set_name}-{method}", {"assertions": {
                "largest-contentful-paint": ["error", {"maxNumericValue": 3000,
                                                       "aggregationMethod": method}],
                "speed-index": ["warn", {"maxNumericValue": 4000, "minScore": 0.5,
                                         "aggregationMethod": method}],
                "interactive": ["error", {"maxNumericValue": 5000,
                                          "aggregationMethod": method}],
                "categories:performance": ["error", {"minScore": 0.8,
                                                     "aggregationMethod": method}],
            }}, runs)
    for score, runs in SCORES.items():
        for method in METHODS:
            yield (f"score-{score}-{method}", {"assertions": {"categories:performance": [
                "error", {"minScore": score, "aggregationMethod": method}]}}, runs)
    for method in METHODS:
        yield (f"null-category-score-{method}", {"assertions": {"categories:performance": [
            "error", {"minScore": 0.5, "aggregationMethod": method}]}}, [M[0], M_NOSCORE])
        yield (f"min-score-on-metrics-{method}", {"assertions": {
            a: ["warn", {"minScore": 0.95, "aggregationMethod": method}] for a in METRICS}},
               sets["5runs"])
        yield (f"top-level-method-{method}", {"aggregationMethod": method, "assertions": {
            "first-contentful-paint": ["error", {"maxNumericValue": 700}],
            "speed-index": ["error", {"maxNumericValue": 900, "aggregationMethod": "median"}],
            "categories:performance": "error"}}, sets["5runs"])
        yield (f"user-timings-{method}", {"assertions": {
            "user-timings:hero:loaded": ["error", {"maxNumericValue": 850,
                                                   "aggregationMethod": method}],
            "user-timings:app-boot": ["warn", {"maxNumericValue": 100,
                                               "aggregationMethod": method}],
            "user-timings:missing": ["error", {"maxNumericValue": 1}]}}, TIMED)
        yield (f"resource-summary-{method}", {"assertions": {
            "resource-summary:script:size": ["error", {"maxNumericValue": 300_000,
                                                       "aggregationMethod": method}],
            "resource-summary:script:count": ["warn", {"maxNumericValue": 1,
                                                       "aggregationMethod": method}],
            "resource-summary:document:size": ["error", {"maxNumericValue": 4500}],
            "resource-summary:total:count": ["error", {"maxNumericValue": 3}],
            "resource-summary:third-party:count": ["error", {"maxNumericValue": 0}]}}, BYTES)
    bare = {"assertions": {"first-contentful-paint": "warn",
                           "largest-contentful-paint": ["error", {}],
                           "cumulative-layout-shift": ["error"],
                           "server-response-time": "error", "redirects": "warn",
                           "speed-index": "off"}}
    for set_name in ("3runs", "desktop", "errored"):
        yield f"bare-levels-{set_name}", bare, sets[set_name]
    max_length = {"assertions": {a: ["error", {"maxLength": n}] for a, n in (
        ("mainthread-work-breakdown", 5), ("bootup-time", 2), ("total-byte-weight", 1),
        ("unused-javascript", 0), ("network-requests", 3), ("layout-shifts", 0),
        ("document-latency-insight", 3))}}
    for set_name in ("3runs", "desktop", "2urls"):
        yield f"max-length-{set_name}", max_length, sets[set_name]
    for preset in lhci_data()["presets"]:
        for set_name in ("3runs", "desktop", "errored"):
            yield f"preset-{preset}-{set_name}", {"preset": preset}, sets[set_name]
        if ALL:
            yield f"preset-{preset}-all-categories", {"preset": preset}, ALL
            yield (f"preset-{preset}-override", {"preset": preset, "assertions": {
                "color-contrast": "warn", "unused-javascript": ["warn"],
                "categories:accessibility": ["error", {"minScore": 0.95}],
                "largest-contentful-paint": ["error", {"maxNumericValue": 1500}],
                "uses-text-compression": "off"}}, ALL)
    if ALL:
        for method in METHODS:
            yield (f"other-categories-{method}", {"aggregationMethod": method, "assertions": {
                "categories:accessibility": ["error", {"minScore": 0.9}],
                "categories:best-practices": ["warn", {"minScore": 1}],
                "categories:seo": ["error", {"minScore": 0.95}],
                "image-alt": "error", "document-title": "error", "meta-description": "warn",
                "errors-in-console": ["error", {"maxLength": 0}], "html-has-lang": "error"}},
                   ALL)
    pattern_cases: dict[str, dict[str, Any]] = {
        "matching-url-pattern": {"matchingUrlPattern": "/shift$", "assertions": {
            "interactive": ["error", {"maxNumericValue": 800}]}},
        "assert-matrix": {"assertMatrix": [
            {"matchingUrlPattern": "shift", "assertions": {
                "first-contentful-paint": ["error", {"maxNumericValue": 700}]}},
            {"matchingUrlPattern": "heavy", "preset": "lighthouse:recommended",
             "assertions": {"total-blocking-time": ["error", {"maxNumericValue": 100}]}},
            {"assertions": {"categories:performance": ["warn", {"minScore": 0.9}]},
             "aggregationMethod": "median-run"}]},
    }
    for name, options in pattern_cases.items():
        yield name, options, sets["2urls"]
    yield "unknown-category-run", {"assertions": {"categories:seo": "error"}}, sets["3runs"]


BUDGETS: list[list[dict[str, Any]]] = [
    [{"path": "/*", "timings": [{"metric": "interactive", "budget": 800}],
      "resourceSizes": [{"resourceType": "script", "budget": 300},
                        {"resourceType": "total", "budget": 500}],
      "resourceCounts": [{"resourceType": "third-party", "budget": 0},
                         {"resourceType": "total", "budget": 3}]}],
    [{"path": "/shift", "timings": [{"metric": "first-contentful-paint", "budget": 700}]},
     {"path": "/heavy*", "resourceSizes": [{"resourceType": "document", "budget": 4}]},
     {"resourceCounts": [{"resourceType": "document", "budget": 1}]}],
]
BUDGET_SETS = {"bytes": BYTES, "2urls": M[:3] + D}
CASES = list(_cases())
CASES += [(f"budgets-file-{i}-{s}", {"budgets": i}, runs)
          for i in range(len(BUDGETS)) for s, runs in BUDGET_SETS.items()]


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    """Lighthouse CI's verdicts on every case, from one Node process."""
    budget_matrices = [budget_json_to_assertions(b) for b in BUDGETS]
    cases = [{"options": budget_matrices[o["budgets"]] if "budgets" in o else o,
              "lhrs": runs} for _, o, runs in CASES]
    return lhci_verdicts(RUNS, cases, BUDGETS)


def _normal(result: dict[str, Any]) -> dict[str, Any]:
    def number(value: Any) -> Any:
        return math.nan if value in ("NaN", None) else value

    out = dict(result)
    out["actual"] = number(out["actual"])
    out["values"] = [number(v) for v in out["values"]]
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, int | float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_at_least_150_cases() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize(("options", "runs"), [(o, r) for _, o, r in CASES],
                         ids=[name for name, _, _ in CASES])
def test_same_verdicts_as_lighthouse_ci(
    oracle: dict[str, Any], options: dict[str, Any], runs: list[str], request: Any
) -> None:
    index = [name for name, _, _ in CASES].index(request.node.callspec.id)
    theirs = oracle["results"][index]
    assert isinstance(theirs, list), theirs
    if "budgets" in options:
        options = budget_json_to_assertions(BUDGETS[options["budgets"]])
    else:
        validate_options(options)
    ours = [_normal(r.to_lhci()) for r in assert_lhrs(options, [RUNS[r] for r in runs])]
    theirs = [_normal(r) for r in theirs]
    assert [(r["url"], r["auditId"], r.get("auditProperty"), r["name"]) for r in ours] == [
        (r["url"], r["auditId"], r.get("auditProperty"), r["name"]) for r in theirs]
    for mine, lhci in zip(ours, theirs, strict=True):
        differing = {k for k in {*mine, *lhci} if not _same(mine.get(k), lhci.get(k))}
        assert not differing, (mine, lhci)
    assert ours, "a case that asserts nothing proves nothing"


def test_budgets_file_converts_as_lighthouse_ci_does(oracle: dict[str, Any]) -> None:
    assert [budget_json_to_assertions(b) for b in BUDGETS] == oracle["budgets"]


def test_shipped_presets_equal_lighthouse_ci_presets(oracle: dict[str, Any]) -> None:
    assert lhci_data()["presets"] == oracle["presets"]
    assert lhci_data()["lhci_utils_version"] == "0.15.1"


def test_shipped_data_equals_generated() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "generate_data", Path(__file__).parent / "lhci" / "generate_data.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert lhci_data() == module.generated()


REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"assertions": {"firstContentfulPaint": "error"}}, "camelCase"),
    ({"assertions": {"not-an-audit": "error"}}, "'not-an-audit' is not an audit of Lighthouse"),
    # In Lighthouse CI's presets, gone from Lighthouse 13: refused when asserted by name.
    ({"assertions": {"font-display": ["warn", {"maxLength": 0}]}}, "'font-display' is not an"),
    ({"assertions": {"categories:pwa": "error"}}, "unknown category"),
    ({"assertions": {"resource-summary:script:bytes": "error"}}, "resource-summary:<type>"),
    ({"assertions": {"interactive": ["fatal", {}]}}, "level must be one of"),
    ({"assertions": {"interactive": ["error", {"maxNumericValu": 1}]}}, "maxNumericValu"),
    ({"assertions": {"interactive": ["error", {"maxNumericValue": "1"}]}}, "must be a number"),
    ({"preset": "lighthouse:fast"}, "unknown 'lighthouse:fast'"),
    ({"assertMatrix": [], "preset": "lighthouse:all"}, "assertMatrix cannot be used with"),
    ({"aggregationMethod": "mean"}, "aggregationMethod: must be one of"),
    ({"matchingUrlPattern": "(", "assertions": {}}, "matchingUrlPattern"),
    ({"assertions": {"performance-budget": "error"}}, "removed performance-budget"),
]


@pytest.mark.parametrize(("options", "named"), REFUSED, ids=[n for _, n in REFUSED])
def test_what_lighthouse_ci_throws_on_or_ignores_is_refused(
    options: dict[str, Any], named: str
) -> None:
    with pytest.raises(InvalidInputError, match=named.replace("(", r"\(").replace("[", r"\[")):
        validate_options(options)

