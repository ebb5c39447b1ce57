"""The service's settings: one immutable object passed to :func:`create_app`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pagelab._exceptions import InvalidInputError
from pagelab._paths import data_dir as default_data_dir
from pagelab.engine import TargetPolicy, parse_networks
from pagelab.fleet import FleetSettings
from pagelab.store import DEFAULT_RETENTION

__all__ = ["Settings"]


class Settings(BaseModel):
    """How ``pagelab serve`` runs. Every field has a production default."""

    model_config = ConfigDict(frozen=True)

    #: The store (SQLite file and artifacts), shared with the LocalRunner.
    data_dir: Path = Field(default_factory=default_data_dir)
    #: ``postgresql://…``: a team store that any number of servers share (tests, accounts,
    #: credits, rate limits, artifacts, link secrets; docs/deployment.md). None: the SQLite
    #: store in ``data_dir``.
    database_url: str | None = None
    #: A directory every server shares for artifacts, instead of the database (PostgreSQL).
    artifacts_dir: Path | None = None
    #: PostgreSQL: how long a server's claim on a running test holds without renewal (it
    #: renews every third of it); a test of a server that died is run by another after it.
    lease_seconds: float = Field(default=60.0, gt=0)
    #: Run queued tests in this process. Off, tests stay ``idle``: for API-only tests and
    #: for a server that only answers reads while another process does the runs.
    worker: bool = True
    #: Requests per minute per key (per client address for keyless public requests).
    rate_limit_per_minute: int = Field(default=600, ge=1)
    #: Unknown or revoked keys a client address may send per minute (then 429).
    failed_key_limit_per_minute: int = Field(default=30, ge=1)
    #: How long tests, batches and their artifacts are kept.
    retention: timedelta = DEFAULT_RETENTION
    #: Base of the absolute ``report_url`` links, e.g. ``https://perf.example.com``. Unset,
    #: links are built from the address the request was sent to.
    public_url: str | None = None
    #: How long a ``report_url`` link opens its page (rounded up to a whole day). A link
    #: also dies when its key is revoked.
    report_link_lifetime: timedelta = timedelta(days=7)
    #: Per-location timeout of a TTFB probe, in seconds.
    ttfb_timeout: float = Field(default=30.0, gt=0)
    #: A TTFB request answers within this many seconds, whatever its probes do (probes
    #: still running then count as ``TIMEOUT`` results).
    ttfb_deadline: float = Field(default=35.0, gt=0)
    #: TTFB requests in progress at once: per account (429 past it) and in all (503).
    ttfb_concurrency_per_account: int = Field(default=2, ge=1)
    ttfb_concurrency: int = Field(default=8, ge=1)
    #: Targets (SSRF guard, docs/security.md): by default a test may not reach loopback,
    #: private, link-local, unique-local, multicast, reserved, CGNAT or metadata addresses.
    #: ``allow_private_targets`` allows every address; ``allowed_targets`` re-opens CIDRs.
    allow_private_targets: bool = False
    allowed_targets: tuple[str, ...] = ()
    #: The guard's host look-ups (docs/security.md): seconds before a URL whose host has
    #: not resolved is refused (400, not charged); threads they run on (never the request
    #: pool); look-ups in flight per key and per client address.
    guard_dns_timeout: float = Field(default=5.0, gt=0)
    guard_dns_threads: int = Field(default=8, ge=1)
    guard_dns_per_caller: int = Field(default=2, ge=1)
    #: Ask this name server (``HOST[:PORT]``) instead of the system's resolver for the
    #: guard's look-ups (``--dns-server``; tests point it at a DNS server of their own).
    dns_server: str | None = None
    #: Slow clients: seconds to send the request line and headers, then the body.
    header_timeout: float = Field(default=10.0, gt=0)
    body_timeout: float = Field(default=30.0, gt=0)
    #: Open connections served at once (503 past it; keep under the process's fd limit).
    max_connections: int = Field(default=512, ge=1)
    #: Open connections from one client address (closed at once past it): one client
    #: cannot take the whole of ``max_connections``. Behind a proxy every client has the
    #: proxy's address: raise it there, and cap per client in the proxy.
    max_connections_per_address: int = Field(default=64, ge=1)
    #: SQLite connections open at once (requests wait for one beyond this).
    max_db_connections: int = Field(default=16, ge=1)
    #: Host names ``report_url`` may be built from when ``public_url`` is unset; a request
    #: with another ``Host`` gets links to the first entry. Empty: the listen address.
    trusted_hosts: tuple[str, ...] = ()
    #: How often the worker looks for queued tests it was not told about, and deletes
    #: expired tests, in seconds.
    poll_interval: float = Field(default=2.0, gt=0)
    sweep_interval: float = Field(default=600.0, gt=0)
    #: How long a clean shutdown waits for the running test before leaving it to the next
    #: start, in seconds.
    shutdown_timeout: float = Field(default=30.0, ge=0)
    #: A fleet (``--broker``): tests go to Celery workers by location instead of the
    #: in-process worker (docs/scale-out.md). None: the embedded default.
    fleet: FleetSettings | None = None

    @field_validator("allowed_targets")
    @classmethod
    def _valid_networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        try:
            parse_networks(value)
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("dns_server")
    @classmethod
    def _valid_dns_server(cls, value: str | None) -> str | None:
        if value is not None:
            from pagelab.engine import dns_server_resolver

            try:
                dns_server_resolver(value, timeout=1.0)
            except InvalidInputError as exc:
                raise ValueError(str(exc)) from None
        return value

    @property
    def target_policy(self) -> TargetPolicy:
        """The policy every test of this server runs under (it travels with the test)."""
        return TargetPolicy(
            allow_private=self.allow_private_targets,
            allowed=parse_networks(self.allowed_targets),
        )
