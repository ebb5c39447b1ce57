"""The measurement fleet: Celery workers per location on a Redis broker, fed by one server.

``pagelab serve --broker URL`` dispatches each test to the queue of its location
(``pagelab.loc.<id>``); ``pagelab worker --broker URL --locations de,uk --name fra-1`` runs
them on its own engine and sends outcomes back, signed with its own key (issued by the
server with ``pagelab worker-key issue``, revocable). Celery and Redis are imported only
by the functions that use them (the ``fleet`` extra). See docs/scale-out.md.
"""

from ._app import DEFAULT_VISIBILITY_TIMEOUT, check_broker_url, fleet_app, results_queue
from ._dispatcher import (
    NO_WORKER,
    REFUSED_DEGRADES_FOR_S,
    WORKER_KEY_PREFIX,
    FleetDispatcher,
    target_policy_to_wire,
)
from ._ingest import IngestOutcome, ingest_message
from ._install import REDIS_APT_COMMAND, find_redis_server, install_redis_server
from ._keys import CREDENTIAL_PREFIX, FleetKeys, WorkerKeys
from ._protocol import (
    BROKER_ENV,
    FLEET_SECRET_ENV,
    MIN_SECRET_LENGTH,
    RESULTS_QUEUE,
    RUN_LIGHTHOUSE_TASK,
    TTFB_REPLY_PREFIX,
    WORKER_KEY_ENV,
    ForgedMessageError,
    canonical_json,
    location_queue,
    resolve_secret,
    ttfb_queue,
)
from ._settings import FleetSettings
from ._worker import FleetWorker, policy_from_wire, run_worker

__all__ = [
    "BROKER_ENV",
    "CREDENTIAL_PREFIX",
    "DEFAULT_VISIBILITY_TIMEOUT",
    "FLEET_SECRET_ENV",
    "MIN_SECRET_LENGTH",
    "NO_WORKER",
    "REDIS_APT_COMMAND",
    "REFUSED_DEGRADES_FOR_S",
    "RESULTS_QUEUE",
    "RUN_LIGHTHOUSE_TASK",
    "TTFB_REPLY_PREFIX",
    "WORKER_KEY_ENV",
    "WORKER_KEY_PREFIX",
    "FleetDispatcher",
    "FleetKeys",
    "FleetSettings",
    "FleetWorker",
    "ForgedMessageError",
    "IngestOutcome",
    "WorkerKeys",
    "canonical_json",
    "check_broker_url",
    "find_redis_server",
    "fleet_app",
    "ingest_message",
    "install_redis_server",
    "location_queue",
    "policy_from_wire",
    "resolve_secret",
    "results_queue",
    "run_worker",
    "target_policy_to_wire",
    "ttfb_queue",
]
