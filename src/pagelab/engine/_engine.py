"""The warm local engine: one Node/Lighthouse driver and one Chromium kept between runs."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import logging
import queue
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from threading import Thread
from typing import IO, Any, Literal

import filelock
import psutil

from pagelab._closing import Closing
from pagelab._exceptions import EngineNotInstalledError
from pagelab.models import (
    ENGINE_CRASHED,
    TIMEOUT,
    Device,
    EngineEnvironment,
    FitnessRule,
    Flow,
    FlowReport,
    LighthouseConfig,
    LighthouseError,
    Metrics,
    TestStatus,
)

from ._egress import EgressProxy, Refusal
from ._flows import failure_message, flow_steps, flow_wire
from ._install import EngineInstall, chromium_version, engine_install, find_chromium
from ._load import MachineLoad, machine_load
from ._lock import engine_lock, hold_engine
from ._mapping import filmstrip, final_screenshot, summarize_lhr
from ._process import ChildProcess
from ._recycling import RecyclingRule
from ._resolver import Resolver
from ._sandbox import (
    NO_SANDBOX,
    BrowserSandbox,
    browser_env,
    chown_tree,
    new_profile,
    record_failure,
    record_start,
    sandbox_plan,
    sandbox_status,
    without_sandbox,
)
from ._scrub import SecretScrubber
from ._settings import LighthouseRunSpec, build_run_spec
from ._targets import TargetPolicy, enforced
from ._video import Frame, VideoError, encode_video, screenshots_text

__all__ = ["CHROMIUM_FLAGS", "ENGINE_CRASHED", "TIMEOUT", "Engine", "RunResult"]


#: chrome-launcher's defaults (what the lighthouse CLI uses), headless, plus what a closed
#: network and a root user need. The engine drops ``--no-sandbox`` whenever it starts
#: Chromium with its sandbox (as an unprivileged user: docs/security.md, "Browser
#: sandbox"); it stays here for a bare Chromium started as root (the benchmarks' CLI side).
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # NetworkTimeServiceQuerying: Chromium otherwise asks an outside time server at start-up
    # (--disable-background-networking does not stop it); seen with a catch-all resolver.
    # WebUIOmnibox*Popup: every new browser context opens a window whose omnibox popup is a
    # WebUI page in a renderer of its own (~0.5 s of CPU), started just as the tested page
    # loads; on 2 cores it competed with the page and made light pages' FCP/LCP vary. The
    # CLI pays it once, at browser start, before its navigation (docs/engine.md).
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
    "CalculateNativeWinOcclusion,InterestFeedContentSuggestions,"
    "CertificateTransparencyComponentUpdater,AutofillServerCommunication,"
    "PrivacySandboxSettings4,RenderDocument,NetworkTimeServiceQuerying,"
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-client-side-phishing-detection",
    "--disable-sync",
    "--metrics-recording-only",
    "--disable-default-apps",
    "--mute-audio",
    "--no-default-browser-check",
    "--no-first-run",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-ipc-flooding-protection",
    "--password-store=basic",
    "--use-mock-keychain",
    "--force-fieldtrials=*BackgroundTracing/default/",
    "--disable-hang-monitor",
    "--disable-prompt-on-repost",
    "--disable-domain-reliability",
)

_EOF = object()

logger = logging.getLogger("pagelab.engine")


def _with_load(environment: EngineEnvironment, load: MachineLoad) -> EngineEnvironment:
    """``environment`` with the machine's load at the run's start, judged by the fitness
    rule of this machine (the fitness variables)."""
    loaded = environment.model_copy(update={
        "load_average": load.load_average,
        "cpu_pressure": load.cpu_pressure,
        "cpu_count": load.cpu_count,
        "cpu_share": load.cpu_share,
    })
    return FitnessRule.from_environment().mark(loaded)


def _merge_feature_flags(flags: tuple[str, ...]) -> list[str]:
    """One ``--disable-features`` switch: Chromium reads only the last of several."""
    features: list[str] = []
    merged: list[str] = []
    for flag in flags:
        if flag.startswith("--disable-features="):
            features += [f for f in flag.split("=", 1)[1].split(",") if f not in features]
        else:
            merged.append(flag)
    return [*merged, f"--disable-features={','.join(features)}"] if features else merged


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one engine run."""

    status: TestStatus
    lighthouse_version: str | None
    metrics: Metrics | None
    error: LighthouseError | None
    environment: EngineEnvironment | None
    started_at: datetime
    finished_at: datetime
    #: True when the engine, not the page, failed (crash, timeout): credits are refunded.
    engine_failure: bool = False
    #: Resource name (``lighthouse-json``, ``html-report``, ``screenshot``, ``filmstrip``,
    #: ``video``) -> content.
    artifacts: dict[str, bytes] = field(default_factory=dict)
    #: Requests the engine refused to send (blacklist or adblock), as (URL, reason).
    blocked: tuple[tuple[str, str], ...] = ()
    #: Why a requested resource is missing (e.g. the video when FFmpeg failed), by name.
    artifact_errors: dict[str, str] = field(default_factory=dict)
    #: Milliseconds spent in each part of a successful page run, in order: ``prepare_ms``
    #: (Python, before the request), the driver's ``context_ms``, ``config_ms``,
    #: ``lighthouse_ms``, ``reports_ms``, ``frames_ms``, ``har_ms``, then ``driver_other_ms``
    #: (context closing, the pipe) and ``result_ms`` (Python reading the outputs). For
    #: benchmarks (benchmarks/engine.py); Lighthouse's own phases are in the LHR's ``timing``.
    phases: dict[str, float] = field(default_factory=dict)


