"""User flows measured on the real engine, downstream: isolation between runs, secret text
kept out of everything stored, the navigation step against a plain page test, ``measure``
and ``compare`` over flows, a client-side route change, ``perf.flow`` in pytester.

Each module fixture is one measurement shared by its tests, so the Lighthouse runs stay few:
2 runs of the sign-in flow, 3 page tests and 3 flow runs of one URL interleaved, 1 route
change, 1 flow in pytester, 1 flow through a GET form. The two add-to-cart handlers compared
are the session's ``shop_carts`` (tests/conftest.py), shared with the INP tests.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

# Loaded before pytester snapshots the modules: scipy cannot be imported twice.
import scipy.stats  # noqa: F401

import pagelab
from demo_shop import ADDED, add_to_cart
from fixtures_site import RecordingSite, page
from pagelab import Flow, LocalRunner
from pagelab.budgets import (
    checks_from_mapping,
    code_quality_issues,
    evaluate,
    markdown_summary,
    workflow_commands,
)
from pagelab.demo import DemoServer
from pagelab.engine import Engine

pytest_plugins = ["pytester"]
# Isolation, scrubbing, storage and the faces are under test, and the navigation step is
# compared with page tests measured alike: the short quiet window (conftest.py).
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def runner(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    with LocalRunner(tmp_path_factory.mktemp("store"), engine=engine) as local:
        yield local


def sign_in(site: DemoServer) -> Flow:
    """The members page first (a fresh context has no session: the sign-in form), then
    sign in; the members page counts this context's visits in localStorage."""
    return (Flow("sign in")
            .navigate(site.page_url("members"), name="members first")
            .type("#user", "ada").type("#password", site.password, secret=True)
            .start_timespan("sign in").click("#sign-in").wait_for("#members").end_timespan()
            .wait_for('#visits[data-count="1"]', timeout_ms=3000)
            .snapshot("members"))


@pytest.fixture(scope="module")
def signed_in(site: DemoServer, runner: LocalRunner) -> pagelab.Results:
    """Two consecutive runs of the sign-in flow."""
    return pagelab.measure(sign_in(site), runs=2, runner=runner, progress=False)


def test_runs_share_no_cookies_or_storage(signed_in: pagelab.Results) -> None:
    assert [r.status.value for r in signed_in.flow_reports] == ["success", "success"]
    for report in signed_in.flow_reports:
        # The second run was not signed in by the first (cookies), and its members page
        # counted one visit, not two (storage): waiting for data-count="1" passed.
        first, signing, members = report.steps
        assert first.url is not None
        assert first.url.endswith("/login")
        assert signing.url is not None
        assert signing.url.endswith("/members")  # reached only after signing in
        assert members.mode == "snapshot"


def test_secret_text_appears_nowhere_stored(
    signed_in: pagelab.Results, site: DemoServer, runner: LocalRunner, tmp_path: Path
) -> None:
    secret = DemoServer.password.encode()
    for report in signed_in.flow_reports:
        assert set(report.resources) == {"flow-report", "flow-json"}
        for name, content in report.resources.items():
            assert secret not in content, name
        assert secret not in report.model_dump_json().encode()
    exported = signed_in.export(tmp_path / "runs.csv")
    assert secret not in exported.read_bytes()
    assert "***" in json.dumps(sign_in(site).to_data())
    assert DemoServer.password not in json.dumps(sign_in(site).to_data())
    for path in runner.store.data_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path


def test_the_sign_in_steps_in_the_frame(signed_in: pagelab.Results) -> None:
    frame = signed_in.frame
    assert frame[["run", "step_index", "step", "mode"]].astype(object).values.tolist() == [
        [0, 1, "members first", "navigation"], [0, 2, "sign in", "timespan"],
        [0, 3, "members", "snapshot"],
        [1, 1, "members first", "navigation"], [1, 2, "sign in", "timespan"],
        [1, 3, "members", "snapshot"]]
    inp = frame.loc[frame["step"] == "sign in", "interaction_to_next_paint"]
    assert inp.notna().all()


def test_compare_tells_a_300_ms_handler_from_a_50_ms_one(shop_carts: pagelab.Results) -> None:
    compared = shop_carts.compare("flow", "50 ms", "300 ms", "interaction_to_next_paint").frame
    add = compared[compared["step"] == "add"].iloc[0]
    assert add["verdict"] == "b is slower"
    assert 300 <= add["b_median"] < 450
    assert add["a_median"] < 200


def test_the_navigation_step_agrees_with_a_page_test(
    site: DemoServer, runner: LocalRunner
) -> None:
    # 3 page tests and 3 flow runs of the same URL, interleaved: alike conditions.
    measured = pagelab.measure([site.page_url("shop?block=300"), add_to_cart(site.url, 300)],
                               runs=3, runner=runner, progress=False)
    frame = measured.frame
    ok = frame[frame["status"] == "success"]
    page = ok[ok["flow"].isna()]
    step = ok[(ok["flow"] == "300 ms") & (ok["step"] == "shop")]
    assert (len(page), len(step)) == (3, 3)
    for metric in ("first_contentful_paint", "largest_contentful_paint", "speed_index"):
        a, b = page[metric].median(), step[metric].median()
        assert abs(b - a) <= 0.10 * a, (metric, a, b)
    # Near zero on this page: 10 % of nothing is no tolerance, so compared absolutely.
    assert abs(page["cumulative_layout_shift"].median()
               - step["cumulative_layout_shift"].median()) <= 0.01
    assert abs(page["performance_score"].median() - step["performance_score"].median()) <= 5


