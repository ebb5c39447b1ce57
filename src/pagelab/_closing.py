"""What makes pagelab's closable objects (the clients, the runners, the engine, the progress
bar) context managers: leaving the ``with`` block calls their ``close()``."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["Closing"]


class Closing:
    """``with obj:`` returns ``obj`` and calls ``obj.close()`` on the way out, errors or not."""

    def close(self) -> None:
        """Release what the object holds (each subclass says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