class _Browser:
    """Chromium with a fresh profile, listening for DevTools on a loopback port.

    As root it runs as an unprivileged user; its sandbox is on unless the kernel forbids it
    or a sandboxed start fails, then it starts again with ``--no-sandbox`` (``_sandbox``).
    """

    def __init__(
        self, binary: Path, extra_flags: tuple[str, ...], timeout: float,
        preferences: dict[str, Any] | None = None,
    ) -> None:
        self.extra_flags = extra_flags
        #: The profile's ``Default/Preferences``, written before the start (None: none).
        self.preferences = preferences
        plan = sandbox_plan(binary, extra_flags)
        if plan.sandboxed:
            try:
                self._start(binary, plan, timeout)
            except RuntimeError as exc:
                # Again without the sandbox; only if that works was the sandbox the cause
                # (else the error is the second start's, and nothing is remembered).
                plan = without_sandbox(plan, str(exc))
                self._start(binary, plan, timeout)
                record_failure(binary, extra_flags, plan)
        else:
            self._start(binary, plan, timeout)
        self.sandbox: BrowserSandbox = record_start(plan)
        #: Runs made on this Chromium (the recycling rule's count).
        self.runs = 0

    def _start(self, binary: Path, plan: BrowserSandbox, timeout: float) -> None:
        self.profile = new_profile(plan)
        flags = [f for f in CHROMIUM_FLAGS if f != NO_SANDBOX or not plan.sandboxed]
        try:
            if self.preferences is not None:
                # Read for every context of the profile, the runs' own included.
                (self.profile / "Default").mkdir()
                (self.profile / "Default" / "Preferences").write_text(
                    json.dumps(self.preferences)
                )
            if plan.switches_user:
                chown_tree(self.profile, plan.uid, plan.gid)
            self.process = ChildProcess(
                [str(binary), *_merge_feature_flags((*flags, *self.extra_flags)),
                 "--remote-debugging-port=0",
                 "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self.profile}",
                 "about:blank"],
                env=browser_env(plan, self.profile),
                cwd=self.profile if plan.switches_user else None,
                user=plan.uid if plan.switches_user else None,
                group=plan.gid if plan.switches_user else None,
            )
        except BaseException:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        try:
            port = self.process.wait_for_file(self.profile / "DevToolsActivePort", timeout)
        except (RuntimeError, TimeoutError) as exc:
            tail = " | ".join(list(self.process.stderr_tail)[-3:])
            self.close()
            raise RuntimeError(f"Chromium did not start: {exc}. {tail}") from exc
        self.url = f"http://127.0.0.1:{port.splitlines()[0].strip()}"

    def tree_mb(self) -> float:
        """Resident memory of Chromium's process tree, MB (RSS summed over its processes)."""
        total = 0
        for process in (psutil.Process(self.process.pid), *self.process.descendants()):
            with contextlib.suppress(psutil.Error):  # ended since it was listed
                total += process.memory_info().rss
        return total / (1024 * 1024)

    def close(self) -> None:
        self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class _Driver:
    """The Node process running ``driver.mjs``; its stdout lines are parsed into a queue."""

    def __init__(self, install: EngineInstall, timeout: float,
                 benchmark_file: Path | None = None) -> None:
        import os

        self.messages: queue.Queue[Any] = queue.Queue()
        # The CPU benchmark reading it shares with the machine's other engines (driver.mjs).
        shared = {"PAGELAB_BENCHMARK_FILE": str(benchmark_file)} if benchmark_file else {}
        self.process = ChildProcess(
            [str(install.node), str(install.driver)],
            env={**os.environ, "PAGELAB_ENGINE_DIR": str(install.root), **shared},
            pipe_stdin=True,
            pipe_stdout=True,
        )
        assert self.process.popen.stdout is not None
        Thread(target=self._read, args=(self.process.popen.stdout,), daemon=True).start()
        try:
            ready = self.messages.get(timeout=timeout)
        except queue.Empty:
            ready = None
        if not isinstance(ready, dict) or ready.get("type") != "ready":
            tail = " | ".join(list(self.process.stderr_tail)[-5:])
            self.close()
            raise RuntimeError(f"the Lighthouse driver did not start: {tail or 'no output'}")
        self.lighthouse_version: str = ready["lighthouse_version"]
        self.node_version: str = ready["node_version"]

    def _read(self, stream: IO[str]) -> None:
        with contextlib.suppress(ValueError, OSError):
            for line in stream:
                with contextlib.suppress(json.JSONDecodeError):
                    self.messages.put(json.loads(line))
        self.messages.put(_EOF)

    def send(self, message: dict[str, Any]) -> None:
        stdin = self.process.popen.stdin
        assert stdin is not None
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()

    def close(self) -> None:
        self.process.kill()


