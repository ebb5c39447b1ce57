"""Why is b slower than a: the contributions of requests, resource types, entities,
main-thread categories, the INP phases of a timespan's slowest interaction and user timings
to the difference of two groups of runs (or of flow steps).

:func:`pagelab.stats.explain` chooses the runs (``by``, ``a``, ``b``, within cells) and
calls :func:`explain_runs` here; this module reads each run's LHR through the per-run
breakdowns of :mod:`pagelab.frames`, takes medians over the runs of each side and ranks the
differences on one scale, time (see ``docs/analysis.md``, "Why is it slower").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import pandas as pd

from pagelab._html import MISSING, Markup, pill, table
from pagelab.frames import main_thread, requests, third_parties, user_timings
from pagelab.frames import resource_type as budget_type
from pagelab.models import INP_PHASES, RATING_COLOURS, inp_phases

__all__ = ["EXPLANATION_COLUMNS", "KINDS", "Explanation", "amount", "causes", "cell_name",
           "contributions_table", "explain_runs", "explanation_html", "item_text",
           "normalise_url", "throughput_kbps", "totals"]

#: The kinds of contribution, in the order ties are ranked.
KINDS: tuple[str, ...] = ("request", "entity", "resource type", "main thread", "INP phase",
                          "user timing")

#: Column -> dtype of :attr:`Explanation.frame` (after the ``within`` columns).
EXPLANATION_COLUMNS: dict[str, Any] = {
    "kind": pd.CategoricalDtype(list(KINDS), ordered=True),
    "item": "string",
    "a": "float64",
    "b": "float64",
    "delta": "float64",
    "unit": "string",
    "weight_ms": "float64",
}

#: The (kind, unit) rows that add up requests already listed (an entity's bytes, a resource
#: type's bytes and count): another level of the same bytes, not another cause.
_TOTALS = frozenset({("entity", "bytes"), ("resource type", "bytes"),
                     ("resource type", "requests")})

# Query parameters whose values change on every load (tag snippets' cache busters).
_CACHE_BUSTERS = frozenset({"_", "cb", "cachebust", "cachebuster", "nocache", "rnd", "rand",
                            "random", "t", "ts", "timestamp", "bust"})
# A value that looks generated: 6+ hex digits or digits (a timestamp, a nonce, a hash).
_GENERATED = re.compile(r"[0-9a-fA-F]{6,}|[0-9]{6,}")
# Without a throttled throughput (throttling "provided"): what bytes cost, 10 Mbit/s.
_DEFAULT_KBPS = 10_240.0
# Smaller deltas are noise between runs of one page and are left out of the frame.
_MIN_BYTES = 1_000
_MIN_MS = 5.0
# The summary names changes worth at least this much time.
_SUMMARY_MS = 20.0


def normalise_url(url: str) -> str:
    """``url`` with cache-busting query values replaced by ``*``: a parameter named as cache
    busters are (``cb``, ``_``, ``t``, ``ts``, ``rand``...) or whose value looks generated
    (6+ hex digits or digits), so one resource matches itself across runs."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [(k, "*" if k.lower() in _CACHE_BUSTERS or _GENERATED.fullmatch(v) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query, safe="*")))


def throughput_kbps(lhr: Mapping[str, Any]) -> float:
    """The run's throttled download throughput, kbit/s (bits per ms): Lighthouse's simulated
    ``throughputKbps``, or ``downloadThroughputKbps`` with applied throttling; 10 Mbit/s
    without throttling."""
    settings = lhr.get("configSettings") or {}
    throttling = settings.get("throttling") or {}
    method = settings.get("throttlingMethod")
    key = "throughputKbps" if method == "simulate" else "downloadThroughputKbps"
    value = throttling.get(key)
    if method == "provided" or not isinstance(value, int | float) or value <= 0:
        return _DEFAULT_KBPS
    return float(value)


@dataclass(frozen=True, slots=True)
class _Run:
    """What one run contributes, as plain numbers."""

    request_bytes: dict[str, float]
    request_ms: dict[str, float]
    request_info: dict[str, tuple[str, str]]  # url -> (budget type, entity)
    type_bytes: dict[str, float]
    type_count: dict[str, float]
    entity_bytes: dict[str, float]
    entity_ms: dict[str, float]
    main_thread_ms: dict[str, float]
    main_thread_labels: dict[str, str]
    user_timing_ms: dict[str, float]
    #: A timespan's slowest interaction: INP phase (in words) -> ms.
    inp_phase_ms: dict[str, float]
    kbps: float


