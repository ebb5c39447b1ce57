""":func:`pagelab.scan`: discover a site's pages, group them by template, measure a sample of
each through :func:`pagelab.measure`, and rank the templates worst first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagelab._discovery import (
    Discovery,
    TemplateRule,
    discover,
    from_wire,
    glob_list,
    group_templates,
    sample_templates,
)
from pagelab._exceptions import APIError, DiscoveryError, InvalidInputError
from pagelab._measure import Results, measure
from pagelab._public import publish
from pagelab.budgets import TemplateScan
from pagelab.frames import with_template
from pagelab.models import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_PAGES,
    DEFAULT_PER_TEMPLATE,
    DISCOVERY_FAILED,
    ConfigInput,
    ProgressCallback,
)
from pagelab.runners import ApiRunner, Runner, connect

if TYPE_CHECKING:
    import pandas as pd

    from pagelab._readable import Summary

__all__ = ["ScanResults", "scan", "scan_sample"]


class ScanResults(Results):
    """The runs of a :func:`pagelab.scan`: :class:`~pagelab.Results` whose frame has a
    ``template`` column (after ``url``) and whose :meth:`summary` ranks the rows worst first
    when grouped by ``template``. ``discovery`` holds what discovery found (the pages,
    their source, the sitemaps read, the URLs dropped and why), ``templates`` each page's
    template and ``sample`` each template's measured pages."""

    def __init__(self, reports: Iterable[Any], runs: Sequence[int | None] | None = None, *,
                 runner: Runner | None = None, interrupted: bool = False,
                 templates: Mapping[str, str] | None = None,
                 sample: Mapping[str, Sequence[str]] | None = None,
                 discovery: Discovery | None = None) -> None:
        super().__init__(reports, runs, runner=runner, interrupted=interrupted)
        #: Every discovered page -> its template.
        self.templates: dict[str, str] = dict(templates or {})
        #: Every template -> the pages measured.
        self.sample: dict[str, list[str]] = {t: list(u) for t, u in (sample or {}).items()}
        #: What discovery found (None when built from a frame).
        self.discovery = discovery

    @property
    def frame(self) -> pd.DataFrame:
        frame = super().frame
        if "template" not in frame.columns:
            frame = with_template(frame, [self.templates.get(str(url)) for url in frame["url"]])
        return frame

    def summary(self, by: str | Sequence[str] | None = None, aggregation: str = "median",
                metrics: str | Iterable[str] | None = None, *,
                agg: str | None = None) -> Summary:
        """:meth:`pagelab.Results.summary`; grouped by ``template``, the rows are ranked
        worst first (:func:`pagelab._readable.rank_worst_first`)."""
        from pagelab._readable import Summary, rank_worst_first

        table = super().summary(by, aggregation, metrics, agg=agg)
        columns = [by] if isinstance(by, str) else list(by or [])
        return Summary(rank_worst_first(table)) if "template" in columns else table


