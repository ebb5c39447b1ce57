"""Check records -> the reports CI shows reviewers: a Markdown summary (GitHub's job summary,
a pull-request comment), GitHub workflow commands (annotations on the line) and a GitLab
Code Quality report (the merge-request widget).

Pure functions: records in (:meth:`BudgetResult.to_dict` plus ``kind``, and where known
``nodeid``, ``file``, ``line`` and the baseline comparison's statistics), text or JSON-ready
data out. Writing files and reading the environment is the caller's (the pytest plugin,
``pagelab check``).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from pagelab.models import METRICS

from ._evaluate import CELL_COLUMNS, check_where, format_tally, format_value
from ._load import LHCI_SCORE_KEY
from ._wording import status_of

__all__ = [
    "CI_STATUSES",
    "budget_source_line",
    "ci_status",
    "code_quality_issues",
    "markdown_summary",
    "workflow_commands",
]

Record = Mapping[str, Any]
#: The directory a local report's path is shown relative to (CI's workspace), or None.
Workspace = str | os.PathLike[str] | None

#: A check's status in the CI reports, worst first: ``regression`` is a failed baseline
#: check, ``inconclusive`` a large difference that is not significant (failing or not).
CI_STATUSES: tuple[str, ...] = ("regression", "fail", "inconclusive", "warn", "pass")
_ICONS = {"regression": "\u274c", "fail": "\u274c", "inconclusive": "\u2754",
          "warn": "\u26a0\ufe0f", "pass": "\u2705"}
#: Annotation title per status (``pagelab <word>: <metric>``).
_TITLES = {"regression": "regression", "fail": "budget missed",
           "inconclusive": "inconclusive change", "warn": "budget warning"}

TABLE_HEADER = ("Status", "Check", "Metric", "Value", "Budget or baseline")
#: Shown only when some record carries the comparison's statistics.
INTERVAL_HEADER = "Difference (interval)"


def ci_status(record: Record) -> str:
    """One of :data:`CI_STATUSES` for a check record: the ``status`` its result's
    ``to_dict`` wrote (a hand-made record without one: from ``passed`` and ``level``), a
    failed baseline check a ``regression``, an inconclusive one ``inconclusive``."""
    if record.get("verdict") == "inconclusive":
        return "inconclusive"
    status = record.get("status") or status_of(bool(record.get("passed")), record.get("level"))
    return "regression" if status == "fail" and record.get("kind") == "baseline" else status


def _failing(record: Record) -> bool:
    """Whether the record failed its test (an inconclusive one only under ``=fail``)."""
    return not record.get("passed") and record.get("level") != "warn"


def _worst_first(records: Iterable[Record]) -> list[Record]:
    # Failing checks (regressions, missed budgets) first, then what deserves a look, then
    # passes; the records' own order within each group.
    def rank(record: Record) -> int:
        if _failing(record):
            return 0
        return 2 if ci_status(record) == "pass" else 1

    return sorted(records, key=rank)


# -- Markdown -----------------------------------------------------------------------------

#: What could start markup or HTML inside a table cell's inline text (``&``: a character
#: reference, shown as written instead).
_MARKDOWN_SPECIAL = "\\`*_[]<>|~!&"
#: What GitHub turns into a link in plain text (its autolink extension): ``http://``,
#: ``www.``. Escaping the ``:`` or the ``.`` keeps them text (issue 34, point 3).
_AUTOLINK = re.compile(r"(?<=[A-Za-z])(:)(?=//)|(?<=\b[Ww]{3})(\.)")
#: A list item's text starting like a block (a heading, a nested list, a quote...).
_BLOCK_START = re.compile(r"^(?:[#=+-]|\d+[.)])")
#: Characters a link target keeps as they are (``<``, ``>``, ``|`` and spaces are encoded).
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"


def _text(value: object) -> str:
    """Plain text safe in a Markdown table cell: no markup, no HTML, no link, no line
    breaks. Every text a tested page controls (its URL, error messages) goes through here
    or :func:`_code`."""
    text = " ".join(str(value).split())
    text = "".join(f"\\{c}" if c in _MARKDOWN_SPECIAL else c for c in text)
    return _AUTOLINK.sub(r"\\\1\2", text)


def _item(value: object) -> str:
    """A list item of plain text (never a heading or a nested list)."""
    text = _text(value)
    block = _BLOCK_START.match(text)
    if block:
        end = block.end() - 1
        text = f"{text[:end]}\\{text[end:]}"
    return f"- {text}"


def _code(value: object) -> str:
    """``value`` as a code span (shown as written, never autolinked) in a table cell: its
    fence longer than any run of backticks inside, so none closes it (CommonMark)."""
    text = " ".join(str(value).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    # A space on each side keeps a backtick at either end from joining the fence; the
    # renderer strips one from each side.
    return f"{fence} {text} {fence}" if longest else f"{fence}{text}{fence}"


def _report_path(url: str, workspace: Workspace) -> str:
    """A ``file://`` report's path: relative to ``workspace`` when inside it (where the
    workspace's uploaded artifact holds it, so a reviewer can find it), else absolute."""
    path = PurePosixPath(unquote(urlsplit(url).path))
    if workspace is not None and path.is_relative_to(workspace):
        return path.relative_to(workspace).as_posix()
    return str(path)


