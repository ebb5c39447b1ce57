"""The demo shop's add-to-cart flow (``/shop?block=<ms>``: the slow button's click handler
keeps the main thread busy that many milliseconds), as the engine tests measure it."""

from __future__ import annotations

from pagelab import Flow

#: True once a click has added the item: the handler sets it before it returns.
ADDED = '#cart-count[data-count="1"]'


def handler_ms(flow: str) -> float:
    """The busy time, in ms, of the click handler of :func:`add_to_cart`'s flow ``flow``."""
    return float(flow.removesuffix(" ms"))


def add_to_cart(base_url: str, block_ms: int) -> Flow:
    """A flow named ``"<block_ms> ms"``: the shop page, then a timespan around a click on
    the slow button, ended as soon as the item is in the cart."""
    return (Flow(f"{block_ms} ms")
            .navigate(f"{base_url}/shop?block={block_ms}", name="shop")
            .start_timespan("add").click("#add-slow").wait_for(ADDED).end_timespan())
