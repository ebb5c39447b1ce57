"""The measurement fleet: Celery workers per location on a Redis broker, fed by one server.

``pagelab serve --broker URL`` dispatches each test to the queue of its location
(``pagelab.loc.<id>``); ``pagelab worker --broker URL --locations de,uk --name fra-1`` runs
them on its own engine and sends signed outcomes back. Celery and Redis are imported only
by the functions that use them (the ``fleet`` extra). See docs/scale-out.md.
"""

from pagelab._public import publish

from ._settings import FleetSettings

# isort: split
# For the service and the CLI only (not public API, not in __all__): the fleet is run
# with ``pagelab serve --broker`` and ``pagelab worker``; only its settings are public
# (``pagelab.service.Settings(fleet=FleetSettings(...))``).
from ._app import DEFAULT_VISIBILITY_TIMEOUT as DEFAULT_VISIBILITY_TIMEOUT
from ._app import check_broker_url as check_broker_url
from ._dispatcher import WORKER_KEY_PREFIX as WORKER_KEY_PREFIX
from ._dispatcher import FleetDispatcher as FleetDispatcher
from ._install import install_redis_server as install_redis_server
from ._protocol import BROKER_ENV as BROKER_ENV
from ._protocol import FleetKeys as FleetKeys
from ._protocol import ForgedMessageError as ForgedMessageError
from ._protocol import resolve_secret as resolve_secret
from ._worker import run_worker as run_worker

__all__ = ["FleetSettings"]

publish(__name__, globals(), __all__)