def _message(record: Record, workspace: Workspace) -> str:
    """The record's failure line, its ``file://`` report named as :func:`_report_path` does."""
    message = str(record.get("message", ""))
    report = record.get("report_url")
    if workspace is not None and isinstance(report, str) and urlsplit(report).scheme == "file":
        message = message.replace(report, _report_path(report, workspace))
    return message


def _link(label: str, url: str, workspace: Workspace = None) -> str:
    """A link for http(s) URLs; a ``file://`` report as its path (:func:`_report_path`) and
    any other URL as written, both as code spans."""
    scheme = urlsplit(url).scheme
    if scheme == "file":
        return _code(_report_path(url, workspace))
    if scheme not in ("http", "https"):
        return _code(url)
    # Percent-encode what would end the link or the table cell.
    return f"[{_text(label)}](<{quote(url, safe=_URL_SAFE)}>)"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def _signed(metric: str, value: float) -> str:
    text = format_value(metric, value)
    return text if text.startswith("-") or value == 0 else f"+{text}"


def _value(record: Record) -> str:
    actual = _number(record.get("actual"))
    if actual is None:
        actual = _number(record.get("median"))
    return format_value(str(record["metric"]), actual)


def _limit(record: Record) -> str:
    metric = str(record["metric"])
    limit = f"{record['operator']} {format_value(metric, _number(record.get('expected')))}"
    if record.get("kind") != "baseline":
        return limit
    base = _number(record.get("baseline_median"))
    if base is None:
        return f"allowed {limit}"
    return f"baseline {format_value(metric, base)}, allowed {limit}"