class _EngineFailed(Exception):
    """The engine, not the page, failed a run (it could not start, hung or died): the run's
    result says so with ``code`` and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Processes:
    """The engine's live processes and its egress proxy (a thread); a separate object so a
    finalizer can close them."""

    def __init__(self) -> None:
        self.browser: _Browser | None = None
        self.driver: _Driver | None = None
        self.egress: EgressProxy | None = None

    def close(self) -> None:
        for part in (self.driver, self.browser):
            if part is not None:
                part.close()
        self.browser = self.driver = None

    def close_all(self) -> None:
        self.close()
        if self.egress is not None:
            self.egress.close()
            self.egress = None


class Engine(Closing):
    """Real Lighthouse in Debian's Chromium, kept warm between runs.

    Each run takes the machine-wide engine lock, gets a fresh browser context (no cookie,
    cache or storage survives a run) and a hard timeout; on a hang or a crash the whole
    process tree is killed and restarted at the next run. Use as a context manager, or call
    :meth:`close`; processes are also ended at interpreter exit.
    """

    def __init__(
        self,
        *,
        run_timeout: float = 150.0,
        startup_timeout: float = 60.0,
        chromium: Path | None = None,
        install: EngineInstall | None = None,
        lock: filelock.BaseFileLock | None = None,
        chromium_flags: tuple[str, ...] = (),
        target_policy: TargetPolicy | None = None,
        resolver: Resolver | None = None,
        recycle_after_runs: int | None = None,
        recycle_above_mb: float | None = None,
    ) -> None:
        """``chromium_flags`` are added to every Chromium this engine starts (tests use it to
        trust a fixture's self-signed certificate); never needed in normal use.

        ``target_policy`` (a server's SSRF guard) limits the addresses every run's browser
        may reach, unless a run passes its own; None (the local runners) allows all.
        ``resolver`` is how the egress proxy of such runs resolves host names (default:
        the system resolver; :func:`pagelab.engine.dns_server_resolver` asks a name server
        of one's own).

        ``recycle_after_runs`` and ``recycle_above_mb`` set when Chromium is restarted between
        runs (:class:`RecyclingRule`: after that many runs, or when its process tree's memory
        is over that many MB; 0 turns either off; None: ``$PAGELAB_RECYCLE_RUNS`` /
        ``$PAGELAB_RECYCLE_MB``, else the defaults, docs/engine.md)."""
        self.recycling = RecyclingRule.from_environment(recycle_after_runs, recycle_above_mb)
        self._stats = dict.fromkeys(("runs", "browser_starts", "driver_starts", "recycles"), 0)
        self.target_policy = target_policy
        self.run_timeout = run_timeout
        self.chromium_flags = tuple(chromium_flags)
        self.startup_timeout = startup_timeout
        self._chromium = chromium
        self._install = install
        self._lock = lock if lock is not None else engine_lock()
        self._mutex = threading.Lock()
        self._ids = itertools.count(1)
        self._resolver = resolver
        self._processes = _Processes()
        self._finalizer = weakref.finalize(self, self._processes.close_all)

    # -- parts -------------------------------------------------------------------------

    def _binary(self) -> Path:
        binary = self._chromium or find_chromium()
        if binary is None:
            raise EngineNotInstalledError("Chromium is missing: run `pagelab setup`")
        self._chromium = binary
        return binary

    def _engine_install(self) -> EngineInstall:
        install = self._install or engine_install()
        if not install.is_complete:
            raise EngineNotInstalledError(
                "Lighthouse is not installed: run `pagelab setup` "
                f"(expected in {install.root})"
            )
        self._install = install
        return install

    @staticmethod
    def sandbox_status() -> BrowserSandbox | None:
        """How Chromium runs: the last one this process started (``verified``), else how
        the next will be started; None when Chromium is missing. A server reports it in
        ``/healthz`` (docs/security.md, "Browser sandbox")."""
        return sandbox_status(find_chromium())

    @staticmethod
    def runs_sandboxed() -> bool:
        """Whether Chromium runs (or will run) with its own sandbox."""
        status = Engine.sandbox_status()
        return status is not None and status.sandboxed

    @property
    def chrome_version(self) -> str | None:
        return chromium_version(self._binary())

    @property
    def lighthouse_version(self) -> str | None:
        driver = self._processes.driver
        return driver.lighthouse_version if driver else None

    def process_ids(self, part: Literal["browser", "driver"] | None = None) -> list[int]:
        """Pids of the live Chromium and Node processes and their descendants (``part``:
        only Chromium's tree, or only the Node driver's; the first pid is its root)."""
        pids: list[int] = []
        parts = {"browser": (self._processes.browser,), "driver": (self._processes.driver,),
                 None: (self._processes.browser, self._processes.driver)}[part]
        for holder in parts:
            if holder is not None and holder.process.alive:
                pids.append(holder.process.pid)
                pids += [p.pid for p in holder.process.descendants()]
        return pids

    def _ensure_started(
        self, browser_flags: tuple[str, ...], preferences: dict[str, Any] | None = None
    ) -> tuple[_Browser, _Driver]:
        procs = self._processes
        if procs.browser is not None and (
            not procs.browser.process.alive or procs.browser.extra_flags != browser_flags
            or procs.browser.preferences != preferences
        ):
            procs.browser.close()
            procs.browser = None
        if procs.driver is not None and not procs.driver.process.alive:
            procs.driver.close()
            procs.driver = None
        if procs.browser is None:
            procs.browser = _Browser(self._binary(), browser_flags, self.startup_timeout,
                                     preferences)
            self._stats["browser_starts"] += 1
        if procs.driver is None:
            # Beside the lock: engines that share it share the machine, and a run holds it
            # while the driver reads or writes the file.
            procs.driver = _Driver(self._engine_install(), self.startup_timeout,
                                   Path(f"{self._lock.lock_file}.benchmark.json"))
            self._stats["driver_starts"] += 1
        return procs.browser, procs.driver

    def stats(self) -> dict[str, int]:
        """Counts since this engine was made: ``runs`` (page and flow runs), Chromium and
        Node starts (``browser_starts``, ``driver_starts``), ``recycles`` (restarts of
        Chromium by the recycling rule)."""
        return dict(self._stats)

    def _after_run(self) -> None:
        """Count the run and, if the recycling rule says so, restart Chromium now, between
        runs (the engine lock still held, so no other run measures during the restart)."""
        self._stats["runs"] += 1
        browser = self._processes.browser
        if browser is None or not browser.process.alive:
            return
        browser.runs += 1
        reason = self.recycling.due(browser.runs, browser.tree_mb())
        if reason is None:
            return
        logger.info("recycling Chromium (pid %d) after %s", browser.process.pid, reason)
        self._stats["recycles"] += 1
        browser.close()
        self._processes.browser = None
        try:
            fresh, driver = self._ensure_started(browser.extra_flags, browser.preferences)
            # The driver connects to it now: the next run does not pay for that.
            self._request(fresh, driver, {"warm": True}, self.startup_timeout, "warm-up")
        except (RuntimeError, OSError, _EngineFailed) as exc:
            # The next run starts it again and reports its failure, as after a crash.
            logger.warning("Chromium did not restart after recycling: %s", exc)
            self._processes.close()

    # -- runs --------------------------------------------------------------------------

    def run(
        self,
        url: str,
        device: Device | str = Device.MOBILE,
        config: LighthouseConfig | None = None,
        *,
        timeout: float | None = None,
        on_start: Callable[[], None] | None = None,
        target_policy: TargetPolicy | None = None,
    ) -> RunResult:
        """One Lighthouse run of ``url``. Page failures and engine failures are returned as
        ``failed`` results; only a missing engine raises (:class:`EngineNotInstalledError`).

        ``on_start`` is called once the engine lock is held, when the run really starts.
        ``target_policy`` (default: the engine's), when it refuses anything, sends every
        connection of the browser through the engine's egress proxy, which resolves the
        host, checks every address and connects to exactly the checked one; refused
        connections are listed in ``RunResult.blocked`` as (``host:port``, ``"target"``).
        """
        device = Device(device)
        config = config or LighthouseConfig()
        policy = target_policy or self.target_policy
        self._binary()
        self._engine_install()
        with self._mutex, hold_engine(self._lock):
            if on_start is not None:
                on_start()
            result = self._run_locked(url, device, config, timeout or self.run_timeout, policy)
            self._after_run()
            return result

    def run_flow(
        self,
        flow: Flow,
        device: Device | str = Device.MOBILE,
        config: LighthouseConfig | None = None,
        *,
        timeout: float | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> FlowReport:
        """One run of a user flow in a fresh browser context (``engine/_flows.py``), as a
        report without a location (the runner sets it: the engine measures from here).
        The flow is the runner's to check (``FlowCell``): the engine runs what it gets."""
        device = Device(device)
        config = config or LighthouseConfig()
        self._binary()
        self._engine_install()
        with self._mutex, hold_engine(self._lock):
            if on_start is not None:
                on_start()
            report = self._run_flow_locked(flow, device, config, timeout or self.run_timeout)
            self._after_run()
            return report

    def _run_flow_locked(
        self, flow: Flow, device: Device, config: LighthouseConfig, timeout: float,
    ) -> FlowReport:
        """Run ``flow`` under the engine lock (the caller holds it)."""
        started, load, chrome, spec = self._prepared(device, config)
        secrets = SecretScrubber.of([*spec.secrets, *flow.secrets])
        report = FlowReport(flow=flow.name, status=TestStatus.FAILED, device=device,
                            connection=config.connection, started_at=started)
        try:
            # A guarded flow goes through the egress proxy, as a page run does.
            with self._started(spec, self.target_policy) as (browser, driver, _), \
                    tempfile.TemporaryDirectory(prefix="pagelab-flow-") as tmp:
                out = Path(tmp)
                reply = self._request(browser, driver, {
                    "config": spec.config, "flow": flow_wire(flow),
                    "scrub_pattern": secrets.pattern,
                    "flow_path": str(out / "flow.json"), "html_path": str(out / "flow.html"),
                    "steps_dir": str(out),
                    "network": spec.network, "user_agent": spec.user_agent,
                }, timeout, "flow")
                if not reply.get("ok"):
                    error = reply.get("error") or {}
                    self._processes.close()
                    raise _EngineFailed(ENGINE_CRASHED,
                                        f"{error.get('code')}: {error.get('message')}")
                self._flow_result(report, flow, out, reply, secrets, chrome, load)
                report.lighthouse_version = driver.lighthouse_version
        except _EngineFailed as exc:
            report.error = LighthouseError(code=exc.code, message=exc.message)
        report.finished_at = datetime.now(UTC)
        return report

    @staticmethod
    def _flow_result(
        report: FlowReport, flow: Flow, out: Path, reply: dict[str, Any],
        secrets: SecretScrubber, chrome: str | None, load: MachineLoad,
    ) -> None:
        """Fill ``report`` from the files the driver wrote and its reply."""
        report.environment = _with_load(EngineEnvironment(chrome_version=chrome), load)
        if (out / "flow.json").exists():
            report.resources["flow-json"] = (out / "flow.json").read_bytes()
            report.resources["flow-report"] = (out / "flow.html").read_bytes()
            flow_result = json.loads(report.resources["flow-json"])
            report.steps = [
                step.model_copy(update={"resources": {
                    **step.resources,
                    "html-report": (out / f"step-{step.index}.html").read_bytes()}})
                for step in flow_steps(flow_result, interactions=reply.get("interactions") or (),
                                       chrome_version=chrome)
            ]
            lhrs = [s.get("lhr") or {} for s in flow_result.get("steps") or []]
            if lhrs:
                report.environment = _with_load(
                    summarize_lhr(lhrs[0], chrome_version=chrome).environment, load)
        failure = reply.get("failure")
        if isinstance(failure, dict):
            message, report.failed_step = failure_message(failure, flow, secrets)
            report.error = LighthouseError(code=str(failure.get("code")), message=message)
        else:
            report.status = TestStatus.SUCCESS

    # -- what a page run and a flow run share ------------------------------------------

    def _prepared(
        self, device: Device, config: LighthouseConfig
    ) -> tuple[datetime, MachineLoad, str | None, LighthouseRunSpec]:
        """When the run started, the machine's load then, Chromium's version and the run's
        settings (device profile, throttling, headers, block lists...)."""
        # A bad fitness variable is refused before the run, not after it (_with_load).
        FitnessRule.from_environment()
        started = datetime.now(UTC)
        load = machine_load()
        chrome = self.chrome_version
        spec = build_run_spec(
            device, config, chrome_major=int(chrome.split(".")[0]) if chrome else None
        )
        return started, load, chrome, spec

    @contextlib.contextmanager
    def _started(
        self, spec: LighthouseRunSpec, policy: TargetPolicy | None
    ) -> Iterator[tuple[_Browser, _Driver, list[Refusal]]]:
        """The warm browser and driver for a run of ``spec``, every connection through the
        egress proxy when ``policy`` refuses anything, and the list its refusals go to.
        Raises :class:`_EngineFailed` (processes closed) when they cannot start."""
        guarded = enforced(policy)
        try:
            egress = self._egress() if guarded else None
            browser, driver = self._ensure_started(
                (*self.chromium_flags, *spec.browser_flags,
                 *(egress.chromium_flags if egress else ())),
                egress.profile_preferences if egress else None,
            )
        except (RuntimeError, OSError) as exc:
            self._processes.close()
            raise _EngineFailed(ENGINE_CRASHED, str(exc)) from exc
        no_refusals: list[Refusal] = []
        with (egress.guarding(guarded) if egress and guarded
              else contextlib.nullcontext(no_refusals)) as refusals:
            yield browser, driver, refusals

    def _request(
        self, browser: _Browser, driver: _Driver, message: dict[str, Any], timeout: float,
        what: str,
    ) -> dict[str, Any]:
        """Send one request (a page run or a flow run: ``what``) to the driver and return
        its reply. Raises :class:`_EngineFailed` (processes closed) when the driver cannot
        be reached, the reply does not come in time or the browser or driver dies."""
        request_id = next(self._ids)
        try:
            driver.send({"id": request_id, "browser_url": browser.url, **message})
        except (OSError, ValueError) as exc:
            self._processes.close()
            raise _EngineFailed(ENGINE_CRASHED, f"driver unreachable: {exc}") from exc
        reply = self._await_reply(driver, browser, request_id, timeout)
        if reply is None:
            self._processes.close()
            raise _EngineFailed(TIMEOUT, f"the {what} did not finish within {timeout:.0f} s")
        if reply is _EOF or not browser.process.alive or not isinstance(reply, dict):
            detail = " | ".join(list(driver.process.stderr_tail)[-3:])
            self._processes.close()
            raise _EngineFailed(ENGINE_CRASHED,
                                f"the browser or the driver exited mid-{what}. {detail}".strip())
        return reply

    def _run_locked(
        self, url: str, device: Device, config: LighthouseConfig, timeout: float,
        policy: TargetPolicy | None,
    ) -> RunResult:
        clock = time.perf_counter()
        started, load, chrome, spec = self._prepared(device, config)
        try:
            with self._started(spec, policy) as (browser, driver, refusals):
                return self._drive(browser, driver, url, spec, timeout, started, chrome, load,
                                   refusals, clock)
        except _EngineFailed as exc:
            return self._engine_failure(exc.code, exc.message, started)

    def _egress(self) -> EgressProxy:
        if self._processes.egress is None:
            self._processes.egress = EgressProxy(self._resolver)
        return self._processes.egress

    def _drive(
        self, browser: _Browser, driver: _Driver, url: str, spec: LighthouseRunSpec,
        timeout: float, started: datetime, chrome: str | None, load: MachineLoad,
        refusals: list[Refusal], clock: float,
    ) -> RunResult:
        """The run itself, on a started browser and driver (``clock``: ``perf_counter()``
        as the run began, for its phases)."""
        secrets = SecretScrubber.of(spec.secrets)
        with tempfile.TemporaryDirectory(prefix="pagelab-run-") as tmp:
            out = Path(tmp)
            sent = time.perf_counter()
            reply = self._request(browser, driver, {
                "url": url,
                "config": spec.config,
                "scrub_pattern": secrets.pattern,
                "lhr_path": str(out / "lhr.json"),
                "html_path": str(out / "report.html"),
                "har_path": str(out / "run.har"),
                "network": spec.network,
                "user_agent": spec.user_agent,
                # Every run keeps the trace's screenshots (the `screenshots` resource: visual
                # progress, filmstrips at any interval); the video is encoded from them too.
                "frames_dir": str(out),
            }, timeout, "run")
            replied = time.perf_counter()
            if not reply.get("ok"):
                error = reply.get("error") or {}
                code, message = str(error.get("code")), secrets.scrub(str(error.get("message")))
                if not error.get("lighthouse"):
                    self._processes.close()
                    return self._engine_failure(ENGINE_CRASHED, f"{code}: {message}", started)
                return RunResult(
                    status=TestStatus.FAILED,
                    lighthouse_version=driver.lighthouse_version,
                    metrics=None,
                    error=LighthouseError(code=code, message=message),
                    environment=_with_load(EngineEnvironment(chrome_version=chrome), load),
                    started_at=started,
                    finished_at=datetime.now(UTC),
                )
            # Where the run's time went, ms: Python's part before the request, the driver's
            # own parts (its `timings`), the rest of the round trip (closing the browser
            # context, the pipe), then Python's reading of the results (docs/benchmarks.md).
            timings = reply.get("timings") or {}
            driver_ms = {str(k): float(v) for k, v in timings.items()
                         if isinstance(v, int | float)}
            phases = {"prepare_ms": (sent - clock) * 1000, **driver_ms,
                      "driver_other_ms": (replied - sent) * 1000 - sum(driver_ms.values())}
            result = self._result_from_files(
                out, chrome, started, reply, video=spec.video, load=load, refusals=refusals
            )
            phases["result_ms"] = (time.perf_counter() - replied) * 1000
            return dataclasses.replace(result, phases=phases)

    def _await_reply(
        self, driver: _Driver, browser: _Browser, request_id: int, timeout: float
    ) -> object | None:
        """The driver's reply, ``_EOF`` if it died, None on timeout."""
        deadline = time.monotonic() + timeout
        browser_died_at: float | None = None
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                message: object = driver.messages.get(timeout=min(0.5, remaining))
            except queue.Empty:
                # A dead Chromium can leave Lighthouse waiting on a protocol timeout: give
                # it a moment to report, then stop waiting.
                if not browser.process.alive:
                    browser_died_at = browser_died_at or time.monotonic()
                    if time.monotonic() - browser_died_at > 3:
                        return _EOF
                continue
            if message is _EOF:
                return _EOF
            if isinstance(message, dict) and message.get("id") == request_id:
                reply: dict[str, Any] = message
                return reply
        return None

    def _result_from_files(
        self, out: Path, chrome: str | None, started: datetime, reply: dict[str, Any],
        *, video: bool, load: MachineLoad, refusals: list[Refusal],
    ) -> RunResult:
        lhr_bytes = (out / "lhr.json").read_bytes()
        lhr = json.loads(lhr_bytes)
        network_error = reply.get("main_document_error")
        summary = summarize_lhr(lhr, chrome_version=chrome,
                                network_error=network_error if isinstance(network_error, str)
                                else None)
        artifacts: dict[str, bytes] = {
            "lighthouse-json": lhr_bytes,
            "html-report": (out / "report.html").read_bytes(),
        }
        screenshot = final_screenshot(lhr)
        if screenshot:
            artifacts["screenshot"] = screenshot.encode()
        strip = filmstrip(lhr)
        if strip:
            artifacts["filmstrip"] = strip.encode()
        if (out / "run.har").is_file():
            artifacts["har"] = (out / "run.har").read_bytes()
        errors: dict[str, str] = {}
        frames = [Frame(Path(f["file"]), float(f["ms"])) for f in reply.get("frames") or []]
        shots = screenshots_text(frames)
        if shots:
            artifacts["screenshots"] = shots.encode()
        if video:
            # Encoded while the engine lock is held: FFmpeg's CPU use must not overlap the
            # next run's measurement.
            try:
                artifacts["video"] = encode_video(frames, out / "video.webm")
            except VideoError as exc:
                errors["video"] = str(exc)
        blocked = tuple((str(b["url"]), str(b["reason"])) for b in reply.get("blocked") or [])
        blocked += tuple((refusal.target, "target") for refusal in refusals)
        return RunResult(
            status=summary.status,
            lighthouse_version=summary.lighthouse_version,
            metrics=summary.metrics,
            error=summary.error,
            environment=_with_load(summary.environment, load),
            started_at=started,
            finished_at=datetime.now(UTC),
            artifacts=artifacts,
            blocked=blocked,
            artifact_errors=errors,
        )

    def _engine_failure(self, code: str, message: str, started: datetime) -> RunResult:
        return RunResult(
            status=TestStatus.FAILED,
            lighthouse_version=None,
            metrics=None,
            error=LighthouseError(code=code, message=message),
            environment=None,
            started_at=started,
            finished_at=datetime.now(UTC),
            engine_failure=True,
        )

    # -- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """End Chromium, Node and the egress proxy (a later run starts them again)."""
        with self._mutex:
            self._processes.close_all()

