"""Issue 22, finding 6: secrets are scrubbed inside the parsed LHR, never by replacing text
in the serialized JSON or HTML. Real Lighthouse runs, the report opened in real Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fixtures_site import RecordingSite, page
from jupyter_browser import chromium
from pagelab import LocalRunner, TestReport
from pagelab.engine import Engine
from pagelab.store import Store

# What the browser may do, not what Lighthouse measures: the short quiet window (conftest.py).
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


def _stored(data_dir: Path, report: TestReport, name: str) -> bytes:
    store = Store(data_dir)
    with store.connection() as conn:
        data = store.artifacts.read(conn, report.id or "", name)
    assert data is not None, name
    return data


def test_a_common_cookie_value_gives_a_normal_run(engine: Engine, data_dir: Path) -> None:
    # "1" was replaced everywhere in the serialized LHR: broken JSON, ENGINE_CRASHED.
    with RecordingSite() as site:
        url = site.add("/", page("consent"))
        report = LocalRunner(engine=engine).lighthouse(
            url, "desktop", "us", {"cookies": ["consent=1", "theme=dark"]}
        )
        assert report.status == "success", report.error
        assert "consent=1" in site.requests_for("/")[0].headers["cookie"]
    lhr: dict[str, Any] = json.loads(_stored(data_dir, report, "lighthouse-json"))
    assert lhr["finalDisplayedUrl"] == url  # short values are not secrets: nothing mangled
    assert report.metrics is not None
    assert report.metrics.performance_score is not None


def test_a_crafted_user_agent_and_cookie_leave_the_report_inert(
    engine: Engine, data_dir: Path
) -> None:
    # The JSON of the HTML report's inline script has `SSSSSS\"}};...`; replacing the
    # secret `SSSSSS\` in that text ended the string and the objects: the script ran.
    secret = "SSSSSS\\"
    user_agent = 'SSSSSS"}};window.pwned=1;//'
    with RecordingSite() as site:
        url = site.add("/", page("crafted"))
        report = LocalRunner(engine=engine).lighthouse(
            url, "desktop", "us", {"cookies": [f"k={secret}"], "user_agent": user_agent}
        )
        assert report.status == "success", report.error
    lhr: dict[str, Any] = json.loads(_stored(data_dir, report, "lighthouse-json"))
    # The user agent does not hold the secret (its backslash was only the JSON escape of
    # the quote): it is kept as sent, and no string of the LHR holds the secret.
    assert lhr["environment"]["networkUserAgent"] == user_agent
    assert json.dumps(secret)[1:-1] not in json.dumps(lhr)
    html = _stored(data_dir, report, "html-report").decode()
    with chromium() as browser:
        tab = browser.new_page()
        tab.set_content(html, wait_until="load")
        tab.wait_for_selector(".lh-metrics-container, .lh-category", timeout=30_000)
        assert tab.evaluate("typeof window.pwned") == "undefined"
        shown = tab.evaluate("window.__LIGHTHOUSE_JSON__.environment.networkUserAgent")
        assert shown == user_agent