def _p_value(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _difference(record: Record) -> str:
    """``+111 ms [+80 ms, +140 ms], p = 0.003, n = 10 vs 10``; a dash without statistics."""
    metric = str(record["metric"])
    parts: list[str] = []
    difference = _number(record.get("difference"))
    interval = record.get("interval")
    bounds = ([_number(v) for v in interval]
              if isinstance(interval, Sequence) and len(interval) == 2 else [])
    if difference is not None:
        shown = _signed(metric, difference)
        if bounds and None not in bounds:
            low, high = (_signed(metric, b) for b in bounds if b is not None)
            shown += f" [{low}, {high}]"
        parts.append(shown)
    p_value = _number(record.get("p_value"))
    if p_value is not None:
        parts.append(_p_value(p_value))
    n, n_baseline = record.get("n"), record.get("n_baseline")
    if isinstance(n, int) and isinstance(n_baseline, int):
        parts.append(f"n = {n} vs {n_baseline}")
    return ", ".join(parts) or "\u2013"


def _reports(record: Record, run_reports: Mapping[tuple[str, ...], list[str]],
             workspace: Workspace) -> str:
    links: list[str] = []
    report = record.get("report_url")
    if isinstance(report, str) and report:
        links.append(_link("report", report, workspace))
    runs = [u for u in run_reports.get(_cell(record), []) if urlsplit(u).scheme in
            ("http", "https") and u != report]
    if runs:
        links.append("runs " + " ".join(_link(str(i), u) for i, u in enumerate(runs, 1)))
    return " \u00b7 ".join(links) or "\u2013"


def _cell(record: Record) -> tuple[str, ...]:
    return tuple(str(record.get(column, "")) for column in CELL_COLUMNS)


def _run_reports(runs: Iterable[Record]) -> dict[tuple[str, ...], list[str]]:
    found: dict[tuple[str, ...], list[str]] = {}
    for run in sorted(runs, key=lambda r: _number(r.get("run")) or 0):
        url = run.get("report_url")
        if isinstance(url, str) and url:
            found.setdefault(_cell(run), []).append(url)
    return found


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _tallies(records: Sequence[Record]) -> str:
    lines: list[str] = []
    for kind, noun in (("budget", "budget check"), ("baseline", "regression check")):
        chosen = [r for r in records if r.get("kind", "budget") == kind]
        if not chosen:
            continue
        statuses = [ci_status(r) for r in chosen]
        # format_tally counts pass/fail/warn: a regression is a failure, an inconclusive
        # check counts as what it did to the test, and is named beside.
        tally = format_tally(
            ["fail" if _failing(r) else "pass" if r.get("passed") else "warn" for r in chosen],
            noun,
        )
        inconclusive = statuses.count("inconclusive")
        if inconclusive:
            tally += f", {inconclusive} inconclusive"
        lines.append(tally)
    return " \u00b7 ".join(lines)


def markdown_summary(
    checks: Sequence[Record],
    *,
    runs: Iterable[Record] = (),
    errors: Iterable[str] = (),
    notes: Iterable[str] = (),
    title: str = "pagelab budgets",
    workspace: Workspace = None,
) -> str:
    """The Markdown summary of ``checks``: a headline with the counts, one table of every
    check (failing ones first), the failure lines, then ``errors`` (engine errors, pages
    that failed to load) and ``notes`` (baseline warnings).

    ``runs`` (run records with ``report_url``) add links to each run's Lighthouse report
    beside the representative one. The same text serves as a job summary and as a pull
    request comment. A local (``file://``) report is named by its path, relative to
    ``workspace`` (CI's checkout, a resolved absolute path) when it lies inside it.
    """
    errors, notes = list(errors), list(notes)
    ordered = _worst_first(checks)
    if any(_failing(r) for r in ordered) or errors:
        icon, verdict = _ICONS["fail"], "failed"
    elif any(ci_status(r) != "pass" for r in ordered):
        icon, verdict = _ICONS["warn"], "passed with warnings"
    else:
        icon, verdict = _ICONS["pass"], "passed"
    lines = [f"## {icon} {_text(title)}: {verdict}", ""]
    if ordered:
        lines += [f"**{_tallies(ordered)}**", ""]
        with_stats = any("interval" in r or "difference" in r for r in ordered)
        header = [*TABLE_HEADER, *([INTERVAL_HEADER] if with_stats else []), "Reports"]
        lines += [_row(header), _row(["---"] * len(header))]
        reports = _run_reports(runs)
        for record in ordered:
            status = ci_status(record)
            row = [f"{_ICONS[status]} {status}",
                   _code(check_where(record, record.get("template"))),
                   _code(record["metric"]), _text(_value(record)), _text(_limit(record))]
            if with_stats:
                row.append(_text(_difference(record)))
            row.append(_reports(record, reports, workspace))
            lines.append(_row(row))
        lines.append("")
    else:
        lines += ["No checks ran.", ""]
    flagged = [r for r in ordered if ci_status(r) != "pass"]
    if flagged:
        lines += ["### Details", ""]
        lines += [f"- {_ICONS[ci_status(r)]} {_text(_message(r, workspace))}" for r in flagged]
        lines.append("")
    if errors:
        lines += ["### Errors", "", *[_item(e) for e in errors], ""]
    if notes:
        lines += ["### Notes", "", *[_item(n) for n in notes], ""]
    return "\n".join(lines)


# -- GitHub workflow commands -------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(checks: Iterable[Record], *, workspace: Workspace = None) -> list[str]:
    """GitHub Actions annotations: ``::error`` for a failing check, ``::warning`` for a
    missed warn-level budget or a passing inconclusive comparison, each at the record's
    ``file`` and ``line`` when known. Passing checks give none. A local report in the
    failure line is named as in :func:`markdown_summary` (``workspace``)."""
    commands: list[str] = []
    for record in _worst_first(checks):
        status = ci_status(record)
        if status == "pass":
            continue
        command = "error" if _failing(record) else "warning"
        properties: list[tuple[str, str]] = []
        if record.get("file"):
            properties.append(("file", str(record["file"])))
            line = record.get("line")
            if isinstance(line, int) and line > 0:
                properties.append(("line", str(line)))
        properties.append(("title", f"pagelab {_TITLES[status]}: {record['metric']}"))
        shown = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
        commands.append(f"::{command} {shown}::{_escape_data(_message(record, workspace))}")
    return commands


# -- GitLab Code Quality ------------------------------------------------------------------


def _fingerprint(record: Record) -> str:
    # What the check is, never what it measured: the same miss on the next pipeline is the
    # same issue, so the merge-request widget shows it as unchanged, not fixed-and-new.
    identity = [str(record.get("kind", "budget")), str(record["metric"]), *_cell(record),
                str(record.get("file") or ""), str(record.get("nodeid") or "")]
    return hashlib.sha256("\0".join(identity).encode()).hexdigest()[:32]


def code_quality_issues(checks: Iterable[Record]) -> list[dict[str, Any]]:
    """GitLab Code Quality issues (a JSON array for ``artifacts:reports:codequality``):
    ``major`` for a failing check, ``minor`` for a missed warn-level budget, ``info`` for a
    passing inconclusive comparison; passing checks give none. ``location.path`` is the
    record's ``file`` (relative to the project root), ``lines.begin`` its ``line`` (1 when
    unknown)."""
    issues: list[dict[str, Any]] = []
    seen: set[str] = set()
    for record in _worst_first(checks):
        status = ci_status(record)
        if status == "pass":
            continue
        fingerprint = _fingerprint(record)
        if fingerprint in seen:  # the same check measured twice by one test
            continue
        seen.add(fingerprint)
        line = record.get("line")
        severity = "major" if _failing(record) else "minor" if status == "warn" else "info"
        issues.append({
            "type": "issue",
            "description": " ".join(str(record.get("message", "")).split()),
            "check_name": f"pagelab/{record.get('kind', 'budget')}/{record['metric']}",
            "categories": ["Performance"],
            "fingerprint": fingerprint,
            "severity": severity,
            "location": {
                "path": str(record.get("file") or ""),
                "lines": {"begin": line if isinstance(line, int) and line > 0 else 1},
            },
        })
    return issues


# -- where a budget is written ------------------------------------------------------------


def _metric_spellings(metric: str) -> set[str]:
    m = METRICS.get(metric)
    if m is None:
        # A Lighthouse CI assertion ("largest-contentful-paint maxNumericValue") or a resource
        # budget ("resource_size:script"): the file spells it as its key.
        return {metric.split(" ")[0]}
    spellings = {m.name, m.label, m.label.lower(), m.name.replace("_", "-")}
    if m.audit_id is not None:
        spellings.add(m.audit_id)
    if m.name == "performance_score":
        spellings.add(LHCI_SCORE_KEY)
    return spellings


def budget_source_line(text: str, url: str, metric: str) -> int:
    """The 1-based line of a budget file's ``text`` where ``metric``'s limit for the page
    ``url`` is written: the metric inside the page's entry, else a file-wide one, else the
    page's line, else 1. Reads all three budget formats (YAML, JSON)."""
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return 1
    if root is None:
        return 1
    # Every scalar with the chain of nodes above it.
    scalars: list[tuple[yaml.ScalarNode, tuple[yaml.Node, ...]]] = []
    pages: list[yaml.MappingNode] = []

    def walk(node: yaml.Node, above: tuple[yaml.Node, ...]) -> None:
        if isinstance(node, yaml.ScalarNode):
            scalars.append((node, above))
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                walk(child, (*above, node))
        elif isinstance(node, yaml.MappingNode):
            if any(isinstance(k, yaml.ScalarNode) and k.value in ("url", "path")
                   for k, _ in node.value):
                pages.append(node)
            for key, value in node.value:
                # A key's scope is its value too: a template's key (``/product/*:``) heads
                # the mapping of its limits.
                walk(key, (*above, node, value))
                walk(value, (*above, node))

    walk(root, ())
    written = {url, urlsplit(url).path or "/"}
    page_scalars = [(n, above) for n, above in scalars
                    if n.value.removesuffix("$") in written]
    names = _metric_spellings(metric)
    metric_scalars = [(n, above) for n, above in scalars if n.value in names]
    for _, above in page_scalars:
        scope = next((a for a in reversed(above) if isinstance(a, yaml.MappingNode)), None)
        inside = [n for n, a in metric_scalars if scope is not None and scope in a]
        if inside:
            return inside[0].start_mark.line + 1
    outside = [n for n, a in metric_scalars if not any(p in a for p in pages)]
    if outside:
        return outside[0].start_mark.line + 1
    if page_scalars:
        return page_scalars[0][0].start_mark.line + 1
    return 1
