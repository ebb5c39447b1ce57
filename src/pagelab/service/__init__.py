"""The HTTP API service (``pagelab serve``): every endpoint of the Web Performance Testing
API over the local store, with an in-process worker running tests on the local engine.

From Python, ``create_app(Settings(...))`` returns the ASGI app (FastAPI); see docs/api.md.
"""

from pagelab._public import publish

from ._app import create_app
from ._settings import Settings

# isort: split
# For ``pagelab serve`` only (not public API, not in __all__).
from ._server import server_config as server_config

__all__ = ["Settings", "create_app"]

publish(__name__, globals(), __all__)
