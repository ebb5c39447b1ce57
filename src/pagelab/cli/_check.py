"""``pagelab check BUDGETS``: measure a budget file's pages and check them (exit 1 on a miss)."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from ._options import add_aggregation, add_progress, add_renamed

__all__ = ["register"]


def register(subparsers: Any) -> None:
    check = subparsers.add_parser(
        "check",
        help="measure the pages of a budget file and check their budgets (exit 1 on a miss)",
        description="Budget files: pagelab YAML/JSON, Lighthouse CI assertions (lighthouserc."
        "json) or Lighthouse budget.json. Exit status 0: every error-level budget met; 1: one "
        "missed or a page failed to load; 2: bad input.",
    )
    check.add_argument("budgets", metavar="BUDGETS", help="budget file (.yaml, .yml, .json)")
    check.add_argument("--runs", type=_runs, metavar="N",
                       help="runs per page, device and location (default: the file's, else 3)"
                       "; auto (or auto:MIN-MAX, default 5-15): add runs one at a time until "
                       "the interval of each budgeted metric's median is wholly on one side "
                       "of its budget")
    add_aggregation(check, None)
    check.add_argument("--base-url", metavar="URL",
                       help="base URL for relative page URLs (overrides the file's base_url)")
    check.add_argument("--replay", metavar="PATH",
                       help="check runs saved earlier (results JSON or wide-frame CSV) "
                       "instead of measuring")
    add_renamed(check, "--runs-file", "--replay", "replay")
    check.add_argument("--markdown", metavar="PATH",
                       help="write a Markdown summary of the checks (a job summary or pull "
                       "request comment; appended to $GITHUB_STEP_SUMMARY under GitHub "
                       "Actions anyway)")
    check.add_argument("--codequality", metavar="PATH",
                       help="write a GitLab Code Quality report (JSON) of the missed checks")
    check.add_argument("--format", choices=("table", "lhci"), default="table",
                       help="lhci: also write .lighthouseci/assertion-results.json as "
                       "`lhci assert` does (lighthouserc files)")
    add_progress(check)
    check.set_defaults(handler=_check)


def _runs(text: str) -> int | str:
    if text.strip().lower().startswith("auto"):
        return text.strip().lower()
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number or auto, got {text!r}") from None


def _measure_auto(runner: Any, budget_file: Any, base_url: str | None, url: str,
                  devices: list[str], locations: list[str], config: Any, runs: str,
                  progress: Any) -> Any:
    """One page's runs with ``--runs auto``: until each budget is clearly met or missed."""
    import pandas as pd

    import pagelab
    from pagelab.budgets import AutoRuns, parse_auto_runs, resolve_checks

    rule = parse_auto_runs(runs)
    assert rule is not None
    checks = [c for c in resolve_checks(budget_file, base_url=base_url)
              if any(c.matches(url, d, loc) for d in devices for loc in locations)]

    def measure(cells: Any, count: int) -> pd.DataFrame:
        frames = [pagelab.measure([u], devices=[d], locations=[loc], runs=count, config=config,
                                  runner=runner, progress=progress).frame
                  for u, d, loc, *_ in cells]
        return pd.concat(frames, ignore_index=True)

    # The page's config names the connection (None: each device's default), as the frame.
    connection = (config or {}).get("connection")
    auto = AutoRuns(rule, checks=checks)
    frame = auto.run(measure, [(url, d, loc, connection) for d in devices for loc in locations])
    for note in auto.notes():
        print(note)
    return frame


def _most(runs: int | str) -> int:
    if isinstance(runs, int):
        return runs
    from pagelab.budgets import parse_auto_runs

    rule = parse_auto_runs(runs)
    return rule.max_runs if rule is not None else 0


def _pages(budget_file: Any, base_url: str | None) -> list[tuple[str, list[str], list[str],
                                                              dict[str, Any] | None, int | None]]:
    from pagelab._exceptions import InvalidInputError

    pages = []
    for page in budget_file.pages:
        if "*" in page.url:
            continue
        url = budget_file.page_url(page, base_url)
        if "://" not in url:
            raise InvalidInputError(
                f"page {page.url!r} is relative: set base_url in the file or --base-url"
            )
        pages.append((
            url,
            [d.value for d in page.devices or budget_file.devices],
            [loc.value for loc in page.locations or budget_file.locations],
            page.config if page.config is not None else budget_file.config,
            page.runs,
        ))
    return pages


def _flows(budget_file: Any) -> list[tuple[Any, list[str], list[str], Any, int | None]]:
    """(flow, devices, locations, config, runs) of each flow of the budget file."""
    return [(flow.flow,
             [d.value for d in flow.devices or budget_file.devices],
             [loc.value for loc in flow.locations or budget_file.locations],
             flow.config if flow.config is not None else budget_file.config,
             flow.runs) for flow in budget_file.flows]


