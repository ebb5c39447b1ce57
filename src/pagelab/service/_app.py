"""The application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from pagelab.catalog import TTFB_REGIONS
from pagelab.models import (
    MAX_STRING_LENGTH,
    PAGE_URL_PATTERN,
    BatchTestRequest,
    DiscoveryRequest,
    LighthouseTestRequest,
    TTFBTestRequest,
)
from pagelab.runners import MAX_BATCH_ITEMS

from ._errors import install_error_handlers
from ._server import BufferedBodyMiddleware, MethodsMiddleware
from ._settings import Settings
from ._state import Services
from ._worker import Worker
from .routes import HOT_ROUTES, ROUTERS

__all__ = ["API_VERSION", "create_app"]

#: The version of the interface description (the spec's), not of pagelab.
API_VERSION = "0.1.0"

_DESCRIPTION = """\
Synthetic page-performance tests over HTTP: Lighthouse tests and batches run on real
Chromium, TTFB probes, reference lists and account credits. Authenticate with the
`X-API-KEY` header. Errors are `{code, message}`. Timestamps are epoch milliseconds.
See `docs/api.md` for every decision.
"""

# Bodies read after authentication (see _deps.json_body): documented here, not by FastAPI.
_REQUEST_MODELS: tuple[type[BaseModel], ...] = (
    LighthouseTestRequest,
    BatchTestRequest,
    TTFBTestRequest,
    DiscoveryRequest,
)


_PUBLIC_PATHS = ("/v1/locations", "/v1/ttfb-regions")


def _merge_request_schemas(schemas: dict[str, Any]) -> None:
    """Add the request bodies' schemas (validation mode) to the components.

    A nested model whose validation schema differs from the response one already there
    gets a ``-Input`` suffix, as FastAPI names them.
    """
    _, generated = models_json_schema(
        [(model, "validation") for model in _REQUEST_MODELS],
        ref_template="#/components/schemas/{model}",
    )
    definitions: dict[str, Any] = generated.get("$defs", {})
    renames = {
        name: f"{name}-Input"
        for name, schema in definitions.items()
        if name in schemas and schemas[name] != schema
    }

    def rename_refs(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[-1]
                if name in renames:
                    return {**node, "$ref": f"#/components/schemas/{renames[name]}"}
            return {key: rename_refs(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rename_refs(value) for value in node]
        return node

    for name, schema in definitions.items():
        schemas[renames.get(name, name)] = rename_refs(schema)


def _tighten_request_schemas(schemas: dict[str, Any]) -> None:
    """State in the schema the rules the server checks beyond the models' types, so that a
    body valid by the schema is never refused as invalid (issue 10, item 8).

    The TTFB region is one of the catalog's ids; a batch lists 1 to 100 URLs, its entries
    have the types the batch rules keep (the server also drops invalid entries, which the
    schema need not advertise), and the lists its type needs one value from are not empty.
    """
    schemas["TTFBTestRequest"]["properties"]["region"]["enum"] = list(TTFB_REGIONS)
    batch = schemas["BatchTestRequest"]
    url = {"type": "string", "minLength": 1, "maxLength": MAX_STRING_LENGTH,
           "pattern": PAGE_URL_PATTERN}
    batch["properties"]["urls"].update(items=url, minItems=1, maxItems=MAX_BATCH_ITEMS)
    batch["properties"]["devices"]["items"] = {"$ref": "#/components/schemas/Device"}
    batch["properties"]["locations"]["items"] = {"$ref": "#/components/schemas/Location"}
    needs_one = {
        "multiple-urls": ("devices", "locations"),
        "multiple-devices": ("locations",),
        "multiple-locations": ("devices",),
    }
    batch["allOf"] = [
        {
            "if": {"properties": {"batch_type": {"const": kind}}},
            "then": {"properties": {name: {"minItems": 1} for name in names}},
        }
        for kind, names in needs_one.items()
    ]


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is not None:
        return app.openapi_schema
    document = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    _merge_request_schemas(schemas)
    _tighten_request_schemas(schemas)
    # Invalid input is answered 400 with the error body, never FastAPI's 422.
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            operation.get("responses", {}).pop("422", None)
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    # The spec: the key is the default security requirement of the whole interface. The
    # reference lists take it optionally ({} = no requirement), /healthz not at all.
    document["security"] = [{"ApiKey": []}]
    for path in _PUBLIC_PATHS:
        document["paths"][path]["get"]["security"] = [{}, {"ApiKey": []}]
    document["paths"]["/healthz"]["get"]["security"] = [{}]
    app.openapi_schema = document
    return document


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI application. Opens the store and starts the worker in its lifespan."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services.open(settings)
        worker = Worker(services)
        dispatcher = None
        if settings.fleet is not None:
            from pagelab.fleet import FleetDispatcher

            # Fleet workers run the tests; the in-process worker only tidies the store.
            worker.run_tests = False
            dispatcher = FleetDispatcher(services.store, settings.fleet,
                                         target_policy=settings.target_policy,
                                         wake=services.work_available)
        try:
            await services.open_loop()
            worker.start()
            if dispatcher is not None:
                dispatcher.start()
            app.state.services = services
            app.state.worker = worker
            app.state.dispatcher = dispatcher
            yield
        finally:
            if dispatcher is not None:
                dispatcher.stop()
            if worker.alive:
                worker.stop(settings.shutdown_timeout)
            await services.close_loop()
            services.close()

    app = FastAPI(
        title="pagelab Web Performance Testing API",
        version=API_VERSION,
        description=_DESCRIPTION,
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.add_middleware(BufferedBodyMiddleware, timeout=settings.body_timeout)
    app.add_middleware(MethodsMiddleware)
    for router in ROUTERS:
        app.include_router(router)
    app.router.routes[:0] = HOT_ROUTES
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
