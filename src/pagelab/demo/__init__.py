"""The bundled demo site: local pages with known performance traits, on loopback only.

``/fast`` scores near 100, ``/heavy`` has a large LCP image, a render-blocking script and a
long task, ``/shift`` has a late banner that shifts the layout, ``/slow?ms=N`` answers after
N ms. Every request and every beacon the pages send is recorded::

    with DemoServer() as site:
        run_test(site.page_url("heavy"))
        print(site.beacons)

:class:`CruxStandIn` replays recorded answers of the Chrome UX Report API on loopback, for
the field-data notebook and tests (``PAGELAB_CRUX_ENDPOINT``).
"""

from pagelab._public import publish

from ._crux import CruxStandIn
from ._site import PAGES, WIDGET_BYTES, DemoServer, RecordedRequest, serve

# isort: split
# For ``pagelab demo`` and the tests (not public API, not in __all__).
from ._site import serve_forever as serve_forever

__all__ = [
    "PAGES",
    "WIDGET_BYTES",
    "CruxStandIn",
    "DemoServer",
    "RecordedRequest",
    "serve",
]

publish(__name__, globals(), __all__)