def _run(lhr: Mapping[str, Any]) -> _Run:
    table = requests(lhr)
    main_url = str(lhr.get("mainDocumentUrl") or lhr.get("finalUrl") or "")
    request_bytes: dict[str, float] = {}
    request_ms: dict[str, float] = {}
    info: dict[str, tuple[str, str]] = {}
    type_bytes: dict[str, float] = {}
    type_count: dict[str, float] = {}
    records: list[dict[Any, Any]] = table.to_dict("records")
    for row in records:
        url = str(row["url"])
        if urlsplit(url).scheme not in ("http", "https"):
            continue
        # The page itself is one item whatever its URL, so two pages compare.
        key = "(the page)" if url == main_url else normalise_url(url)
        size = 0.0 if pd.isna(row["transfer_size"]) else float(row["transfer_size"])
        request_bytes[key] = request_bytes.get(key, 0.0) + size
        if not pd.isna(row["duration_ms"]):
            request_ms[key] = max(request_ms.get(key, 0.0), float(row["duration_ms"]))
        kind = budget_type(row["resource_type"])
        info[key] = (kind, "" if pd.isna(row["entity"]) else str(row["entity"]))
        type_bytes[kind] = type_bytes.get(kind, 0.0) + size
        type_count[kind] = type_count.get(kind, 0.0) + 1
    parties = third_parties(lhr)
    # The first party's main-thread time comes from bootup-time, which drops scripts under
    # 50 ms: not comparable between pages, and the categories below hold it anyway.
    third = parties[parties["party"] == "third"]
    work = main_thread(lhr)
    timings = user_timings(lhr)
    phases = inp_phases(lhr)
    return _Run(
        request_bytes, request_ms, info, type_bytes, type_count,
        dict(zip(parties["entity"], parties["transfer_bytes"].astype(float), strict=True)),
        dict(zip(third["entity"], third["main_thread_ms"], strict=True)),
        dict(zip(work["category"], work["time_ms"], strict=True)),
        dict(zip(work["category"], work["label"], strict=True)),
        dict(zip(timings["name"], timings["value_ms"], strict=True)),
        {words: phases[name] for name, _, words in INP_PHASES if name in phases},
        throughput_kbps(lhr),
    )


def _medians(runs: Sequence[_Run], get: Callable[[_Run], Mapping[str, float]], *,
             absent: float | None) -> dict[str, float]:
    """Per key, the median over runs; a run without the key counts as ``absent`` (None:
    left out, so the median is over the runs that have it)."""
    keys = {key for run in runs for key in get(run)}
    out: dict[str, float] = {}
    for key in keys:
        values = [get(run).get(key, absent) for run in runs]
        present = [float(v) for v in values if v is not None]
        if present:
            out[key] = float(np.median(present))
    return out


@dataclass
class Explanation:
    """The contributions to the difference between two groups of runs, ranked.

    ``frame``: one row per contribution, largest first: the ``within`` columns (the cell),
    ``kind`` (request, entity, resource type, main thread, INP phase, user timing),
    ``item`` (a URL, an entity, a type, a category, a phase, a mark's name), ``a`` and
    ``b`` (medians over each side's runs), ``delta`` (``b - a``), ``unit`` (``bytes``,
    ``ms`` or ``requests``) and ``weight_ms``, the size the ranking uses: a time delta as
    it is, a byte delta as the time it takes at the runs' throttled throughput.
    ``summary``: the story in words.
    """

    frame: pd.DataFrame
    summary: str
    a_label: str = "a"
    b_label: str = "b"
    runs: tuple[int, int] = (0, 0)
    cells: list[str] = field(default_factory=list)
    #: Per cell (its name in ``cells``): the ids of a's runs and of b's, when known.
    run_ids: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    #: A main-thread category's words (``scriptEvaluation``: ``script evaluation``), as
    #: the runs' Lighthouse names it; the table, the plot and the summary show these.
    labels: dict[str, str] = field(default_factory=dict)

    def cell_of(self, position: int = 0) -> str:
        """The name (as in ``cells``) of the cell of the ``frame`` row at ``position``; the
        top row by default, the cell of the largest contribution."""
        row = self.frame.iloc[position]
        return cell_name({c: row[c] for c in self.frame.columns
                          if c not in EXPLANATION_COLUMNS})

    def __repr__(self) -> str:
        return f"<Explanation: {len(self.frame)} contributions; {self.summary}>"

    def _repr_html_(self) -> str:
        return str(explanation_html(self))


