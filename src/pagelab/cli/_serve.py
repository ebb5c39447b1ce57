"""``pagelab serve``: the HTTP API service on the local engine and store."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError

from ._database import add_broker_option, add_database_option, database_url

if TYPE_CHECKING:
    from pagelab.service import Settings

__all__ = ["register", "settings_from_args"]


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run the HTTP API service (every endpoint of the spec) on this machine",
        description="Serve the Web Performance Testing API over the local store, with a "
        "worker that runs queued tests on the local engine. Create keys with "
        "`pagelab keys create`.",
    )
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--data-dir", type=Path, metavar="DIR",
                       help="store directory (default $PAGELAB_DATA_DIR or the user data dir)")
    add_database_option(serve)
    serve.add_argument("--artifacts-dir", type=Path, metavar="DIR",
                       help="with a PostgreSQL --database: keep artifacts in this directory, "
                       "shared by every server, instead of in the database")
    serve.add_argument("--lease", type=float, default=60.0, metavar="S",
                       help="with a PostgreSQL --database: seconds after which another server "
                       "takes over the running test of a server that died (default 60)")
    serve.add_argument("--no-worker", dest="worker", action="store_false",
                       help="queue tests without running them (another server runs them)")
    serve.add_argument("--rate-limit", type=int, default=600, metavar="N",
                       help="requests per minute per key (default 600)")
    serve.add_argument("--retention-days", type=float, metavar="DAYS",
                       help="keep tests this long (default $PAGELAB_RETENTION_DAYS or 30)")
    serve.add_argument("--public-url", metavar="URL",
                       help="base of report_url links when behind a proxy, "
                       "e.g. https://perf.example.com")
    serve.add_argument("--report-link-days", type=float, default=7.0, metavar="DAYS",
                       help="report_url links open their page this long (default 7)")
    serve.add_argument("--allow-private-targets", action="store_true",
                       help="let tests reach loopback, private, link-local and other "
                       "non-public addresses (refused by default: docs/security.md)")
    serve.add_argument("--allow-target", action="append", default=[], metavar="CIDR",
                       help="let tests reach this network, e.g. 10.20.0.0/16 (repeatable; "
                       "also $PAGELAB_ALLOW_TARGETS, comma-separated)")
    serve.add_argument("--dns-server", metavar="HOST[:PORT]",
                       help="name server the SSRF guard asks instead of the system's "
                       "resolver (also $PAGELAB_DNS_SERVER)")
    serve.add_argument("--trusted-host", action="append", default=[], metavar="HOST",
                       help="a Host header report_url links may be built from when "
                       "--public-url is unset (repeatable)")
    serve.add_argument("--header-timeout", type=float, default=10.0, metavar="S",
                       help="seconds a client has to send the request line and headers")
    serve.add_argument("--body-timeout", type=float, default=30.0, metavar="S",
                       help="seconds a client has to send the request body")
    serve.add_argument("--max-connections", type=int, default=512, metavar="N",
                       help="connections served at once; more get 503 (default 512)")
    serve.add_argument("--max-connections-per-address", type=int, default=64, metavar="N",
                       help="connections one client address may hold; more are closed "
                       "(default 64; behind a proxy, raise it and cap in the proxy)")
    fleet = serve.add_argument_group(
        "fleet", "dispatch tests to `pagelab worker` machines by location (docs/scale-out.md)")
    add_broker_option(fleet, "redis://HOST:PORT/DB or rediss:// (also $PAGELAB_BROKER_URL); "
                      "without it this process runs the tests itself")
    fleet.add_argument("--fleet-secret-file", type=Path, metavar="PATH",
                       help="file holding the fleet secret, the root of every fleet key "
                       "(default $PAGELAB_FLEET_SECRET); it stays on this machine")
    fleet.add_argument("--fleet-secret", metavar="SECRET",
                       help="deprecated: visible to every local user in `ps`; use "
                       "--fleet-secret-file or $PAGELAB_FLEET_SECRET")
    fleet.add_argument("--queue-timeout", type=float, default=1800.0, metavar="S",
                       help="a test no worker took within S seconds fails NO_WORKER, "
                       "refunded (default 1800)")
    fleet.add_argument("--max-attempts", type=int, default=2, metavar="N",
                       help="deliveries of a test whose worker was lost before it fails "
                       "ENGINE_CRASHED, refunded (default 2)")
    fleet.add_argument("--visibility-timeout", type=float, default=600.0, metavar="S",
                       help="seconds before a lost worker's test is handed out again "
                       "(default 600)")
    fleet.add_argument("--max-message-mb", type=int, default=None, metavar="N",
                       help="a worker's message (a result with its artifacts) larger than "
                       "N MiB is refused undecoded (default 64)")
    serve.add_argument("--log-level", default="info",
                       choices=("critical", "error", "warning", "info", "debug"))
    serve.set_defaults(handler=_serve)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The service :class:`~pagelab.service.Settings` the arguments describe."""
    # Imported here: `pagelab --help` should not load FastAPI.
    import os

    from pydantic import ValidationError

    from pagelab.models import invalid_input
    from pagelab.service import Settings

    allowed = [*os.environ.get("PAGELAB_ALLOW_TARGETS", "").split(","), *args.allow_target]
    values: dict[str, Any] = {
        "worker": args.worker,
        "rate_limit_per_minute": args.rate_limit,
        "allow_private_targets": args.allow_private_targets,
        "allowed_targets": tuple(a.strip() for a in allowed if a.strip()),
        "trusted_hosts": tuple(args.trusted_host),
        "header_timeout": args.header_timeout,
        "body_timeout": args.body_timeout,
        "max_connections": args.max_connections,
        "max_connections_per_address": args.max_connections_per_address,
    }
    if args.data_dir is not None:
        values["data_dir"] = args.data_dir
    database = database_url(args)
    if database:
        from pagelab.store import Store

        store = Store(args.data_dir, database=database)  # checks the URL
        values["data_dir"] = store.data_dir
        values["database_url"] = store.database_url
    if getattr(args, "artifacts_dir", None) is not None:
        if not values.get("database_url"):
            raise InvalidInputError("--artifacts-dir: only with a postgresql:// --database")
        values["artifacts_dir"] = args.artifacts_dir
    values["lease_seconds"] = getattr(args, "lease", 60.0)
    if args.retention_days is not None:
        values["retention"] = timedelta(days=args.retention_days)
    if args.public_url:
        values["public_url"] = args.public_url
    if args.report_link_days <= 0:
        raise InvalidInputError("--report-link-days: must be positive")
    values["report_link_lifetime"] = timedelta(days=args.report_link_days)
    dns_server = args.dns_server or os.environ.get("PAGELAB_DNS_SERVER")
    if dns_server:
        values["dns_server"] = dns_server
    from pagelab.fleet import resolve_broker

    broker = resolve_broker(getattr(args, "broker", None))
    if broker:
        values["fleet"] = _fleet_settings(args, broker)
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise invalid_input(exc) from exc


