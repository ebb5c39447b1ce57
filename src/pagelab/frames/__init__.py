"""Reports as pandas DataFrames (the wide frame of runs and its tidy form)."""

from ._wide import COLUMNS, UNITS, to_frame, to_long

__all__ = ["COLUMNS", "UNITS", "to_frame", "to_long"]
