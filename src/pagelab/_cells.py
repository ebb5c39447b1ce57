"""What a cell is: the one definition every layer groups runs by.

A *cell* is one combination of the wide frame's :data:`CELL` columns (URL x device x
location x connection, and for a user flow's step its flow and step names: a step of a flow
is measured as a page is, per device, location and connection). A page run's ``flow`` and
``step`` are missing, so its cell is what it always was. Runs of one cell are
repeats of one measurement; statistics, budgets, comparisons, reports, widgets and the pytest
plugin aggregate within a cell and never across cells unless told to. A missing connection
(the device's default) is a value of its own, not a wildcard.

Public as :mod:`pagelab.frames`' ``CELL`` and helpers; this module imports no pandas, so the
budgets and the pytest plugin use it without loading the analysis stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CELL", "CellKey", "cell_columns", "cell_key", "cell_keys", "cell_label"]

#: The columns that make a cell, in the order they are shown.
CELL: tuple[str, ...] = ("url", "device", "location", "connection", "flow", "step")

#: One cell's :data:`CELL` values as text (None: missing, e.g. the default connection).
CellKey = tuple[str | None, ...]


def cell_columns(frame: pd.DataFrame, *, exclude: Iterable[str] = ()) -> list[str]:
    """The :data:`CELL` columns of ``frame`` holding any value (less ``exclude``): the
    columns that split its runs into cells."""
    skip = set(exclude)
    return [c for c in CELL
            if c not in skip and c in frame.columns and bool(frame[c].notna().any())]


def _text(value: Any) -> str | None:
    if value is None or (not isinstance(value, str) and _is_missing(value)):
        return None
    return str(value)


def _is_missing(value: Any) -> bool:
    try:
        return bool(value != value)  # NaN, pd.NA (raises on ambiguous truth), NaT
    except TypeError:
        return True


def cell_key(values: Mapping[Any, Any] | Sequence[Any]) -> CellKey:
    """The :data:`CELL` values of one row (a mapping such as a record, or values in
    :data:`CELL` order, a page's four) as a :data:`CellKey`; a column the row lacks counts
    as missing."""
    if not isinstance(values, Mapping):
        return tuple(_text(v) for v in (*values, *(None,) * (len(CELL) - len(values))))
    return tuple(_text(values.get(c)) for c in CELL)


def cell_keys(frame: pd.DataFrame) -> list[CellKey]:
    """Each row's :data:`CellKey`, in row order."""
    columns = [frame[c].astype(object).tolist() if c in frame.columns else [None] * len(frame)
               for c in CELL]
    return [tuple(_text(v) for v in row) for row in zip(*columns, strict=True)]


def cell_label(key: CellKey | Mapping[Any, Any]) -> str:
    """``mobile/us https://example.com/``, with the connection when one was set
    (``mobile/us/3g https://example.com/``), and a flow's step when the cell is one
    (``mobile/us flow 'checkout' step 'pay' https://example.com/cart``): how messages name
    a cell. A key shorter than :data:`CELL` (a page's URL, device, location, connection)
    reads its missing values as None."""
    values = cell_key(key)
    named = dict(zip(CELL, values, strict=True))
    where = "/".join(v for v in (named["device"], named["location"], named["connection"])
                     if v is not None)
    if named["flow"] is not None:
        where += f" flow {named['flow']!r}"
        if named["step"] is not None:
            where += f" step {named['step']!r}"
    return f"{where} {named['url']}" if named["url"] is not None else where
