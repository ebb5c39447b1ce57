"""Shared fixtures: an isolated store per test; the real engine for tests marked ``engine``;
the notebook cells' longer time limit; the xdist groups of ``make test``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from leaks import LeakedBrowsers
from quiet_windows import LOAD_ONLY_WINDOW_MS, QUICK_WINDOW_MS, quiet_window

if TYPE_CHECKING:
    import pagelab
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine

#: pytest-timeout's limit for a notebook cell (nbval), over the suite's 600 s: a cell runs a
#: whole measurement matrix (one took 650 s on a loaded machine, waiting for the engine).
#: Set here because notebooks/ ships to users and takes no conftest.py; a conftest's
#: collection hook sees every item of the session, the notebooks' too.
NOTEBOOK_CELL_TIMEOUT_S = 1800


#: The xdist group of everything that runs Lighthouse (``make test`` runs ``-n 2 --dist
#: loadgroup``): one worker runs them in order, one at a time, while the other worker takes
#: the rest, a module at a time. The machine-wide engine lock would serialize the runs
#: anyway; grouping them keeps the other worker from waiting on it.
ENGINE_GROUP = "engine"

#: Engine tests that run beside that worker, in their own module's group (paths or folders):
#: they play a reader's whole machine (a fresh venv and pip, JupyterLab, a browser driving
#: it) or start the API servers, brokers and workers a service or a fleet is made of, and
#: spend much of their time outside Lighthouse. Each of their runs takes the engine lock
#: as any user's process does, so no two Lighthouse runs overlap; the engine worker's
#: queue gets shorter by their set-up time, and a module's fixtures (a fleet on each
#: store) start on one worker instead of on both (docs/decisions.md, "Suite time").
#: Longest first: the order the other worker takes them in (``_queue_rank``).
BESIDE_THE_ENGINE = ("tests/test_wheel.py", "tests/test_notebook_browser.py", "tests/fleet/",
                     "tests/service/")
#: Except the team store's engine tests: their 24 runs are nearly all their time, and each
#: would wait for its turn between the engine worker's runs; on the engine worker they
#: follow one another.
WITH_THE_ENGINE = ("tests/service/test_team_store.py",)


def _runs_the_engine(item: pytest.Item) -> bool:
    if (item.nodeid.startswith(BESIDE_THE_ENGINE)
            and not item.nodeid.startswith(WITH_THE_ENGINE)):
        return False
    return (item.path.suffix == ".ipynb"  # the notebooks measure the demo site
            or item.get_closest_marker("engine") is not None
            or "engine" in getattr(item, "fixturenames", ()))


def _queue_rank(item: pytest.Item) -> tuple[int, int]:
    """Where ``item``'s group stands in the queue of groups xdist hands out: the engine
    group first (the longest), then the modules beside it, longest first, then the rest as
    collected. So the units still queued when the engine group ends are short ones: a long
    unit taken up last would keep one worker running alone. In the engine group the
    notebooks come first: each starts a kernel (seconds without a run), time the modules
    beside the engine, queued first on the other worker, fill with their runs."""
    if _runs_the_engine(item):
        return 0, 0 if item.path.suffix == ".ipynb" else 1
    beside = [n for n, path in enumerate(BESIDE_THE_ENGINE) if item.nodeid.startswith(path)]
    return 1 + (beside[0] if beside else len(BESIDE_THE_ENGINE)), 0


def pytest_configure(config: pytest.Config) -> None:
    # xdist hands out the groups of --dist loadgroup by their number of tests, most first,
    # unless told to keep the collection's order: the one _queue_rank sets.
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False
    config.pluginmanager.register(NotebookKernels(), "pagelab-suite-notebook-kernels")
    config.pluginmanager.register(LeakedBrowsers(config), "pagelab-suite-leaked-browsers")


class NotebookKernels:
    """The notebooks' kernels measure with the short quiet window (:data:`QUICK_WINDOW_MS`):
    a notebook's subject is the analysis its reader follows, not Lighthouse's measurement.
    nbval starts a notebook's kernel as its first cell is set up, and the kernel keeps the
    environment it started with. A plugin, as a conftest's per-item hooks reach only its
    own folder and notebooks/ takes no conftest.py."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        if item.path.suffix != ".ipynb":
            return (yield)
        with quiet_window(QUICK_WINDOW_MS):
            return (yield)


