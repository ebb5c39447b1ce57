"""Every environment variable pagelab reads, written once: name, default, meaning.

The configuration reference (docs/reference/configuration.md) is generated from this table,
and ``tests/test_docs_reference.py`` fails when the code reads a ``PAGELAB_*`` variable that
is missing here. The code that reads a variable stays where it is used (the reader knows
how to parse it); this table is what a user needs to know about it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ENVIRONMENT", "EnvironmentVariable"]


@dataclass(frozen=True, slots=True)
class EnvironmentVariable:
    """One variable: its name, its default (as a user would write it), what it is for, who
    reads it."""

    name: str
    default: str
    meaning: str
    used_by: str


#: Sorted by name.
ENVIRONMENT: tuple[EnvironmentVariable, ...] = (
    EnvironmentVariable(
        "PAGELAB_ALLOW_TARGETS", "(empty)",
        "Comma-separated hosts or networks the service's SSRF guard lets tests target although "
        "they are private or loopback (added to `--allow-target`).",
        "`pagelab serve`",
    ),
    EnvironmentVariable(
        "PAGELAB_API_KEY", "(unset)",
        "The `X-API-KEY` sent to the API service by `Client`, `AsyncClient`, `ApiRunner`, "
        "`connect()`, `pagelab batch` and `--pagelab-runner=api`.",
        "Python, CLI, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_API_URL", "(unset)",
        "The API service's base URL. When set, `pagelab.connect()` and `pagelab batch` run "
        "tests on that service (an `ApiRunner`) instead of the local engine.",
        "Python, CLI, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_BENCHMARK_FILE", "(set by pagelab)",
        "Internal: the file beside the engine lock where the Node driver keeps the machine's "
        "CPU benchmark reading, shared by every engine on the machine. pagelab sets it for "
        "the driver process; do not set it yourself.",
        "engine (Node driver)",
    ),
    EnvironmentVariable(
        "PAGELAB_BRANCH", "(unset)",
        "The branch of the build runs measure, beside `PAGELAB_COMMIT` (docs/history.md, "
        "\"Build context\").",
        "`measure`, runners, `pagelab check`, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_BROKER_URL", "(unset)",
        "The fleet's Redis broker, `redis://HOST:PORT/DB` or `rediss://` (the default of "
        "`--broker`). The way to give a URL with a password: `--broker` refuses one, since "
        "every local user reads a command line.",
        "`pagelab serve --broker`, `pagelab worker`, `pagelab workers`",
    ),
    EnvironmentVariable(
        "PAGELAB_BROWSER_USER", "`pagelab-browser`",
        "The unprivileged user Chromium runs as when pagelab runs as root (created by "
        "`pagelab setup` when missing). A user that does not exist, or root, disables the "
        "sandboxed run with a warning.",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_BUILD_URL", "(unset)",
        "The CI build page of the build runs measure (http or https), beside "
        "`PAGELAB_COMMIT`.",
        "`measure`, runners, `pagelab check`, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_CACHE_DIR", "the user cache dir (`~/.cache/pagelab`)",
        "The pinned Lighthouse and Node install (`engine/<hash>`) and the machine-wide "
        "engine lock.",
        "engine, `pagelab setup`",
    ),
    EnvironmentVariable(
        "PAGELAB_CHROMIUM", "Debian's `/usr/bin/chromium`, else one on `PATH`",
        "The Chromium binary the engine starts.",
        "engine, `pagelab doctor`",
    ),
    EnvironmentVariable(
        "PAGELAB_COMMIT", "(unset)",
        "The commit runs measure when `build=` is not given; it outranks the CI's own "
        "variables and git (docs/history.md, \"Build context\"). Read with the other "
        "`PAGELAB_*` build variables only when it is set.",
        "`measure`, runners, `pagelab check`, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_COMMIT_TIME", "(unset)",
        "The commit time of the build (ISO 8601 or epoch seconds / ms), beside "
        "`PAGELAB_COMMIT`.",
        "`measure`, runners, `pagelab check`, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_CRUX_API_KEY", "(unset)",
        "The Google Cloud API key `pagelab.field`, `Results.versus_field` and `pagelab field` "
        "send to the Chrome UX Report API (in the `X-Goog-Api-Key` header; never printed, "
        "logged or stored); `api_key=` takes precedence.",
        "Python, `pagelab field`",
    ),
    EnvironmentVariable(
        "PAGELAB_CRUX_ENDPOINT", "`https://chromeuxreport.googleapis.com/v1`",
        "The Chrome UX Report API's base URL (the tests and the field notebook point it at "
        "a loopback stand-in, `pagelab.demo.CruxStandIn`).",
        "Python, `pagelab field`",
    ),
    EnvironmentVariable(
        "PAGELAB_DATABASE_URL", "(unset: SQLite in the data dir)",
        "The store of `pagelab serve`, `pagelab keys`, `pagelab worker-key` and `pagelab "
        "workers`: `sqlite:///DIR` or `postgresql://...` (the default of `--database`, and "
        "of `pagelab store migrate --to`). The way to give a URL with a password: "
        "`--database` refuses one, since every local user reads a command line.",
        "`pagelab serve`, CLI",
    ),
    EnvironmentVariable(
        "PAGELAB_DATA_DIR", "the user data dir (`~/.local/share/pagelab`)",
        "The store: the SQLite file, Lighthouse JSON and HTML reports, screenshots, the "
        "report-link secret (the default of every `--data-dir`); the day's Chrome UX Report "
        "answers (`field-cache/`).",
        "runners, store, `pagelab serve`, `pagelab keys`, `pagelab.field`",
    ),
    EnvironmentVariable(
        "PAGELAB_DNS_SERVER", "(unset: the system resolver)",
        "A DNS server the SSRF guard asks directly (the default of `--dns-server`).",
        "`pagelab serve`",
    ),
    EnvironmentVariable(
        "PAGELAB_ENGINE_DIR", "(set by pagelab)",
        "Internal: the engine install the Node driver loads Lighthouse from. pagelab sets it "
        "for the driver process; do not set it yourself.",
        "engine (Node driver)",
    ),
    EnvironmentVariable(
        "PAGELAB_FFMPEG", "`ffmpeg` on `PATH`",
        "The ffmpeg binary that encodes a run's filmstrip into a WebM video.",
        "engine, `pagelab.plots.video`",
    ),
    EnvironmentVariable(
        "PAGELAB_FIT_MAX_CPU_PRESSURE", "`60`",
        "The fitness rule: a run that starts when CPU pressure (Linux PSI `some avg10`, %) is "
        "above this is marked `noisy`.",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_FIT_MAX_LOAD_PER_CPU", "`1`",
        "The fitness rule: a run that starts when the 1-minute load average per CPU is above "
        "this is marked `noisy`.",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_FIT_MIN_BENCHMARK_INDEX", "`1000`",
        "The fitness rule: a run whose Lighthouse CPU benchmark index is below this is marked "
        "`noisy` (Lighthouse warns below 1000).",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_FIT_MIN_CPU_SHARE", "`0.75`",
        "The fitness rule: a run that starts when a busy task gets less than this share of a "
        "core (0 to 1; 0.5 when another process keeps every core busy) is marked `noisy`.",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_FLEET_SECRET", "(unset)",
        "The fleet secret (at least 16 characters), on the server only; "
        "`--fleet-secret-file` takes precedence. Workers get their own keys instead.",
        "`pagelab serve --broker`, `pagelab worker-key`, `pagelab workers`",
    ),
    EnvironmentVariable(
        "PAGELAB_PATTERN_BUDGET_MS", "`5000`",
        "Milliseconds of URL-pattern matching (`whitelist` / `blacklist`) one run may spend; "
        "past it the run fails `URL_PATTERNS_TOO_SLOW` (charged, not refunded).",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_PULL_REQUEST", "(unset)",
        "The pull (merge) request of the build, beside `PAGELAB_COMMIT`.",
        "`measure`, runners, `pagelab check`, pytest plugin",
    ),
    EnvironmentVariable(
        "PAGELAB_QUIET_WINDOW_MS", "(unset: Lighthouse's 1000)",
        "How long a Lighthouse navigation waits after the first paint and after the load "
        "event, and for a quiet network and main thread, before it ends (Lighthouse's "
        "`pauseAfterFcpMs`, `pauseAfterLoadMs`, `networkQuietThresholdMs`, "
        "`cpuQuietThresholdMs`; 0 to 10000 ms). Shorter halves a light page's run and may miss "
        "what a page does after it; 0 ends at the load event, without the paint metrics: "
        "docs/engine.md, \"The quiet window\".",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_RECYCLE_MB", "`1500`",
        "The engine restarts Chromium, between runs, once its process tree's resident memory "
        "(RSS summed over its processes) is above this many MB; `0`: never "
        "(`Engine(recycle_above_mb=...)` takes precedence).",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_RECYCLE_RUNS", "`250`",
        "The engine restarts Chromium, between runs, after this many runs of it; `0`: never "
        "(`Engine(recycle_after_runs=...)` takes precedence).",
        "engine",
    ),
    EnvironmentVariable(
        "PAGELAB_REPORT_LINK_SECRET", "`<data dir>/report-links.key`",
        "The secret(s) signing hosted report links, comma-separated (the first signs, all "
        "verify); when unset the key file is used, created on first need.",
        "`pagelab serve`, `pagelab keys`",
    ),
    EnvironmentVariable(
        "PAGELAB_RETENTION_DAYS", "`30`",
        "How many days the store keeps tests before deleting them (the default of "
        "`--retention-days`).",
        "store, `pagelab serve`",
    ),
    EnvironmentVariable(
        "PAGELAB_WORKER_KEY", "(unset)",
        "A fleet worker's issued key (`pagelab worker-key issue`); `--key-file` takes "
        "precedence.",
        "`pagelab worker`",
    ),
)
