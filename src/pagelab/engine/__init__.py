"""The local engine: real Lighthouse in Debian's Chromium, and the TTFB probe.

Public: :class:`Engine` (and the :class:`RunResult` it returns) and the target policy that
keeps it off private networks (:class:`TargetPolicy`, the :class:`TargetRefusedError` it
raises, ``REFUSED_NETWORKS``, :func:`ensure_browser_user`); see docs/engine.md and
docs/security.md. The rest is for the other pagelab packages (runners, service, fleet,
CLI) and may change.
"""

from pagelab._public import publish

from ._engine import Engine, RunResult
from ._install import ensure_browser_user
from ._targets import REFUSED_NETWORKS, TargetPolicy, TargetRefusedError

# isort: split
# For the other pagelab packages only (not public API, not in __all__).
from ._engine import ENGINE_CRASHED as ENGINE_CRASHED
from ._install import APT_INSTALL_COMMAND as APT_INSTALL_COMMAND
from ._install import chromium_version as chromium_version
from ._install import engine_install as engine_install
from ._install import find_chromium as find_chromium
from ._install import install_chromium as install_chromium
from ._install import install_engine as install_engine
from ._install import pinned_lighthouse_version as pinned_lighthouse_version
from ._lazy import LazyEngine as LazyEngine
from ._lock import EngineWait as EngineWait
from ._lock import engine_waits as engine_waits
from ._resolver import Resolver as Resolver
from ._resolver import dns_server_resolver as dns_server_resolver
from ._sandbox import BrowserSandbox as BrowserSandbox
from ._settings import QUIET_WINDOW_VARIABLE as QUIET_WINDOW_VARIABLE
from ._settings import quiet_window_ms as quiet_window_ms
from ._targets import IPAddress as IPAddress
from ._targets import enforced as enforced
from ._targets import parse_networks as parse_networks
from ._targets import resolve as resolve
from ._targets import target_of as target_of
from ._ttfb import location_result as location_result
from ._ttfb import probe as probe
from ._ttfb import run_ttfb as run_ttfb
from ._video import VideoError as VideoError
from ._video import find_ffmpeg as find_ffmpeg
from ._video import side_by_side as side_by_side

__all__ = [
    "REFUSED_NETWORKS",
    "Engine",
    "RunResult",
    "TargetPolicy",
    "TargetRefusedError",
    "ensure_browser_user",
]

publish(__name__, globals(), __all__)