def test_a_client_side_route_change_is_a_timespan(
    site: DemoServer, runner: LocalRunner
) -> None:
    flow = (Flow("route change")
            .navigate(site.page_url("app?render=150"), name="home")
            .start_timespan("details").click("#to-details").wait_for("#details")
            .end_timespan())
    report = runner.flow(flow)
    assert report.status.value == "success", report.error
    _, details = report.steps
    assert details.url is not None
    assert details.url.endswith("/app/details?render=150")  # no page load: the History API
    assert details.metrics is not None
    inp = details.metrics.interaction_to_next_paint
    assert inp is not None
    assert inp >= 150


def test_perf_flow_inp_budget_on_the_real_engine(
    pytester: pytest.Pytester, site: DemoServer, engine_cache: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    pytester.makepyfile(f"""
        import pytest
        from pagelab import Flow

        FLOW = (Flow("add to cart").navigate("{site.page_url('shop?block=300')}", name="shop")
                .start_timespan("add").click("#add-slow").wait_for('{ADDED}').end_timespan())

        @pytest.mark.budget(interaction_to_next_paint=200, step="add")
        def test_cart(perf):
            perf.flow(FLOW)
    """)
    result = pytester.runpytest("--pagelab-runs=1", "--pagelab-results=results.json")
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines([
        r"E?\s*interaction_to_next_paint \d+ ms > 200 ms \(median of 1: \d+\) mobile/us "
        r"flow 'add to cart' step 'add' http://\S+/shop\?block=300",
    ])
    saved = json.loads((pytester.path / "results.json").read_text())
    (check,) = saved["checks"]
    assert (check["flow"], check["step"], check["passed"]) == ("add to cart", "add", False)
    assert {run["step"] for run in saved["runs"]} == {"shop", "add"}


def test_a_secret_sent_by_a_get_form_is_scrubbed_everywhere(
    runner: LocalRunner, tmp_path: Path
) -> None:
    # Issue 34, point 2: the browser puts the password in the next page's URL form-encoded
    # (Tr0ub4dor+%263+%40x...); only the literal was scrubbed, so the encoded one reached
    # the step URLs, the stored reports, the frame and every CI report made from them.
    secret = 'Tr0ub4dor &3 @x"<\u00e9'
    with RecordingSite() as site:
        form_url = site.add("/form", page(
            '<form action="/done" method="get"><input id="pw" name="pw" type="password">'
            '<button id="go">Sign in</button></form>', beacon=False))
        site.add("/done", page('<span id="done">signed in</span>', beacon=False))
        flow = (Flow("get form").navigate(form_url, name="form")
                .type("#pw", secret, secret=True)
                .start_timespan("submit").click("#go").wait_for("#done").end_timespan()
                .snapshot("done"))
        results = pagelab.measure(flow, runs=1, runner=runner, progress=False)
        sent = [r.path for r in site.requests if r.path == "/done"]
    assert sent, "the form was not submitted"
    (report,) = results.flow_reports
    assert report.status.value == "success", report.error
    done = site.url("/done?pw=***")
    assert [s.url for s in report.steps] == [form_url, done, done]
    # A missed budget on every step (the timespan and the snapshot measure no LCP).
    checks = [*checks_from_mapping({"largest_contentful_paint": 1}),
              *checks_from_mapping({"largest_contentful_paint": 1}, step="submit"),
              *checks_from_mapping({"largest_contentful_paint": 1}, step="done")]
    records = [r.to_dict() for r in evaluate(checks, results.frame)]
    assert sorted(r["step"] for r in records if not r["passed"]) == ["done", "form", "submit"]
    outputs = {
        **{name: content.decode() for name, content in report.resources.items()},
        "report JSON (--out)": report.model_dump_json(),
        "frame": results.export(tmp_path / "runs.csv").read_text(),
        "checks": json.dumps(records),
        "Markdown summary": markdown_summary(records),
        "annotations": "\n".join(workflow_commands(records)),
        "Code Quality": json.dumps(code_quality_issues(records)),
    }
    for name in ("Markdown summary", "annotations", "Code Quality"):
        assert "/done?pw=***" in outputs[name], name
    forms = {"literal": secret, "form-encoded": quote_plus(secret),
             "percent-encoded": quote(secret, safe=""), "HTML": html.escape(secret),
             "JSON": json.dumps(secret)[1:-1]}
    for name, text in outputs.items():
        for form_name, form in forms.items():
            assert form not in text, (name, form_name)
        assert "Tr0ub4dor" not in text, name