def _check(args: argparse.Namespace) -> int:
    import pandas as pd

    import pagelab
    from pagelab._exceptions import InvalidInputError
    from pagelab._progress import ProgressBar
    from pagelab.budgets import (
        assert_runs,
        budget_source_line,
        evaluate,
        format_lhci,
        format_tally,
        format_value,
        load_budgets,
        publish_ci_reports,
        run_failures,
        select_runs,
    )
    from pagelab.frames import cell_label, read_runs

    budget_file = load_budgets(args.budgets)
    if isinstance(args.runs, int) and not 1 <= args.runs <= 100:
        raise InvalidInputError(f"--runs: must be from 1 to 100, got {args.runs}")
    if isinstance(args.runs, str):
        from pagelab.budgets import parse_auto_runs

        if parse_auto_runs(args.runs) is None:
            raise InvalidInputError(f"--runs: expected a whole number or auto, got {args.runs!r}")
    aggregation = args.aggregation or budget_file.aggregation or "median"
    base_url = args.base_url or budget_file.base_url
    for note in budget_file.notes:
        print(f"note: {note}")
    lhci_results: list[Any] = []
    results: list[Any] = []
    if args.replay:
        frame = read_runs(args.replay)
        if budget_file.lhci is not None:
            frame, missing = select_runs(budget_file, frame, base_url)
            for where in missing:
                print(f"no runs: {where} (lighthouserc page on its collect device)")
            lhci_results = assert_runs(budget_file.lhci, frame)
            if missing and not lhci_results:
                return 1
    else:
        pages = _pages(budget_file, base_url)
        if not pages and not budget_file.flows:
            raise InvalidInputError(
                f"{args.budgets}: no page to measure (paths with '*' only match measured pages)"
            )
        if budget_file.flows and isinstance(args.runs, str):
            raise InvalidInputError("--runs auto measures pages only: this budget file has "
                                    "flows, give a number of runs")
        # Flows are measured as pages are: one (flow, devices, locations, config, runs) each.
        planned = [(url, devices, locations, config,
                    args.runs or page_runs or budget_file.runs or 3)
                   for url, devices, locations, config, page_runs in [
                       *pages, *_flows(budget_file)]]
        frames = []
        with contextlib.ExitStack() as stack:
            runner = stack.enter_context(pagelab.connect())
            # One bar on stderr for the whole file (it also says when it waits for the engine).
            # With --runs auto the total is the maximum: the bar may end early.
            bar = stack.enter_context(ProgressBar(
                sum(len(d) * len(loc) * _most(runs) for _, d, loc, _, runs in planned)
            )) if args.progress else None
            progress = bar.add if bar is not None else False
            for url, devices, locations, config, runs in planned:
                if isinstance(runs, str):
                    frames.append(_measure_auto(runner, budget_file, base_url, url, devices,
                                                locations, config, runs, progress))
                    continue
                measured = pagelab.measure(url if isinstance(url, pagelab.Flow) else [url],
                                           devices=devices, locations=locations,
                                           runs=runs, config=config, runner=runner,
                                           progress=progress)
                frames.append(measured.frame)
            frame = pd.concat(frames, ignore_index=True)
            if budget_file.lhci is not None:
                lhci_results = assert_runs(budget_file.lhci, frame, read_lhr=runner.lhr)
            else:
                results = evaluate(budget_file, frame, aggregation=aggregation,
                                   base_url=base_url, read_lhr=runner.lhr)
    if args.replay and budget_file.lhci is None:
        results = evaluate(budget_file, frame, aggregation=aggregation, base_url=base_url)
    if budget_file.lhci is not None:
        # First what `lhci assert` prints, then pagelab's table of every assertion.
        print("\n".join(format_lhci(lhci_results)), end="\n\n")
        if args.format == "lhci":
            _write_lhci_json(lhci_results, bool(budget_file.lhci.get("includePassedAssertions")))
    rows = [("check", "metric", "budget", "actual", "status")]
    for r in results:
        rows.append((cell_label((r.url, r.device, r.location, r.connection, r.flow, r.step)),
                     r.metric,
                     f"{r.operator} {format_value(r.metric, r.expected)}",
                     format_value(r.metric, r.actual), r.label))
    for a in lhci_results:
        rows.append((cell_label(a.cell), f"{a.assertion} {a.name}",
                     f"{a.operator} {_lhci_number(a.expected)}", _lhci_number(a.actual),
                     a.label))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    failed_pages = run_failures(frame)
    page_errors = [f"page failed to load: {cell_label(cell)}: {', '.join(sorted(set(codes)))}"
                   for cell, codes in failed_pages.items()]
    for line in page_errors:
        print(line)
    misses = [r for r in [*results, *lhci_results] if not r.passed and r.level == "error"]
    for r in results:
        if not r.passed:
            print(f"{'error' if r.level == 'error' else 'warning'}: {r.message}")
    print(format_tally([r.status for r in [*results, *lhci_results]]))
    source = Path(args.budgets)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    # Annotations and Code Quality paths are relative to the project root (the cwd in CI).
    try:
        shown = source.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = source.as_posix()
    records = [{**r.to_dict(), "kind": "budget", "file": shown,
                "line": budget_source_line(text, r.url, r.metric)} for r in results]
    # GitHub turns these lines into annotations on the budget file's lines.
    for command in publish_ci_reports(records, markdown=args.markdown,
                                      codequality=args.codequality, errors=page_errors):
        print(command)
    return 1 if misses or failed_pages else 0


def _lhci_number(value: float) -> str:
    return "\u2013" if value != value else f"{value:g}"


def _write_lhci_json(results: list[Any], include_passed: bool) -> None:
    import json

    from pagelab.budgets import lhci_results_json

    target = Path(".lighthouseci") / "assertion-results.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(lhci_results_json(results, include_passed=include_passed),
                                 indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")
