"""Error responses: every one is ``{code, message}`` with a status from a fixed table."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pagelab.models import DISCOVERY_FAILED, ErrorBody, validation_message

__all__ = [
    "ERROR_CODES",
    "ApiProblem",
    "error_responses",
    "install_error_handlers",
]

logger = logging.getLogger("pagelab.service")

#: Status -> (code, description for the OpenAPI document).
ERROR_CODES: dict[int, tuple[str, str]] = {
    400: ("invalid_request", "Invalid request body or parameter; the message names the field"),
    401: ("unauthorized", "Missing or unknown X-API-KEY"),
    402: ("insufficient_credits", "The credit pool cannot pay for the request"),
    404: ("not_found", "Unknown, expired or another account's id, or unknown resource"),
    405: ("method_not_allowed", "The path does not accept this method"),
    429: ("rate_limited", "Too many requests; retry after Retry-After seconds"),
    408: ("request_timeout", "The request line, headers or body were not sent in time"),
    500: ("internal_error", "Unexpected server error"),
    502: (DISCOVERY_FAILED, "The site's pages could not be found (POST /v1/discoveries): its "
          "start URL could not be reached, or a sitemap is broken, too big or loops"),
    503: ("unavailable", "The server is at capacity; retry after Retry-After seconds"),
}


class ApiProblem(Exception):
    """Raised by routes and dependencies; rendered as an error body with ``status``."""

    def __init__(
        self, status: int, message: str, *, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = ERROR_CODES[status][0]
        self.message = message
        self.headers = dict(headers or {})


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` entries documenting these error statuses in OpenAPI."""
    return {
        status: {"model": ErrorBody, "description": ERROR_CODES[status][1]}
        for status in statuses
    }


def _error_response(
    status: int, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = ErrorBody(code=ERROR_CODES[status][0], message=message)
    return JSONResponse(body.model_dump(), status_code=status, headers=dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    """Route every failure, including the framework's own, to an error body."""

    async def on_problem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiProblem)
        return _error_response(exc.status, exc.message, exc.headers)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return _error_response(400, validation_message(exc.errors()))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        status = exc.status_code if exc.status_code in ERROR_CODES else 400
        message = {404: "no such endpoint", 405: f"{request.method} is not allowed here"}.get(
            exc.status_code, str(exc.detail)
        )
        return _error_response(status, message, exc.headers)

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the log, never to the client.
        logger.error("unhandled error on %s %s", request.method, request.url.path,
                     exc_info=exc)
        return _error_response(500, "unexpected server error; it has been logged")

    app.add_exception_handler(ApiProblem, on_problem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