def _join_group(item: pytest.Item, group: str) -> None:
    """Put ``item`` in xdist group ``group``. xdist 3.8 appends ``@group`` to ``_nodeid``,
    which pytest 9 no longer reads (it keeps the id in ``_id``): without this the groups
    are silently ignored and a notebook's cells could land on two workers."""
    item.add_marker(pytest.mark.xdist_group(group))
    if hasattr(item, "_id") and "@" not in item.nodeid:
        from _pytest.nodeid import coerce_node_id

        item._id = coerce_node_id(f"{item.nodeid}@{group}")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # On a worker, xdist sets option.loadgroup from the controller's --dist.
    grouped = bool(getattr(config.option, "loadgroup", False))
    if grouped:
        items.sort(key=_queue_rank)  # stable: each group keeps its tests' order
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.timeout(NOTEBOOK_CELL_TIMEOUT_S))
        if grouped:
            # A module's other tests stay together, so its module fixtures start once.
            _join_group(item, ENGINE_GROUP if _runs_the_engine(item)
                        else item.nodeid.split("::")[0])


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own store (the engine install and lock stay machine-wide)."""
    path = tmp_path / "data"
    monkeypatch.setenv("PAGELAB_DATA_DIR", str(path))
    monkeypatch.delenv("PAGELAB_API_URL", raising=False)
    monkeypatch.delenv("PAGELAB_API_KEY", raising=False)
    # A developer's Chrome UX Report key must not send the HTML report's tests to Google.
    monkeypatch.delenv("PAGELAB_CRUX_API_KEY", raising=False)
    monkeypatch.delenv("PAGELAB_CRUX_ENDPOINT", raising=False)
    # When this suite runs in CI, the plugin and `pagelab check` under test must not write
    # into the real job summary or print annotations GitHub would show on the pull request.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    # Nor record the CI's build (or a developer's PAGELAB_COMMIT) in the runs they store:
    # a test that wants a build sets one (tests/test_build_context.py).
    from pagelab._build import BUILD_VARIABLES, CI_SYSTEMS

    for name in (*BUILD_VARIABLES, *(ci.marker for ci in CI_SYSTEMS)):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, whose sessions (run inside this one, so under its `filterwarnings = error`)
    see warnings as a user's session does: the plugin's BudgetWarning and its notes on a
    budget file are its output there, counted by the tests, not defects of this suite."""
    run = pytester.runpytest

    def run_as_a_user(*args: str | os.PathLike[str], **kwargs: Any) -> pytest.RunResult:
        return run("-W", "default", *args, **kwargs)

    monkeypatch.setattr(pytester, "runpytest", run_as_a_user)
    return pytester


@pytest.fixture(scope="session")
def engine() -> Iterator[object]:
    """One warm engine shared by the engine tests (started on first use)."""
    from pagelab.engine import Engine

    with Engine(run_timeout=120) as shared:
        yield shared


@pytest.fixture(scope="session")
def demo_url() -> Iterator[str]:
    """The bundled demo site, served on loopback for the whole session."""
    from pagelab.demo import serve

    with serve() as url:
        yield url


