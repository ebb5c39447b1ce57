"""pagelab.scan on the ApiRunner (issue 39, point 5): discovery on a live `pagelab serve`
(`POST /v1/discoveries`; that it happens there: tests/service/test_api_discoveries.py), the
sample's runs on the same server (worker on the real engine) as a spec batch."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_server import ServerProcess, run_cli

from pagelab import ApiRunner, scan

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

WAIT = 600.0


def test_a_scans_runs_go_through_the_api_as_one_batch(tmp_path: Path, demo_url: str) -> None:
    data_dir = tmp_path / "data"
    created = run_cli("keys", "create", "--data-dir", str(data_dir),
                      "--lighthouse-credits", "10")
    assert created.returncode == 0, created.stderr
    server = ServerProcess(data_dir, tmp_path / "server.log").start()
    try:
        with ApiRunner(server.base_url, created.stdout.strip(), poll_interval=0.3,
                       wait_timeout=WAIT) as runner:
            results = scan(f"{demo_url}/store/", include=["/store/about", "/store/product/*"],
                           per_template=1, runner=runner, progress=False)
    finally:
        server.stop()
    assert results.discovery is not None
    assert results.discovery.sitemaps[0] == f"{demo_url}/store/sitemap.xml"
    assert results.sample.keys() == {"/store/about", "/store/product/*"}
    frame = results.frame
    assert len(frame) == 2
    assert (frame["status"] == "success").all(), frame[["url", "error_code"]]
    assert set(frame["template"]) == {"/store/about", "/store/product/*"}
    batch_ids = frame["batch_id"].unique()
    assert len(batch_ids) == 1
    assert str(batch_ids[0]).startswith("lbt_")
    assert list(results.summary(by="template")["template"]) == ["/store/product/*",
                                                                "/store/about"]
