"""The HTTP API service (``pagelab serve``): every endpoint of the Web Performance Testing
API over the local store, with an in-process worker running tests on the local engine."""

from ._app import API_VERSION, create_app
from ._server import server_config
from ._settings import Settings

__all__ = ["API_VERSION", "Settings", "create_app", "server_config"]
