"""What every widget shares: lazy ipywidgets, the worker thread with Run and Stop, error
display, tables and figures as plain widget values.

Why widget values and not an ``Output`` widget: ``with output:`` captures only what the
kernel's main thread prints for the cell being executed, so a worker thread's plots and
errors would land in the kernel log. Setting an ``HTML`` or ``Image`` widget's value is a
comm message that works from any thread and that a test can read back.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pagelab import _exceptions as errors
from pagelab._extras import require
from pagelab._html import Markup
from pagelab.models import RATING_COLOURS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from pagelab.runners import Runner

__all__ = [
    "PLOT_PLACEHOLDER",
    "Panel",
    "bare_figure",
    "draw_figure",
    "error_message",
    "figure_png",
    "ipywidgets",
    "png_bytes",
    "show_png",
]

#: Pixel size of the plots the widgets draw (at 100 dpi).
FIGURE_SIZE_IN = (8.0, 4.0)
FIGURE_DPI = 100


def ipywidgets() -> ModuleType:
    """The ipywidgets module, or :class:`~pagelab.MissingDependencyError` with the hint."""
    return require("ipywidgets", "notebook")


def error_message(exc: BaseException) -> str:
    """One readable sentence for an error raised while a widget worked."""
    text = str(exc).strip() or type(exc).__name__
    # Most specific first: several of these share a base class.
    hints: tuple[tuple[type[BaseException], str], ...] = (
        (errors.EngineNotInstalledError, "The local engine is not installed ({}). "
                                  "Run `pagelab setup`, then press Run again."),
        (errors.EngineError, "The local engine could not run: {}"),
        (errors.InsufficientCreditsError,
         "The service refused the test: no credits left (402). {}"),
        (errors.AuthenticationError, "The service refused the API key (401): {}"),
        (errors.RateLimitedError, "The service is rate limiting this key (429): {}"),
        (errors.RequestTimeoutError, "Timed out: {}"),
        (errors.TransportError, "Could not reach the service: {}"),
        (errors.InvalidInputError, "Invalid input: {}"),
        (errors.NotFoundError, "Not found: {}"),
        (errors.MissingDependencyError, "{}"),
        (errors.PagelabError, "{}"),
    )
    for kind, template in hints:
        if isinstance(exc, kind):
            return template.format(text)
    return f"Unexpected error ({type(exc).__name__}): {text}"


def error_html(message: str) -> str:
    background, colour = RATING_COLOURS["poor"]
    return str(Markup(
        '<div class="pagelab-error" style="color:{};background:{};border-left:3px solid {};'
        'padding:4px 8px;white-space:pre-wrap">{}</div>'
    ).format(colour, background, colour, message))


def draw_figure(draw: Callable[[Axes], object],
                size: tuple[float, float] = FIGURE_SIZE_IN) -> Figure:
    """A fresh figure with ``draw`` done on its axes, laid out by constrained layout (which
    makes room for a legend beside the axes and keeps the title inside the figure).

    A bare :class:`matplotlib.figure.Figure` renders with Agg whatever the notebook's
    backend is, from any thread, and pyplot's global state is never touched.
    """
    figure = bare_figure()
    figure.set_size_inches(size)
    draw(figure.subplots())
    return figure


def bare_figure() -> Figure:
    """A fresh figure, not pyplot's, laid out by constrained layout (see :func:`draw_figure`);
    a plot that draws a whole figure (:func:`pagelab.plots.filmstrip_compare`) sizes it."""
    figure_module = require("matplotlib.figure", "notebook")
    figure: Figure = figure_module.Figure(dpi=FIGURE_DPI, layout="constrained")
    return figure


def png_bytes(figure: Figure) -> bytes:
    """``figure`` as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def figure_png(draw: Callable[[Axes], object], size: tuple[float, float] = FIGURE_SIZE_IN) -> bytes:
    """:func:`draw_figure` as PNG bytes."""
    return png_bytes(draw_figure(draw, size))


def show_png(area: Any, image: Any, png: bytes | None, empty: list[Any]) -> None:
    """``png`` in ``image`` as ``area``'s one child, or ``empty`` as its children for None:
    never an empty image, which a browser draws as a broken one."""
    if png:
        image.value = png
        area.children = [image]
    else:
        area.children = empty
        image.value = b""