@pytest.fixture(scope="session")
def shop_carts(engine: Engine, demo_url: str,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[pagelab.Results]:
    """20 runs each of the demo shop's add-to-cart flow with a 50 ms and a 300 ms click
    handler, interleaved (40 flow runs, one ``measure``). Several engine tests read them:
    INP in every run, the two handlers told apart, what made INP slow. Made once, as
    Lighthouse runs are the suite's scarce resource (one at a time on the machine)."""
    import pagelab
    from demo_shop import add_to_cart
    from pagelab import LocalRunner

    with LocalRunner(tmp_path_factory.mktemp("shop-carts"), engine=engine) as runner:
        # INP is what these runs are for, measured in the timespan step, which the quiet
        # window does not touch (the driver settles it on the interaction's Event Timing
        # entries): the short window for the navigation step, whichever module asks first.
        with quiet_window(QUICK_WINDOW_MS):
            results = pagelab.measure([add_to_cart(demo_url, 50), add_to_cart(demo_url, 300)],
                                      runs=20, runner=runner, progress=False)
        yield results


@pytest.fixture(scope="session")
def gate_site() -> Iterator[DemoServer]:
    """A demo server of the regression gates' tests, not the session's ``demo_url``: a test
    slows its pages (``delay_ms``) to make a regression, and puts the delay back to 0."""
    from pagelab.demo import DemoServer

    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def quick_navigation() -> Iterator[None]:
    """The short quiet window for a whole module: ``pytestmark =
    pytest.mark.usefixtures("quick_navigation")`` (set up before the module's own fixtures;
    session fixtures that measure use :func:`quiet_window` themselves)."""
    with quiet_window(QUICK_WINDOW_MS):
        yield


@pytest.fixture
def quick_navigation_in_test() -> Iterator[None]:
    """:data:`QUICK_WINDOW_MS` for one test (``@pytest.mark.usefixtures``) in a module whose
    other tests keep Lighthouse's window: a module fixture would stay set after it."""
    with quiet_window(QUICK_WINDOW_MS):
        yield


@pytest.fixture(scope="module")
def load_only_navigation() -> Iterator[None]:
    """:data:`LOAD_ONLY_WINDOW_MS` for a whole module, as :func:`quick_navigation`."""
    with quiet_window(LOAD_ONLY_WINDOW_MS):
        yield


@pytest.fixture(scope="session")
def gate_baseline(engine: Engine, gate_site: DemoServer,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[pagelab.Results]:
    """8 runs of ``gate_site``'s /fast page on desktop (one ``measure``), the earlier side
    of the gates' tests: ``measure(runs="auto", against=...)`` and, replayed into the
    plugin's ``--pagelab-save-baseline``, its baseline file (each measured its own before,
    5 and 8 runs). Made once, as Lighthouse runs are the suite's scarce resource."""
    import pagelab
    from pagelab import LocalRunner

    with LocalRunner(tmp_path_factory.mktemp("gate-baseline"), engine=engine) as runner:
        # Its consumers measure with the short quiet window: so does it.
        with quiet_window(QUICK_WINDOW_MS):
            results = pagelab.measure(gate_site.page_url("fast"), devices="desktop", runs=8,
                                      runner=runner, progress=False)
        yield results


@pytest.fixture(scope="session")
def engine_cache() -> str:
    """The installed engine's cache dir, read before pytester points HOME elsewhere (set it
    as PAGELAB_CACHE_DIR in tests that run the engine inside pytester)."""
    from pagelab._paths import cache_dir

    return str(cache_dir())


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A new store of each kind, for tests of what both stores keep alike: SQLite in a
    temporary directory, and a database of its own on the session's PostgreSQL cluster."""
    from pagelab.store import Store

    if request.param == "sqlite":
        yield Store(tmp_path / "store")
    else:
        yield Store(database=request.getfixturevalue("postgres").new_database())


@pytest.fixture(scope="session")
def postgres() -> Iterator[object]:
    """A real PostgreSQL cluster on a free loopback port, for the whole session (see
    tests/pg_cluster.py); ``postgres.new_database()`` gives each test its own database."""
    from pg_cluster import PostgresCluster

    with PostgresCluster() as cluster:
        yield cluster
