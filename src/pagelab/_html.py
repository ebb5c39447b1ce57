"""The one home of pagelab's HTML: escaping, the safe-link rule, pills, tables and templates.

Every HTML pagelab writes goes through here: the notebook displays (``_repr_html_``), the
export report, the service's hosted pages and the widgets. Fragments are
:class:`markupsafe.Markup` (HTML already safe); anything else is text and is escaped where it
lands, so a helper cannot forget to escape and a template cannot escape twice. Whole documents
come from the Jinja2 templates in ``pagelab/templates`` with autoescaping on (:func:`render`).

Nothing is loaded from anywhere: colours are inline; the only links are reports' addresses
that pass :func:`safe_url` (in a notebook's display, :func:`for_notebook`, a report file's
address is served from loopback: a notebook's browser refuses ``file://``). This module
knows no metric: how a metric's value or a status is coloured (the registry's palette) is
:mod:`pagelab.models`' (``metric_value``, ``status_pill``), so the models may use this
module and imports flow one way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from markupsafe import Markup, escape

from pagelab._served import served_url

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "MISSING",
    "Markup",
    "breakable",
    "escape",
    "for_notebook",
    "link",
    "pill",
    "render",
    "safe_url",
    "table",
]

#: Shown for a missing value (an en dash, as typeset tables do).
MISSING = "\u2013"

#: The schemes a link may have. Everything else (``javascript:``, ``data:``, ``vbscript:``,
#: relative or scheme-less text) is shown as text, never as a link: report addresses come from
#: servers and frames pagelab does not control.
_LINK_SCHEMES = ("http://", "https://", "file://")

def safe_url(url: object) -> str | None:
    """``url`` when it may be a link's target (``http(s)://`` or ``file://``), else None."""
    if not isinstance(url, str):
        return None
    stripped = url.strip()
    # Browsers drop control characters and spaces inside a scheme ("java\tscript:"): the test
    # is on the text as given, so anything but a plain allowed prefix is refused.
    if stripped != url or not stripped.lower().startswith(_LINK_SCHEMES):
        return None
    return stripped