#: What the plot area says until there is a plot (an empty image would show as broken).
PLOT_PLACEHOLDER = "The plot appears here after a run."


class Panel:
    """A widget with Run and Stop whose work runs on a worker thread.

    Subclasses build their controls in ``_controls()``, do the work in ``_work()`` (on the
    worker thread; it should check ``self._stop_event`` between steps) and show its result
    in ``_show()``. The kernel's main thread stays free, so the page stays live and Stop
    is heard while a run goes on.
    """

    _title = ""

    def __init__(self, runner: Runner | None = None) -> None:
        w = ipywidgets()
        self._w = w
        self._runner = runner
        self._thread: threading.Thread | None = None
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self.error: BaseException | None = None
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.stop_button = w.Button(description="Stop", icon="stop", disabled=True)
        self.run_button.add_class("pagelab-run")
        self.stop_button.add_class("pagelab-stop")
        self.run_button.on_click(lambda _button: self.run())
        self.stop_button.on_click(lambda _button: self.stop())
        self.status = w.HTML(value="")
        self.status.add_class("pagelab-status")
        self.error_box = w.HTML(value="")
        self.error_box.add_class("pagelab-error-box")
        #: The latest plot as a PNG image, shown in ``plot_area`` once there is one.
        self.plot = w.Image(format="png", value=b"")
        self.plot.add_class("pagelab-plot")
        self._plot_placeholder = w.HTML(
            value=str(Markup('<i class="pagelab-plot-placeholder">{}</i>').format(PLOT_PLACEHOLDER))
        )
        self.plot_area = w.Box([self._plot_placeholder])
        self.plot_area.add_class("pagelab-plot-area")

    # -- public ------------------------------------------------------------------------

    @property
    def runner(self) -> Runner:
        """The runner used; :func:`pagelab.connect` makes one on first use when none given."""
        if self._runner is None:
            import pagelab

            self._runner = pagelab.connect()
        return self._runner

    @property
    def running(self) -> bool:
        """True while the worker thread works."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def run(self) -> None:
        """Start the work on a worker thread (what the Run button does); returns at once."""
        with self._lock:
            if self.running:
                return
            self._stop_event.clear()
            self.error = None
            self.error_box.value = ""
            self.run_button.disabled = True
            self.stop_button.disabled = False
            try:
                self._prepare()
            except Exception as exc:  # bad controls: shown, nothing started
                self._fail(exc)
                self._finish()
                return
            self._thread = threading.Thread(
                target=self._main, name=f"pagelab-{type(self).__name__}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Ask the work to stop after the test in progress (what the Stop button does)."""
        if self.running:
            self._stop_event.set()
            self.stop_button.disabled = True
            self._set_status("Stopping after the test in progress…")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the work ends (``timeout`` in seconds); True when it has ended."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running

    @property
    def widget(self) -> Any:
        """The ipywidgets box to display (the object displays itself too)."""
        return self._box

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self._box._repr_mimebundle_(**kwargs)

    # -- for subclasses ----------------------------------------------------------------

    def _prepare(self) -> None:
        """Read and check the controls on the calling thread; raise to refuse."""

    def _work(self) -> Any:
        raise NotImplementedError

    def _show(self, result: Any) -> None:
        raise NotImplementedError

    def _set_plot(self, png: bytes | None) -> None:
        """Show ``png`` in the plot area, or the placeholder text for None."""
        show_png(self.plot_area, self.plot, png, [self._plot_placeholder])

    def _set_status(self, text: str) -> None:
        self.status.value = str(Markup('<span class="pagelab-status-text">{}</span>').format(text))

    def _build(self, *children: Any) -> None:
        items = list(children)
        if self._title:
            items.insert(0, self._w.HTML(value=str(Markup("<b>{}</b>").format(self._title))))
        self._box = self._w.VBox(items)
        self._box.add_class(f"pagelab-{type(self).__name__.lower()}")

    # -- the worker thread ---------------------------------------------------------------

    def _main(self) -> None:
        try:
            result = self._work()
            self._show(result)
        except Exception as exc:
            self._fail(exc)
        finally:
            self._finish()

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        message = error_message(exc)
        self.error_box.value = error_html(message)
        self._set_status("Failed.")

    def _finish(self) -> None:
        self.run_button.disabled = False
        self.stop_button.disabled = True