def scan(
    start_url: str,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    per_template: int = DEFAULT_PER_TEMPLATE,
    runs: int = 1,
    devices: str | Sequence[str] | None = None,
    locations: str | Sequence[str] | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    progress: bool | ProgressCallback = True,
    runner: Runner | None = None,
    template: TemplateRule | None = None,
    seed: int = 0,
    depth: int = DEFAULT_DEPTH,
    config: ConfigInput = None,
) -> ScanResults:
    """Measure a whole site by the kind of page: discover its pages, group them by
    template, measure ``per_template`` pages of each ``runs`` times on every device and
    location (interleaved, through :func:`pagelab.measure` and the runner: an
    :class:`~pagelab.ApiRunner` runs them through the API as batches).

    Discovery (docs/scan.md): the scope is the start URL's origin and path prefix; the
    site's sitemaps first (``robots.txt``'s ``Sitemap:`` lines, else ``/sitemap.xml``;
    indexes and gzipped sitemaps followed), else a breadth-first crawl of links ``depth``
    deep; at most ``max_pages`` pages; ``include``/``exclude`` are path globs (``*``
    within a segment, ``**`` across). ``template``: a function ``url -> name or None`` or
    path globs, each a template (pages left over get the default rule). The sample is
    deterministic for a ``seed``. Costs templates x per_template x runs x devices x
    locations runs. ``devices``/``locations`` default to measure's (mobile, us).

    Raises :class:`~pagelab.DiscoveryError` when the site's pages cannot be found (an
    unreachable start URL, a sitemap that is not XML, too big, or loops) and
    :class:`~pagelab.InvalidInputError` for bad arguments, before any test runs."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InvalidInputError(f"runs: expected a positive integer, got {runs!r}")
    if runner is not None and not isinstance(runner, Runner):
        raise InvalidInputError(f"runner: expected a pagelab Runner, got {type(runner).__name__}")
    owned = runner is None
    active = connect() if runner is None else runner
    try:
        bar = _DiscoveryBar() if progress is True and not isinstance(active, ApiRunner) else None
        try:
            found, grouped = _discover_on(
                active, start_url, max_pages=max_pages, include=include, exclude=exclude,
                depth=depth, per_template=per_template, seed=seed,
                on_page=bar.add if bar else None)
        finally:
            if bar is not None:
                bar.close()
        if not found.pages:
            raise DiscoveryError(
                f"no page found in scope of {found.start_url} (sitemaps read: "
                f"{len(found.sitemaps)}; dropped: {dict(found.dropped) or 'none'})")
        if grouped is not None and template is None:
            templates, sample = grouped
        else:
            # A rule of the caller's (a function cannot be sent): the pages regrouped here.
            templates = group_templates(found.pages, template)
            sample = sample_templates(templates, per_template, seed)
        urls = [url for chosen in sample.values() for url in chosen]
        # measure's own defaults when not given (mobile, us): written once, there.
        matrix: dict[str, Any] = {name: value for name, value in (("devices", devices),
                                                                  ("locations", locations))
                                  if value is not None}
        results = measure(urls, runs=runs, config=config, runner=active, progress=progress,
                          **matrix)
    finally:
        if owned:
            active.close()
    run_indices = [None if run is None or run != run else int(run)
                   for run in results.frame["run"]]
    return ScanResults(results.reports, run_indices, runner=results.runner,
                       interrupted=results.interrupted, templates=templates, sample=sample,
                       discovery=found)


def _discover_on(
    runner: Runner | None, start_url: str, *, max_pages: int = DEFAULT_MAX_PAGES,
    include: str | Sequence[str] | None = None, exclude: str | Sequence[str] | None = None,
    depth: int = DEFAULT_DEPTH, per_template: int = DEFAULT_PER_TEMPLATE, seed: int = 0,
    on_page: Callable[[str], None] | None = None,
) -> tuple[Discovery, tuple[dict[str, str], dict[str, list[str]]] | None]:
    """The site's discovery and, when the server discovered it, the server's
    ``(page -> template, template -> sample)`` by the default rule. On an
    :class:`ApiRunner` the server discovers, under its own egress rules
    (``POST /v1/discoveries``); on any other runner (or none), this process does."""
    if not isinstance(runner, ApiRunner):
        return discover(start_url, max_pages=max_pages, include=include, exclude=exclude,
                        depth=depth, on_page=on_page), None
    try:
        site = runner.client.discover(
            start_url, max_pages=max_pages, include=glob_list(include, "include"),
            exclude=glob_list(exclude, "exclude"), depth=depth, per_template=per_template,
            seed=seed)
    except APIError as exc:
        if exc.code == DISCOVERY_FAILED:
            raise DiscoveryError(exc.message) from exc
        raise
    found, templates, sample = from_wire(site)
    return found, (templates, sample)


def scan_sample(plan: TemplateScan, runner: Runner | None = None) -> dict[str, list[str]]:
    """The pages a budget file's scan measures: its site discovered from the start URL
    (with the options the file sets; on the server of an :class:`ApiRunner`, as
    :func:`scan` discovers), each page given the first of the budgeted templates (path
    globs) that matches it, and each template sampled as :func:`scan` samples; a template
    no page matches is absent. Raises :class:`~pagelab.DiscoveryError` as :func:`scan`
    does."""
    options = dict(plan.options)
    found, _ = _discover_on(runner, plan.start_url, **options)
    templates = group_templates(found.pages, list(plan.templates))
    budgeted = {url: name for url, name in templates.items() if name in plan.templates}
    sampling = {name: options[name] for name in ("per_template", "seed") if name in options}
    return sample_templates(budgeted, **sampling)


class _DiscoveryBar:
    """A ``tqdm.auto`` bar counting the pages found (the total is not known)."""

    def __init__(self) -> None:
        from tqdm.auto import tqdm

        self._bar: Any = tqdm(desc="discovering", unit="page", dynamic_ncols=True)

    def add(self, _url: str) -> None:
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


publish("pagelab", globals(), ["ScanResults", "scan"])
