"""The local engine: real Lighthouse in Debian's Chromium, and the TTFB probe."""

from ._engine import CHROMIUM_FLAGS, ENGINE_CRASHED, TIMEOUT, Engine, RunResult
from ._install import (
    APT_INSTALL_COMMAND,
    EngineInstall,
    chromium_version,
    engine_install,
    ensure_browser_user,
    find_chromium,
    install_chromium,
    install_engine,
    pinned_lighthouse_version,
)
from ._lazy import LazyEngine
from ._load import MachineLoad, machine_load
from ._lock import engine_lock
from ._mapping import LHR_AUDITS, LhrSummary, filmstrip, final_screenshot, summarize_lhr
from ._resolver import dns_server_resolver
from ._sandbox import BROWSER_USER, BrowserSandbox
from ._settings import LighthouseRunSpec, build_run_spec
from ._targets import REFUSED_NETWORKS, TargetPolicy, TargetRefusedError, parse_networks
from ._ttfb import TTFB_ERROR_CODES, probe, run_ttfb
from ._video import VIDEO_FPS, find_ffmpeg

__all__ = [
    "APT_INSTALL_COMMAND",
    "BROWSER_USER",
    "CHROMIUM_FLAGS",
    "ENGINE_CRASHED",
    "LHR_AUDITS",
    "REFUSED_NETWORKS",
    "TIMEOUT",
    "TTFB_ERROR_CODES",
    "VIDEO_FPS",
    "BrowserSandbox",
    "Engine",
    "EngineInstall",
    "LazyEngine",
    "LhrSummary",
    "LighthouseRunSpec",
    "MachineLoad",
    "RunResult",
    "TargetPolicy",
    "TargetRefusedError",
    "build_run_spec",
    "chromium_version",
    "dns_server_resolver",
    "engine_install",
    "engine_lock",
    "ensure_browser_user",
    "filmstrip",
    "final_screenshot",
    "find_chromium",
    "find_ffmpeg",
    "install_chromium",
    "install_engine",
    "machine_load",
    "parse_networks",
    "pinned_lighthouse_version",
    "probe",
    "run_ttfb",
    "summarize_lhr",
]