#: Whether the HTML being made is a notebook's display (:func:`for_notebook`).
_IN_NOTEBOOK: ContextVar[bool] = ContextVar("pagelab_in_notebook", default=False)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def for_notebook(render: Callable[_P, _R]) -> Callable[_P, _R]:
    """``render`` (a ``_repr_html_``, a widget's table) makes HTML a notebook shows: its
    links to report files point to the loopback server of :mod:`pagelab._served`, since a
    notebook's browser refuses ``file://`` links. Documents written to disk keep them."""

    @wraps(render)
    def rendering(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _notebook():
            return render(*args, **kwargs)

    return rendering


@contextmanager
def _notebook() -> Iterator[None]:
    token = _IN_NOTEBOOK.set(True)
    try:
        yield
    finally:
        _IN_NOTEBOOK.reset(token)


def link(url: object, text: str, *, fallback: str | None = None) -> Markup:
    """A link opening ``url`` in a new tab when :func:`safe_url` allows it; else
    ``fallback`` as text (nothing by default). In a notebook's display (:func:`for_notebook`)
    a report file's link is served from loopback, the file's path in its tooltip."""
    target = safe_url(url)
    if target is None:
        return escape(fallback) if fallback else Markup("")
    served = served_url(target) if _IN_NOTEBOOK.get() else target
    tip = Markup(' title="{}"').format(target) if served != target else Markup("")
    return Markup('<a href="{}"{} target="_blank" rel="noopener noreferrer">{}</a>').format(
        served, tip, text)


def pill(text: str, colours: tuple[str, str], title: str = "") -> Markup:
    """``text`` on a coloured rounded background (``colours``: background, text)."""
    background, foreground = colours
    tip = Markup(' title="{}"').format(title) if title else Markup("")
    return Markup(
        '<span{} style="background:{};color:{};border-radius:3px;padding:1px 6px;'
        'white-space:nowrap">{}</span>'
    ).format(tip, background, foreground, text)


#: Inline styles of :func:`table`: inline so a fragment reads the same in JupyterLab, VS Code,
#: a widget, a static page or an e-mail (no style sheet to carry along).
_TABLE = "border-collapse:collapse;margin:6px 0;font-size:13px"
_TH = ("padding:3px 8px;border-bottom:1px solid #bdc1c6;font-weight:600;text-align:{align};"
       "vertical-align:bottom")
_TD = "padding:3px 8px;border-bottom:1px solid #e8eaed;text-align:{align};vertical-align:top"
# Wrapping columns break at spaces and at :func:`breakable`'s points (a URL after its
# slashes), inside a word only when a part is wider than the column.
_WRAP = "white-space:normal;overflow-wrap:break-word;min-width:8em;max-width:30em"
#: Where a URL or a path may break: after each of these characters.
_BREAK_AFTER = re.compile(r"(?<=[/?&=._])(?=[^/?&=._])")


def breakable(text: object) -> Markup:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each ``/ ? & = . _``
    so a URL wraps between its parts, never in the middle of one."""
    if isinstance(text, Markup):
        return text
    # Split the text, then escape each part: a break never lands inside an entity.
    return Markup("<wbr>").join(_BREAK_AFTER.split(str(text)))


def table(
    headers: Sequence[object],
    rows: Iterable[Sequence[object]],
    *,
    align: Sequence[str] | None = None,
    css_class: str = "pagelab-table",
    row_keys: Iterable[str] | None = None,
    row_styles: Iterable[str] | None = None,
    titles: Sequence[str] | None = None,
    wrap: Sequence[bool] | None = None,
) -> Markup:
    """A table; a cell or header is text (escaped) or :class:`Markup` (kept).

    ``align`` per column (``left`` / ``right``; default left for the first column, right
    after), ``titles`` a tooltip per header, ``wrap`` which columns may wrap (long URLs:
    their text cells break between a URL's parts, :func:`breakable`),
    ``row_keys`` go in each row's ``data-key`` (what a browser test finds a row by) and
    ``row_styles`` are extra inline styles per row (a failed run's tint).
    """
    n = len(headers)
    aligns = list(align) if align is not None else ["left", *["right"] * (n - 1)]
    wraps = list(wrap) if wrap is not None else [False] * n
    tips = list(titles) if titles is not None else [""] * n
    head = Markup("").join(
        Markup('<th style="{}"{}>{}</th>').format(
            Markup(_TH.format(align=a)),
            Markup(' title="{}"').format(tip) if tip else Markup(""), h)
        for h, a, tip in zip(headers, aligns, tips, strict=True)
    )
    cell_styles = [
        Markup(_TD.format(align=a) + (";" + _WRAP if w else ";white-space:nowrap"))
        for a, w in zip(aligns, wraps, strict=True)
    ]
    keys = iter(row_keys) if row_keys is not None else None
    styles = iter(row_styles) if row_styles is not None else None
    body = []
    for row in rows:
        key = Markup(' data-key="{}"').format(next(keys)) if keys is not None else Markup("")
        extra = next(styles) if styles is not None else ""
        style = Markup(' style="{}"').format(extra) if extra else Markup("")
        cells = Markup("").join(
            Markup('<td style="{}">{}</td>').format(s, breakable(cell) if w else cell)
            for s, w, cell in zip(cell_styles, wraps, row, strict=True)
        )
        body.append(Markup("<tr{}{}>{}</tr>").format(key, style, cells))
    return Markup('<table class="{}" style="{}"><thead><tr>{}</tr></thead>'
                  "<tbody>{}</tbody></table>").format(
        css_class, Markup(_TABLE), head, Markup("").join(body))


@cache
def _environment() -> jinja2.Environment:
    # Loaded on the first document: `import pagelab` (the CLI, the pytest plugin) stays light.
    import jinja2

    # Autoescaping for every template whatever its name: documents only, no plain-text ones.
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pagelab", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals.update(MISSING=MISSING, link=link)
    return environment


def render(template: str, **context: Any) -> str:
    """The document ``template`` (a file in ``pagelab/templates``) filled with ``context``;
    text is escaped, :class:`Markup` fragments are kept."""
    return _environment().get_template(template).render(**context)