def explanation_html(explanation: Explanation, *, rows: int = 15,
                     heading: bool = True) -> Markup:
    """The explanation as HTML: a heading (unless ``heading`` is False, as where the page
    already has one), the summary, the ``rows`` largest causes as a table, then the same
    bytes totalled by entity and resource type, apart (each cause is shown once)."""
    parts = []
    if heading:
        parts.append(Markup("<p><b>Why {} differs from {}</b> ({} vs {} runs)</p>").format(
            explanation.b_label, explanation.a_label, *explanation.runs))
    parts.append(Markup('<p class="pagelab-explain-summary">{}</p>').format(
        explanation.summary))
    parts.append(contributions_table(causes(explanation.frame).head(rows),
                                     labels=explanation.labels))
    summed = totals(explanation.frame).head(rows)
    if len(summed):
        parts.append(Markup('<p class="pagelab-explain-totals">{}</p>').format(
            "The same requests totalled by entity and by resource type (not more causes):"))
        parts.append(contributions_table(summed, css_class="pagelab-explanation-totals"))
    return Markup("").join(parts)


def _is_total(frame: pd.DataFrame) -> pd.Series:
    pairs = zip(frame["kind"].astype(str), frame["unit"].astype(str), strict=True)
    return pd.Series([pair in _TOTALS for pair in pairs], index=frame.index, dtype=bool)


def causes(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of an explanation's frame that are causes (a request, main-thread time, a
    user timing), largest first; not the totals that add requests up (:func:`totals`)."""
    return frame[~_is_total(frame)]


def totals(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that total requests by entity or resource type (bytes, request counts)."""
    return frame[_is_total(frame)]


def item_text(kind: str, item: str, labels: Mapping[str, str]) -> str:
    """An item as a reader names it: a main-thread category in words, else as it is."""
    return labels.get(item, item) if kind == "main thread" else item


def contributions_table(frame: pd.DataFrame, *, labels: Mapping[str, str] | None = None,
                        css_class: str = "pagelab-explanation") -> Markup:
    """The rows of an explanation's frame as a table: the cell's columns, then kind, item
    (a main-thread category in ``labels``' words; a URL breaks between its parts), a, b and
    the delta (each with its unit; more in b coloured poor, less good) and the weight the
    ranking used."""
    within = [c for c in frame.columns if c not in EXPLANATION_COLUMNS]
    headers = [*within, "Kind", "Item", "a", "b", "\u0394 (b - a)", "Weight (ms)"]
    titles = [*[""] * len(within), "", "", "median over a's runs", "median over b's runs",
              "b minus a", "the size the ranking uses: bytes as download time"]
    body = []
    for row in frame.to_dict("records"):
        unit = str(row["unit"])
        delta = float(row["delta"])
        colours = RATING_COLOURS["poor" if delta > 0 else "good"]
        body.append([
            *(MISSING if _absent(row[c]) else str(row[c]) for c in within),
            str(row["kind"]), item_text(str(row["kind"]), str(row["item"]), labels or {}),
            amount(row["a"], unit), amount(row["b"], unit),
            pill(amount(delta, unit, signed=True), colours),
            amount(row["weight_ms"], "ms", unit_shown=False),
        ])
    n = len(within)
    return table(headers, body, titles=titles,
                 align=[*["left"] * (n + 2), *["right"] * 4],
                 wrap=[*[False] * (n + 1), True, *[False] * 4],
                 css_class=css_class)


