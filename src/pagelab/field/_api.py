"""``record`` and ``history``: the Chrome UX Report for a page or an origin, as frames."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from pagelab._exceptions import InvalidInputError

from ._client import HISTORY, RECORD, CruxClient, not_found
from ._errors import FieldError
from ._parse import FORM_FACTOR_NAMES, history_frame, record_frame
from ._tables import FieldHistory, FieldRecord

__all__ = ["api_form_factor", "history", "origin_of", "query_for", "record", "record_of"]

#: How a form factor may be written (any case) -> the API's spelling.
_FORM_FACTORS = {name: api for api, name in FORM_FACTOR_NAMES.items() if api is not None}


def api_form_factor(form_factor: object) -> str | None:
    """``phone`` / ``desktop`` / ``tablet`` (any case; None: all) -> ``PHONE``..."""
    if form_factor is None:
        return None
    if isinstance(form_factor, str) and form_factor.lower() in _FORM_FACTORS:
        return _FORM_FACTORS[form_factor.lower()]
    raise InvalidInputError(
        f"form_factor: expected one of {', '.join(_FORM_FACTORS)} or None (all), "
        f"got {form_factor!r}")


def _http_url(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{name}: expected an absolute http(s) URL, got {value!r}")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"{name}: expected an absolute http(s) URL, got {value!r}")
    return value.strip()


def origin_of(url: str) -> str:
    """``https://example.com/a?b`` -> ``https://example.com``, as the API names origins."""
    parts = urlsplit(_http_url(url, "url"))
    return f"{parts.scheme}://{parts.netloc}"


def query_for(url: object = None, origin: object = None,
              form_factor: object = None) -> dict[str, Any]:
    """The API's query for a page (``url``) or an origin, on a form factor."""
    if (url is None) == (origin is None):
        raise InvalidInputError("give either a page's url or an origin= (one of them)")
    query: dict[str, Any] = (
        {"url": _http_url(url, "url")} if url is not None
        else {"origin": origin_of(_http_url(origin, "origin"))})
    form = api_form_factor(form_factor)
    if form is not None:
        query["formFactor"] = form
    return query


def record_of(client: CruxClient, query: dict[str, Any], *, refresh: bool) -> pd.DataFrame:
    """The ``queryRecord`` answer to ``query`` as a frame; a 404 raises
    :class:`~pagelab.field.FieldNotFoundError`."""
    answer = client.query(RECORD, query, refresh=refresh)
    if answer.status == 404:
        raise not_found(query)
    return _parsed(record_frame, answer.body, FieldRecord)


def _parsed(parse: Any, body: dict[str, Any], kind: type[pd.DataFrame]) -> pd.DataFrame:
    try:
        return kind(parse(body))
    except (ValueError, TypeError, KeyError) as exc:
        raise FieldError(f"the Chrome UX Report API's answer is not a record: {exc}") from exc


def record(
    url: str | None = None,
    *,
    origin: str | None = None,
    form_factor: str | None = None,
    refresh: bool = False,
    api_key: str | None = None,
) -> pd.DataFrame:
    """The Chrome UX Report of a page (``url``) or an ``origin``: the p75 of its real Chrome
    users' page loads over the last 28 days, one row per metric (the registry's names).

    Columns: ``target`` (the URL or origin as the API normalised it), ``level`` (``page`` or
    ``origin``), ``form_factor`` (``phone``, ``desktop``, ``tablet``, or ``all`` when
    ``form_factor`` is None), ``metric``, ``first_date`` and ``last_date`` (the collection
    period), ``p75`` (ms; CLS unitless), ``good`` / ``needs_improvement`` / ``poor`` (the
    shares of page loads, 0-1, cut at the registry's thresholds) and ``rating`` (of the p75).

    The key is ``api_key`` or ``$PAGELAB_CRUX_API_KEY``; the day's answer is reused unless
    ``refresh``. Raises :class:`~pagelab.field.FieldNotFoundError` when the report has no
    data for it (try its origin), :class:`~pagelab.field.FieldKeyError`,
    :class:`~pagelab.field.FieldQuotaError`, :class:`~pagelab.field.FieldTransportError`.
    """
    return record_of(CruxClient(api_key), query_for(url, origin, form_factor),
                     refresh=refresh)


def history(
    url: str | None = None,
    *,
    origin: str | None = None,
    form_factor: str | None = None,
    refresh: bool = False,
    api_key: str | None = None,
) -> pd.DataFrame:
    """The Chrome UX Report's history of a page or an origin: about six months of weekly
    periods (each the 28 days ending that week), one row per metric and period, oldest
    first; a period without enough users has NaN values. Columns and errors as
    :func:`record`'s."""
    query = query_for(url, origin, form_factor)
    answer = CruxClient(api_key).query(HISTORY, query, refresh=refresh)
    if answer.status == 404:
        raise not_found(query)
    return _parsed(history_frame, answer.body, FieldHistory)
