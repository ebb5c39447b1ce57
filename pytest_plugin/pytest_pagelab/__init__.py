"""pytest-pagelab: performance budgets as pytest assertions (registered as ``pagelab``)."""

__all__: list[str] = []