def _absent(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def amount(value: object, unit: str, *, signed: bool = False, unit_shown: bool = True) -> str:
    """``value`` of ``unit`` as a reader wants it: bytes in B or KB (1 KB = 1,000 bytes),
    ms and request counts whole (one ``request``), ``signed`` with a + or - sign; a missing
    value is a dash."""
    if not isinstance(value, int | float | np.integer | np.floating) or _absent(value):
        return MISSING
    number = float(value)
    sign = "+" if signed else ""
    if unit == "bytes":
        return (f"{number / 1000:{sign},.0f} KB" if abs(number) >= 1000
                else f"{number:{sign},.0f} B")
    text = f"{number:{sign},.0f}"
    if text in ("+0", "-0", "0"):
        text = "0"
    if unit == "requests" and text.lstrip("+-") == "1":
        unit = "request"  # "+1 request", "2 requests"
    return f"{text} {unit}" if unit_shown else text


def _contributions(a_runs: Sequence[_Run], b_runs: Sequence[_Run]) -> list[dict[str, Any]]:
    kbps = float(np.median([run.kbps for run in (*a_runs, *b_runs)]))
    bytes_ms = 8.0 / kbps  # ms per byte: kbit/s is bits per ms
    rows: list[dict[str, Any]] = []

    def add(kind: str, get: Callable[[_Run], Mapping[str, float]], unit: str, *,
            absent: float | None, minimum: float, scale: float) -> None:
        a_side = _medians(a_runs, get, absent=absent)
        b_side = _medians(b_runs, get, absent=absent)
        for item in a_side.keys() | b_side.keys():
            a_value = a_side.get(item, 0.0 if absent is not None else math.nan)
            b_value = b_side.get(item, 0.0 if absent is not None else math.nan)
            delta = b_value - a_value
            if math.isnan(delta) or abs(delta) < minimum:
                continue
            rows.append({"kind": kind, "item": item, "a": a_value, "b": b_value,
                         "delta": delta, "unit": unit, "weight_ms": abs(delta) * scale})

    add("request", lambda r: r.request_bytes, "bytes", absent=0.0, minimum=_MIN_BYTES,
        scale=bytes_ms)
    add("request", lambda r: r.request_ms, "ms", absent=None, minimum=_MIN_MS, scale=1.0)
    add("entity", lambda r: r.entity_bytes, "bytes", absent=0.0, minimum=_MIN_BYTES,
        scale=bytes_ms)
    add("entity", lambda r: r.entity_ms, "ms", absent=0.0, minimum=_MIN_MS, scale=1.0)
    add("resource type", lambda r: r.type_bytes, "bytes", absent=0.0, minimum=_MIN_BYTES,
        scale=bytes_ms)
    add("resource type", lambda r: r.type_count, "requests", absent=0.0, minimum=0.5,
        scale=0.0)
    add("main thread", lambda r: r.main_thread_ms, "ms", absent=0.0, minimum=_MIN_MS,
        scale=1.0)
    add("INP phase", lambda r: r.inp_phase_ms, "ms", absent=None, minimum=_MIN_MS,
        scale=1.0)
    add("user timing", lambda r: r.user_timing_ms, "ms", absent=None, minimum=_MIN_MS,
        scale=1.0)
    order = {kind: i for i, kind in enumerate(KINDS)}
    rows.sort(key=lambda r: (-r["weight_ms"], order[r["kind"]], r["unit"] != "bytes",
                             r["item"]))
    return rows


def _summary(rows: Sequence[Mapping[str, Any]], a_runs: Sequence[_Run],
             b_runs: Sequence[_Run], b_label: str) -> str:
    """``b loads 1 more script (300 KB, 127.0.0.2) and spends +310 ms in script evaluation``."""
    info: dict[str, tuple[str, str]] = {}
    for run in (*a_runs, *b_runs):
        info.update(run.request_info)
    a_urls = {url for run in a_runs for url in run.request_bytes}
    b_urls = {url for run in b_runs for url in run.request_bytes}
    clauses: list[str] = []
    requests_rows = [r for r in rows if r["kind"] == "request" and r["unit"] == "bytes"
                     and r["weight_ms"] >= _SUMMARY_MS]
    for verb, urls in (("more", b_urls - a_urls), ("fewer", a_urls - b_urls)):
        by_type: dict[str, list[Mapping[str, Any]]] = {}
        for row in requests_rows:
            if row["item"] in urls:
                by_type.setdefault(info.get(row["item"], ("other", ""))[0], []).append(row)
        for kind, found in by_type.items():
            size = sum(abs(r["delta"]) for r in found)
            owners = sorted({info.get(r["item"], ("", ""))[1] for r in found} - {""})
            where = f", {', '.join(owners)}" if owners else ""
            noun = kind if len(found) == 1 else f"{kind}s"
            clauses.append(f"loads {len(found)} {verb} {noun} ({amount(size, 'bytes')}{where})")
    grown = [r for r in requests_rows if r["item"] in a_urls & b_urls]
    if grown:
        top = grown[0]
        word = "grows" if top["delta"] > 0 else "shrinks"
        clauses.append(f"{word} {_short(top['item'])} by {amount(abs(top['delta']), 'bytes')}")
    labels = _labels((*a_runs, *b_runs))
    for row in rows:
        if row["kind"] == "main thread" and row["weight_ms"] >= _SUMMARY_MS * 2.5:
            clauses.append(f"spends {row['delta']:+,.0f} ms in "
                           f"{item_text('main thread', row['item'], labels)}")
    for row in rows:
        if row["kind"] == "INP phase" and row["weight_ms"] >= _SUMMARY_MS * 2.5:
            clauses.append(f"takes {row['delta']:+,.0f} ms in its slowest interaction's "
                           f"{row['item']}")
    for row in rows:
        if row["kind"] == "user timing" and row["weight_ms"] >= _SUMMARY_MS * 2.5:
            word = "later" if row["delta"] > 0 else "sooner"
            clauses.append(f"reaches {row['item']} {abs(row['delta']):,.0f} ms {word}")
    if not clauses:
        return (f"{b_label} loads the same requests and spends about the same main-thread "
                "time (no difference worth 20 ms or more).")
    body = ", ".join(clauses[:-1]) + (" and " if len(clauses) > 1 else "") + clauses[-1]
    return f"{b_label} {body}."


def _labels(runs: Iterable[_Run]) -> dict[str, str]:
    """Main-thread category -> its words: Lighthouse's label with title-case words in lower
    case (``Script Evaluation``: ``script evaluation``; ``Parse HTML & CSS``: ``parse HTML &
    CSS``)."""
    labels: dict[str, str] = {}
    for run in runs:
        for category, label in run.main_thread_labels.items():
            if isinstance(label, str) and label:
                labels[category] = " ".join(
                    word.lower() if word[:1].isupper() and word[1:].islower() else word
                    for word in label.split())
    return labels


def _short(url: str) -> str:
    if url.startswith("("):
        return url
    parts = urlsplit(url)
    return parts.path.rsplit("/", 1)[-1] or parts.netloc


def cell_name(where: Mapping[str, Any]) -> str:
    """A cell's name in an explanation: its values joined by ``/`` (``mobile/us``)."""
    return "/".join(str(v) for v in where.values() if not _absent(v))


def explain_runs(
    cells: Iterable[tuple[dict[str, Any], list[Mapping[str, Any]], list[Mapping[str, Any]]]],
    *,
    a_label: str = "a",
    b_label: str = "b",
    run_ids: Mapping[str, tuple[list[str], list[str]]] | None = None,
) -> Explanation:
    """The explanation over ``cells``: each ``(within values, a's LHRs, b's LHRs)``;
    ``run_ids`` names those runs per cell (:func:`cell_name`), for the pictures."""
    frames: list[pd.DataFrame] = []
    summaries: list[str] = []
    names: list[str] = []
    counts = [0, 0]
    within: list[str] = []
    labels: dict[str, str] = {}
    for where, a_lhrs, b_lhrs in cells:
        within = list(where)
        a_runs = [_run(lhr) for lhr in a_lhrs]
        b_runs = [_run(lhr) for lhr in b_lhrs]
        labels.update(_labels((*a_runs, *b_runs)))
        counts[0] += len(a_runs)
        counts[1] += len(b_runs)
        rows = _contributions(a_runs, b_runs)
        part = pd.DataFrame(rows, columns=list(EXPLANATION_COLUMNS))
        for i, (key, value) in enumerate(where.items()):
            part.insert(i, key, [value] * len(part))
        frames.append(part)
        names.append(cell_name(where))
        summaries.append(_summary(rows, a_runs, b_runs, b_label))
    columns = [*within, *EXPLANATION_COLUMNS]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    for name, dtype in EXPLANATION_COLUMNS.items():
        frame[name] = frame[name].astype(dtype)
    if len(frames) > 1:
        frame = frame.sort_values("weight_ms", ascending=False, kind="stable",
                                  ignore_index=True)
    # Cells are named only when there is more than one to tell apart.
    summary = summaries[0] if len(summaries) == 1 else " ".join(
        f"{name}: {text}" if name else text for name, text in zip(names, summaries, strict=True))
    return Explanation(frame, summary, a_label, b_label, (counts[0], counts[1]), names,
                       dict(run_ids or {}), labels)