def _fleet_settings(args: argparse.Namespace, broker: str) -> Any:
    from pagelab.fleet import fleet_settings

    if args.fleet_secret:
        print("pagelab: warning: --fleet-secret is deprecated: any local user can read it "
              "in `ps`; use --fleet-secret-file PATH or $PAGELAB_FLEET_SECRET",
              file=sys.stderr)
    return fleet_settings(
        broker, secret_file=args.fleet_secret_file, secret=args.fleet_secret,
        queue_timeout=args.queue_timeout, max_attempts=args.max_attempts,
        visibility_timeout=args.visibility_timeout,
        **({"max_message_mb": args.max_message_mb} if args.max_message_mb is not None else {}),
    )


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, plus the service's own loggers (worker, errors) on its handler."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["pagelab"] = {
        "handlers": ["default"], "level": level.upper(), "propagate": False,
    }
    return config


def _serve(args: argparse.Namespace) -> int:
    from pagelab._extras import require

    # The server is an extra: without it one line names `pip install 'pagelab[server]'`.
    require("fastapi", "server")
    require("uvicorn", "server")
    import uvicorn

    from pagelab.service import create_app, server_config
    from pagelab.store import Store, list_accounts

    if not 0 <= args.port <= 65535:
        raise InvalidInputError(f"--port: {args.port} is not a port number")
    if args.retention_days is not None and args.retention_days <= 0:
        raise InvalidInputError("--retention-days: must be positive")
    settings = settings_from_args(args)
    with Store(settings.data_dir, database=settings.database_url).connection() as conn:
        if not any(account.active for account in list_accounts(conn)):
            print(
                "pagelab: no API key yet: create one with "
                f"`pagelab keys create --data-dir {settings.data_dir}`",
                file=sys.stderr,
            )
    if not settings.target_policy.restricts:
        print("pagelab: --allow-private-targets: tests may reach this machine and its "
              "network (docs/security.md)", file=sys.stderr)
    config = server_config(
        create_app(settings), settings, host=args.host, port=args.port,
        log_level=args.log_level, log_config=_log_config(args.log_level),
    )
    uvicorn.Server(config).run()
    return 0
