"""One router per resource."""

from . import (
    _account,
    _batch_tests,
    _discoveries,
    _health,
    _lighthouse_tests,
    _reference,
    _reports,
    _ttfb_tests,
)

#: In the order the OpenAPI document lists them.
ROUTERS = (
    _lighthouse_tests.router,
    _batch_tests.router,
    _ttfb_tests.router,
    _discoveries.router,
    _account.router,
    _reference.router,
    _health.router,
    _reports.router,
)

#: Plain Starlette routes for the hottest requests, tried before every router.
HOT_ROUTES = (*_lighthouse_tests.hot_routes,)

# Internal to the service, which builds its app from these: nothing here is public.
__all__: list[str] = []
