"""The measurement fleet: Celery workers per location on a Redis broker, fed by one server.

``pagelab serve --broker URL`` dispatches each test to the queue of its location
(``pagelab.loc.<id>``); ``pagelab worker --broker URL --locations de,uk --name fra-1`` runs
them on its own engine and sends outcomes back, signed with its own key (issued by the
server with ``pagelab worker-key issue``, revocable). Celery and Redis are imported only
by the functions that use them (the ``fleet`` extra). See docs/scale-out.md.
"""

from pagelab._public import publish

from ._settings import FleetSettings

# isort: split
# For the service and the CLI only (not public API, not in __all__): the fleet is run
# with ``pagelab serve --broker`` and ``pagelab worker``; only its settings are public
# (``pagelab.service.Settings(fleet=FleetSettings(...))``).
from ._app import DEFAULT_VISIBILITY_TIMEOUT as DEFAULT_VISIBILITY_TIMEOUT
from ._app import fleet_app as fleet_app
from ._app import required_broker as required_broker
from ._app import resolve_broker as resolve_broker
from ._app import results_queue as results_queue
from ._dispatcher import REFUSED_DEGRADES_FOR_S as REFUSED_DEGRADES_FOR_S
from ._dispatcher import FleetDispatcher as FleetDispatcher
from ._heartbeats import WORKER_KEY_PREFIX as WORKER_KEY_PREFIX
from ._heartbeats import live_workers as live_workers
from ._install import install_redis_server as install_redis_server
from ._keys import FleetKeys as FleetKeys
from ._keys import WorkerKeys as WorkerKeys
from ._protocol import BROKER_ENV as BROKER_ENV
from ._protocol import FLEET_SECRET_ENV as FLEET_SECRET_ENV
from ._protocol import RESULTS_QUEUE as RESULTS_QUEUE
from ._protocol import WORKER_KEY_ENV as WORKER_KEY_ENV
from ._protocol import ForgedMessageError as ForgedMessageError
from ._protocol import canonical_json as canonical_json
from ._protocol import location_queue as location_queue
from ._protocol import resolve_secret as resolve_secret
from ._protocol import ttfb_queue as ttfb_queue
from ._settings import fleet_settings as fleet_settings
from ._worker import FleetWorker as FleetWorker
from ._worker import run_worker as run_worker

__all__ = ["FleetSettings"]

publish(__name__, globals(), __all__)
