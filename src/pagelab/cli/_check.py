"""``pagelab check BUDGETS``: measure a budget file's pages (flows, scan templates) and check
them (exit 1 on a miss)."""

from __future__ import annotations

import argparse
import contextlib
import functools
from pathlib import Path
from typing import Any

from ._options import add_aggregation, add_progress, add_renamed

__all__ = ["register"]


def register(subparsers: Any) -> None:
    check = subparsers.add_parser(
        "check",
        help="measure the pages of a budget file and check their budgets (exit 1 on a miss)",
        description="Budget files: pagelab YAML/JSON, Lighthouse CI assertions (lighthouserc."
        "json) or Lighthouse budget.json. A pagelab file may name a site to scan and budget "
        "its templates (scan: and templates:, docs/scan.md): the site is discovered first. "
        "Exit status 0: every error-level budget met; 1: one "
        "missed or a page failed to load; 2: bad input, or the engine failed twice on a run "
        "(a crash or time-out; a failed run is measured once more).",
    )
    check.add_argument("budgets", metavar="BUDGETS", help="budget file (.yaml, .yml, .json)")
    check.add_argument("--runs", metavar="N",
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
    check.add_argument("--against", choices=("history",), help="history: compare every "
                       "measured cell with the newest stable builds of this build's branch in "
                       "the store (docs/history.md)")
    check.add_argument("--compare-fail", metavar="LIMITS", default="", help="regression "
                       "limits against the history, e.g. largest_contentful_paint:10%%")
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


def _check(args: argparse.Namespace) -> int:
    import pandas as pd

    import pagelab
    from pagelab import budgets
    from pagelab._exceptions import InvalidInputError
    from pagelab._progress import ProgressBar
    from pagelab._scan import scan_sample
    from pagelab.frames import read_runs

    budget_file = budgets.load_budgets(args.budgets)
    try:
        runs = None if args.runs is None else budgets.parse_runs(args.runs)
    except InvalidInputError as exc:
        raise InvalidInputError(f"--runs: {exc}") from None
    aggregation = args.aggregation or budget_file.aggregation or "median"
    base_url = args.base_url or budget_file.base_url
    for note in budget_file.notes:
        print(f"note: {note}")
    limits, history = budgets.parse_regression_limits(args.compare_fail), None
    if limits and not args.against:
        raise InvalidInputError("--compare-fail needs --against history")
    if args.against:
        try:
            with pagelab.connect() as reader:  # the store the runs of every build go to
                history = budgets.history_baseline(reader, list(limits))
        except InvalidInputError as exc:
            raise InvalidInputError(f"--against history: {exc}") from None
    lhci_results: list[Any] = []
    results: list[Any] = []
    if args.replay:
        frame = read_runs(args.replay)
        if budget_file.lhci is not None:
            frame, missing = budgets.select_runs(budget_file, frame, base_url)
            for where in missing:
                print(f"no runs: {where} (lighthouserc page on its collect device)")
            lhci_results = budgets.assert_runs(budget_file.lhci, frame)
            if missing and not lhci_results:
                return 1
        else:
            results = budgets.evaluate(budget_file, frame, aggregation=aggregation,
                                       base_url=base_url)
    else:
        targets = budgets.plan_targets(budget_file, base_url, source=args.budgets,
                                       base_url_option="--base-url")
        if budget_file.flows and runs is not None and not isinstance(runs, int):
            raise InvalidInputError("--runs auto measures pages only: this budget file has "
                                    "flows, give a number of runs")
        planned = [(t, runs or budgets.parse_runs(t.runs)) for t in targets]
        frames = []
        with contextlib.ExitStack() as stack:
            runner = stack.enter_context(pagelab.connect())
            # A scan's site is discovered once, before any run, for all its templates (on
            # the server when the runs go to one).
            sample = budgets.discovered_once(functools.partial(scan_sample, runner=runner))
            # One bar on stderr for the whole file (it also says when it waits for the engine).
            # With --runs auto the total is the maximum: the bar may end early.
            bar = stack.enter_context(ProgressBar(sum(
                len(t.devices) * len(t.locations) * (n if isinstance(n, int) else n.max_runs)
                * (len(budgets.target_urls(t, sample)) if t.template is not None else 1)
                for t, n in planned))) if args.progress else None
            # Each run's build, resolved once (against history: the one it is checked as).
            measure = budgets.matrix_measure(pagelab.measure, runner, bar.add if bar else False,
                                             history.build if history else budgets.session_build())
            for target, count in planned:
                measured, notes = budgets.measure_target(
                    measure, target, count, sample=sample, limits=limits,
                    baseline=history.baseline if history else None)
                frames.append(measured)
                for note in notes:
                    print(note)
            frame = pd.concat(frames, ignore_index=True)
            if budget_file.lhci is not None:
                lhci_results = budgets.assert_runs(budget_file.lhci, frame,
                                                   read_lhr=runner.lhr)
            else:
                results = budgets.evaluate(budget_file, frame, aggregation=aggregation,
                                           base_url=base_url, read_lhr=runner.lhr)
    if budget_file.lhci is not None:
        # First what `lhci assert` prints, then pagelab's table of every assertion.
        print("\n".join(budgets.format_lhci(lhci_results)), end="\n\n")
        if args.format == "lhci":
            _write_lhci_json(lhci_results, bool(budget_file.lhci.get("includePassedAssertions")))
    source = Path(args.budgets)
    text = budgets.source_text(source)
    # Annotations and Code Quality paths are relative to the project root (the cwd in CI).
    try:
        shown = source.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = source.as_posix()
    regressions, compared = (budgets.compare_history(history, frame, limits, [
        r.url for r in [*results, *lhci_results]]) if history else ([], []))
    records = [{**r.to_dict(), "kind": kind, "file": shown,
                "line": budgets.budget_source_line(text, r.url, r.metric)}
               for kind, rs in (("budget", results), ("baseline", regressions)) for r in rs]
    page_errors = budgets.failure_lines(frame)
    lhci_records = [budgets.lhci_record(a) for a in lhci_results]
    for line in [*budgets.check_table([*records[:len(results)], *lhci_records]), *page_errors]:
        print(line)
    for r in results:
        if not r.passed:
            print(f"{'error' if r.level == 'error' else 'warning'}: {r.message}")
    print(budgets.format_tally([r.status for r in [*results, *lhci_results]]), *compared, sep="\n")
    # GitHub turns these lines into annotations on the budget file's lines.
    for command in budgets.publish_ci_reports(records, markdown=args.markdown,
                                              codequality=args.codequality,
                                              errors=page_errors):
        print(command)
    misses = [r for r in [*results, *regressions, *lhci_results] if r.status == "fail"]
    return 1 if misses or page_errors else 0


def _write_lhci_json(results: list[Any], include_passed: bool) -> None:
    import json

    from pagelab.budgets import lhci_results_json

    target = Path(".lighthouseci") / "assertion-results.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(lhci_results_json(results, include_passed=include_passed),
                                 indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")
