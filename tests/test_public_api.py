"""The public API is deliberate: this test pins it, name by name, module by module.

A public module is one whose dotted name has no part starting with ``_``; its ``__all__`` is
its public API. Adding, removing or moving a public name means editing ``PUBLIC_API``
below, in the same change, on purpose. The machinery packages (store, engine internals,
fleet, service, CLI, the plugin's items) re-export what the other pagelab packages need
with ``from ._x import name as name``, outside ``__all__``: importable and typed, but not
public.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import warnings
from types import ModuleType

import pytest

import pagelab
import pytest_pagelab

#: Every public module -> its ``__all__``, in the order ruff's RUF022 keeps it.
PUBLIC_API: dict[str, list[str]] = {
    "pagelab": [
        "METRICS", "APIError", "APINotFoundError", "ApiRunner", "AsyncClient",
        "AuthenticationError", "BadRequestError", "BatchItem", "BatchReport", "BatchStatus",
        "BatchType", "Client", "Comparison", "Connection", "Device", "DiscoveryError",
        "EngineError",
        "EngineNotInstalledError", "Flow", "HttpVersion", "InsufficientCreditsError",
        "InvalidFlowError", "InvalidInputError", "LighthouseConfig", "LighthouseError",
        "LocalRunner",
        "Location", "Metric", "Metrics", "MissingDependencyError", "NotFoundError",
        "PagelabError", "RateLimitedError", "RequestTimeoutError", "Results", "RetryPolicy",
        "Runner", "ScanResults", "ServerError", "StoreError", "Summary", "TTFBResult",
        "TestReport", "TestStatus", "ThrottlingMethod", "TransportError", "__version__",
        "budgets", "connect", "export", "field", "frames", "history", "measure", "metric",
        "plots", "scan", "stats", "widgets",
    ],
    "pagelab.budgets": [
        "AssertionResult", "Baseline", "BaselineComparison", "BudgetFile", "BudgetResult",
        "Check", "MetricLimit", "PageBudget", "assert_lhrs", "assert_runs", "compare_baseline",
        "evaluate", "load_baseline", "load_budgets",
        "make_baseline", "parse_budgets", "save_baseline",
    ],
    "pagelab.catalog": [
        "CONNECTIONS", "DEVICES", "LOCATIONS", "TTFB_REGIONS", "ConnectionProfile",
        "DeviceProfile", "ttfb_region",
    ],
    "pagelab.cli": ["main"],
    "pagelab.client": ["AsyncClient", "Client", "RetryPolicy"],
    "pagelab.demo": [
        "PAGES", "WIDGET_BYTES", "CruxStandIn", "DemoServer", "RecordedRequest",
        "serve",
    ],
    "pagelab.engine": [
        "REFUSED_NETWORKS", "Engine", "RunResult", "TargetPolicy", "TargetRefusedError",
        "ensure_browser_user",
    ],
    "pagelab.export": ["SUFFIXES", "compare_video", "export", "html_report"],
    "pagelab.field": [
        "FieldError", "FieldKeyError", "FieldNotFoundError", "FieldQuotaError",
        "FieldTransportError", "history", "record",
    ],
    "pagelab.fleet": ["FleetSettings"],
    "pagelab.frames": [
        "AUDIT_COLUMNS", "CELL", "COLUMNS", "MAIN_THREAD_COLUMNS", "REQUEST_COLUMNS",
        "RESOURCE_SUMMARY_COLUMNS", "THIRD_PARTY_COLUMNS", "TTFB_COLUMNS", "UNITS",
        "USER_TIMING_COLUMNS", "audits",
        "cell_label", "from_records", "main_thread", "read_runs", "requests", "resource_summary",
        "third_parties", "to_frame", "to_long", "to_records", "to_reports", "ttfb_frame",
        "user_timings",
    ],
    "pagelab.models": [
        "METRICS", "BatchItem", "BatchReport", "BatchStatus", "BatchTestRequest", "BatchType",
        "ConfigInput", "Connection", "CreditPool", "Credits", "Device", "Direction",
        "EngineEnvironment", "ErrorBody", "Flow", "FlowReport", "FlowStep", "FlowStepRef",
        "HttpVersion", "InteractionBreakdown", "LighthouseConfig", "LighthouseError",
        "LighthouseTestRequest", "Location", "LocationInfo", "Metric", "Metrics",
        "ProgressCallback", "Rating", "TTFBData", "TTFBError", "TTFBLocation",
        "TTFBLocationResult", "TTFBRegion", "TTFBResult", "TTFBStatus", "TTFBTestRequest",
        "TTFBTimings", "TestReport", "TestStatus", "ThrottlingMethod", "TimeInput", "metric",
    ],
    "pagelab.plots": [
        "Video", "compare_waterfalls", "comparison", "contributions",
        "distribution", "field_history", "filmstrip", "filmstrip_compare", "heatmap",
        "metric_by_group", "trend", "ttfb", "versus_field", "video", "visual_progress",
        "waterfall",
    ],
    "pagelab.runners": [
        "ApiRunner", "FlowCell", "LocalRunner", "MatrixCell", "ReportSink", "Runner", "connect",
        "read_history",
    ],
    "pagelab.service": ["Settings", "create_app"],
    "pagelab.service.routes": [],
    "pagelab.stats": [
        "AGGREGATIONS", "MIN_RUNS", "Explanation", "change_points", "compare", "describe",
        "explain", "history", "representative_run", "representative_runs", "summarize",
    ],
    "pagelab.store": [],
    "pagelab.widgets": ["BatchComparison", "TTFBExplorer", "TrendExplorer"],
    "pytest_pagelab": ["BudgetWarning", "EngineFailure"],
    "pytest_pagelab.items": [],
    "pytest_pagelab.plugin": ["Perf"],
}
#: Issue 21: a small API. Raise it only with a reason written in docs/decisions.md
#: (200 -> 215: issue 38's field data, a new room of 7 names and its 3 faces; 215 -> 218:
#: issue 40's filmstrip_compare, visual_progress and compare_video; 218 -> 221: issue 39's
#: scan, ScanResults and DiscoveryError; issue 37's stats.change_points and
#: pagelab.history fit under it: 221; its Build model is pagelab.models.Build outside
#: __all__, which would be the 222nd name).
MAX_PUBLIC_NAMES = 221


def public_modules() -> dict[str, ModuleType]:
    """Every public module of both packages, found by walking them (not from the table)."""
    found: dict[str, ModuleType] = {}
    for package in (pagelab, pytest_pagelab):
        found[package.__name__] = package
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                found[info.name] = importlib.import_module(info.name)
    return found


def ruff_order(name: str) -> tuple[int, str]:
    # isort style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions.
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_every_public_module_is_pinned() -> None:
    found = public_modules()
    assert sorted(found) == sorted(PUBLIC_API), (
        "public modules without an entry in PUBLIC_API (make them private, `_name`, or pin "
        f"them): {sorted(set(found) - set(PUBLIC_API))}; entries without a module: "
        f"{sorted(set(PUBLIC_API) - set(found))}"
    )


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_all_is_pinned_exactly(name: str) -> None:
    module = importlib.import_module(name)
    assert list(module.__all__) == PUBLIC_API[name]


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    names = list(module.__all__)
    assert names == sorted(names, key=ruff_order)
    assert len(set(names)) == len(names)
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, missing


def test_the_public_api_is_small() -> None:
    total = sum(len(names) for names in PUBLIC_API.values())
    assert total <= MAX_PUBLIC_NAMES, total


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_public_names_show_their_public_home(name: str) -> None:
    # As httpx does: reprs, docs and pickles say `pagelab.models.TestReport`, never the
    # private module that defines it; and that home really holds the object.
    module = importlib.import_module(name)
    for attr in module.__all__:
        obj = getattr(module, attr)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        home = obj.__module__
        if not home.startswith(("pagelab", "pytest_pagelab")):
            continue
        assert not any(p.startswith("_") for p in home.split(".")), f"{name}.{attr}: {home}"
        assert getattr(importlib.import_module(home), obj.__qualname__) is obj, (name, attr)


def test_exceptions_share_one_root_and_pickle() -> None:
    errors = [
        getattr(pagelab, name) for name in pagelab.__all__
        if inspect.isclass(getattr(pagelab, name))
        and issubclass(getattr(pagelab, name), BaseException)
    ]
    assert len(errors) == 18
    for cls in errors:
        assert issubclass(cls, pagelab.PagelabError), cls
        assert repr(cls) == f"<class 'pagelab.{cls.__name__}'>"
        error = cls(429, "rate_limited", "slow down") if issubclass(
            cls, pagelab.APIError) else cls("what went wrong")
        if isinstance(error, pagelab.RateLimitedError):
            error.retry_after = 3.0
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is cls
        assert str(again) == str(error)
        assert vars(again) == vars(error)


def test_models_and_results_pickle() -> None:
    from recorded_runs import LHRS, lhr_report, load_runs

    reports = [lhr_report(name) for name in LHRS]
    assert pickle.loads(pickle.dumps(reports)) == reports
    assert pickle.loads(pickle.dumps(pagelab.Device("mobile"))) is pagelab.Device("mobile")
    results = pagelab.Results.from_frame(load_runs())
    assert repr(pagelab.Results) == "<class 'pagelab.Results'>"
    again = pickle.loads(pickle.dumps(results))
    assert type(again) is pagelab.Results
    assert again.frame.equals(results.frame)


def test_timeout_error_is_renamed_with_a_deprecated_alias() -> None:
    # `pagelab.TimeoutError` shadowed the builtin (`from pagelab import *` replaced it).
    assert "TimeoutError" not in pagelab.__all__
    assert issubclass(pagelab.RequestTimeoutError, pagelab.TransportError)
    with pytest.warns(DeprecationWarning, match="use pagelab.RequestTimeoutError"):
        alias = pagelab.TimeoutError  # type: ignore[attr-defined]
    assert alias is pagelab.RequestTimeoutError
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from pagelab import *", namespace)
    assert "TimeoutError" not in namespace


def test_one_definition_of_a_cell() -> None:
    from pagelab.budgets import _baseline, _evaluate

    assert pagelab.frames.CELL == ("url", "device", "location", "connection", "flow", "step")
    # The other homes re-export the one definition, never a copy.
    assert _evaluate.CELL_COLUMNS is pagelab.frames.CELL
    assert _evaluate.cell_label is _baseline.cell_label is pagelab.frames.cell_label
    assert {"CELL", "cell_label"} <= set(pagelab.frames.__all__)
    assert "MIN_RUNS" in pagelab.stats.__all__


def test_top_level_api() -> None:
    assert pagelab.__version__ == "0.1.0"
    assert pagelab.connect is pagelab.runners.connect  # lives with the runners
    assert pagelab.Client is pagelab.client.Client


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


def test_the_root_imports_no_face() -> None:
    # widgets (like the CLI and the plugin) imports the root: the root, even for the type
    # checker only, never imports it back (tests/test_import_graph.py checks every module);
    # it is still one lazy attribute away.
    assert pagelab.widgets.__name__ == "pagelab.widgets"


def test_homes_of_the_runners_and_the_codec() -> None:
    # connect and history reading live with the runners; the codec of runs (frame <->
    # records <-> reports) with the frames, and only there.
    import pagelab.budgets
    import pagelab.frames
    import pagelab.runners

    assert {"MatrixCell", "ReportSink", "connect", "read_history"} <= set(
        pagelab.runners.__all__)
    assert {"from_records", "read_runs", "to_records", "to_reports"} <= set(
        pagelab.frames.__all__)
    for old in ("load_runs", "runs_to_records", "frame_from_records"):
        assert not hasattr(pagelab.budgets, old)


def test_a_runner_of_one_s_own_needs_only_the_public_methods() -> None:
    # The runners share lighthouse/batch/flow/list through the Runner protocol, each with
    # its own private primitives: those are no part of what isinstance(x, Runner) asks.
    public = ["__enter__", "__exit__", "batch", "close", "filmstrip", "flow", "get", "har",
              "lhr", "lighthouse", "list", "locations", "resource", "run_matrix",
              "screenshot", "screenshots", "ttfb", "ttfb_regions", "video"]
    own = type("OwnRunner", (), {name: lambda self, *args, **kwargs: None for name in public})
    assert isinstance(own(), pagelab.Runner)
    assert not isinstance(type("Partial", (), {"list": lambda self: []})(), pagelab.Runner)
