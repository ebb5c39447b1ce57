"""pytest-pagelab with ``--pagelab-runner=api``: budget tests measured through a real
``pagelab serve`` (child process, its worker on the real engine) against the bundled demo
site. One pytester session, one run per test: two engine runs in all, both on the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

# Imported out here: pytester's in-process runs drop the modules first imported inside
# them, and numpy cannot be loaded twice in one process.
import pandas  # noqa: F401
import pytest
from live_server import ServerProcess, create_key

from pagelab.client import Client

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    """Started before pytester points HOME elsewhere (the server finds its engine)."""
    root = tmp_path_factory.mktemp("plugin-api")
    key = create_key(root / "data", lighthouse=10)
    server = ServerProcess(root / "data", root / "serve.log").start()
    try:
        yield server, key
    finally:
        server.stop()


@pytest.mark.timeout(1200)
def test_budgets_measured_through_the_api_server(
    served: tuple[ServerProcess, str], demo_url: str, pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    server, key = served
    monkeypatch.setenv("PAGELAB_API_KEY", key)  # the key only from the environment
    # No engine here: a local run would fail on the missing install, not measure.
    monkeypatch.setenv("PAGELAB_CACHE_DIR", str(tmp_path / "no-engine"))
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.budget(performance_score=50)
        def test_within_budget(perf):
            perf.measure("{demo_url}/fast", device="desktop")

        @pytest.mark.budget(first_contentful_paint=1)
        def test_over_budget(perf):
            perf.measure("{demo_url}/fast", device="desktop")
    """)
    result = pytester.runpytest("--pagelab-runner=api", f"--pagelab-api-url={server.base_url}",
                                "--pagelab-runs=1", "--pagelab-results=results.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.re_match_lines([
        rf"first_contentful_paint \d+ ms > 1 ms \(median of 1: \d+\) desktop/us "
        rf"{demo_url}/fast.*",
    ])
    results = json.loads((pytester.path / "results.json").read_text())
    runs = results["runs"]
    assert [(r["status"], r["url"]) for r in runs] == [("success", f"{demo_url}/fast")] * 2
    # Measured by the server: its tests, charged to the key.
    with Client(server.base_url, key) as client:
        stored = {t.id for t in client.list_tests(per_page=100)}
        credits = client.get_credits().lighthouse.available_credits
    assert {r["id"] for r in runs} == stored
    assert len(stored) == 2
    assert credits == 10 - 2
    by_test = {c["nodeid"].rsplit("::", 1)[-1]: c for c in results["checks"]}
    assert by_test["test_within_budget"]["passed"] is True
    assert by_test["test_over_budget"]["passed"] is False
