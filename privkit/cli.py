"""The ``privkit`` command line.

``privkit account PLAN.json`` prints a plan's tree and the guarantee each accountant
certifies for it. Commands import what they need when they run, so ``privkit --help``
stays fast.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    from privkit import __version__

    parser = argparse.ArgumentParser(
        prog="privkit",
        description="Compose, account and audit differential privacy.",
    )
    parser.add_argument("--version", action="version", version=f"privkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    account = commands.add_parser(
        "account", help="compute the guarantee of a plan file",
        description="Print a plan's tree and the epsilon (or delta) every accountant "
        "certifies for it. The plan format is documented in privkit.plan_spec and the README.",
    )
    account.add_argument("plan", help="path to a JSON plan file")
    target = account.add_mutually_exclusive_group()
    target.add_argument("--delta", type=float,
                        help="report epsilon at this delta (default: the file's delta, else 1e-5)")
    target.add_argument("--epsilon", type=float, help="report delta at this epsilon instead")
    account.add_argument("--accountant", action="append", metavar="NAME",
                         help="use only this accountant (repeatable): basic, advanced, "
                         "optimal, zcdp, rdp, gdp, pld")
    account.add_argument("--json", action="store_true", help="print the result as JSON")
    _import_option(account)

    audit = commands.add_parser(
        "audit", help="audit the built-in mechanisms and estimators (or the named ones)",
        description="Attack each mechanism and algorithm on its worst-case neighbouring pair "
        "and print its claim against the epsilon lower bound measured at the given "
        "confidence; then audit every estimator end to end on its whole transcript "
        "(attributes, predictions, warnings, exceptions) on each channel pair of its "
        "transcript case (rows named transcript:ESTIMATOR). A claim is violated only when "
        "the lower bound exceeds it. Exit code 1 if a claim is violated, 2 on bad options "
        "or when a named case cannot run (a missing optional dependency); on Ctrl-C the "
        "rows already finished are printed and the exit code is 130.")
    _import_option(audit)
    audit.add_argument("names", nargs="*", metavar="NAME",
                       help="cases to audit (default: all registered), e.g. laplace or "
                       "transcript:PrivateSVDD")
    audit.add_argument("--epsilon", type=float, default=1.0,
                       help="the epsilon each mechanism is calibrated to (default 1)")
    audit.add_argument("--delta", type=float, default=1e-5,
                       help="the delta approximate-DP mechanisms are calibrated to, in (0, 1) "
                       "(default 1e-5; pure mechanisms are audited at delta 0 whatever it is)")
    audit.add_argument("--trials", type=int, default=None,
                       help="draws per side that measure the rejection set (at least 10; "
                       "default 10^6, or the case's measure_trials: 10^8 for the Gaussian "
                       "mechanisms, streamed); 20%% more choose it; slow cases cap it (their "
                       "max_trials)")
    audit.add_argument("--confidence", type=float, default=0.95,
                       help="confidence of the lower bounds (default 0.95)")
    audit.add_argument("--seed", type=int, default=2026,
                       help="random seed, >= 0 (default 2026)")
    audit.add_argument("--sequential", action="store_true",
                       help="audit in stages of 2,000 x 4^k draws per side up to --trials, "
                       "stopping at the first violation (the confidence is split over the "
                       "stages, so the verdict holds at --confidence); the table shows the "
                       "draws used")
    audit.add_argument("--report", metavar="PATH",
                       help="also write the table as markdown to PATH (a regular file; "
                       "a FIFO, directory or device is refused before any draw)")
    audit.add_argument("--quiet", action="store_true",
                       help="draw no progress bars (bars are drawn on stderr only when it "
                       "is a terminal; the per-row lines and the table are printed anyway)")
    audit.add_argument("--transcript-fits", type=int, default=None, metavar="N",
                       help="measured fits per side of each channel in the transcript rows "
                       "(at least 10; default 20, with 10 more that choose the rejection "
                       "set); their claims are their cases' own, not --epsilon")

    reproduce = commands.add_parser(
        "reproduce", help="rerun a source paper's experiments with privkit",
        description="Rerun a paper's experimental protocol with privkit's implementation and "
        "print privkit's results (and privkit's own guarantee) next to the paper's. Papers: "
        + "; ".join(f"{name}: {title}" for name, (_, title) in _REPRODUCTIONS.items())
        + ". Options after PAPER go to that paper's runner (PAPER --help lists them); "
        "--list describes each paper and its commands.")
    reproduce.add_argument("--list", action="store_true",
                           help="name each paper, what it reproduces and its commands")
    reproduce.add_argument("paper", metavar="PAPER", nargs="?",
                           help=f"one of {', '.join(_REPRODUCTIONS)}")
    reproduce.add_argument("options", nargs=argparse.REMAINDER,
                           help="options of the paper's runner")
    return parser


def _import_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--import", action="append", dest="imports", metavar="MODULE",
        help="import this module first (repeatable; the current directory is on the "
        "path), so that the mechanisms and accountants it defines are known; installed "
        "packages' plug-ins (entry points privkit.mechanisms, privkit.accountants) need "
        "no flag")


#: ``privkit reproduce`` papers: name -> (module whose ``main(argv)`` runs it, citation);
#: ``--list`` prints :data:`privkit.algorithms.reproduce.CATALOGUE` (the same names,
#: kept here so that building the parser imports no algorithm).
_REPRODUCTIONS = {
    "park2022": ("privkit.algorithms.reproduce.park2022",
                 ("J. Park, \"Differentially private multi-class classification using kernel "
                  "supports and equilibrium points\" (2022)")),
    "dpksvmel": ("privkit.algorithms.reproduce.dpksvmel",
                 ("DPKSVMEL: kernel SVM with an exponential + Laplace hybrid on the "
                  "support vectors")),
    "lee-nystrom": ("privkit.algorithms.reproduce.lee_nystrom",
                    ("B. Lee, J. Ahn, C. Park, \"Differential privacy in scalable general "
                     "kernel learning via K-means Nystrom random features\" (poster)")),
    "vanderreijden2019": ("privkit.algorithms.reproduce.vanderreijden2019",
                          ("P. van der Reijden, \"Solving linear programs to train SVMs "
                           "under differential privacy\" (2019)")),
    "wang2024": ("privkit.algorithms.reproduce.wang2024",
                 ("T. Wang et al., \"Differentially private SVMs with knowledge "
                  "aggregation\" (2024)")),
}


def _account(args: argparse.Namespace) -> int:
    from privkit.accountants import get_accountant, tightest, tightest_delta
    from privkit.plan import PlanNode
    from privkit.plan_spec import load_plan
    from privkit.plugins import import_modules

    import_modules(args.imports, "privkit account")
    doc = load_plan(args.plan)
    accountants = None if not args.accountant else [get_accountant(n) for n in args.accountant]
    if args.epsilon is not None:
        result = tightest_delta(doc.plan, epsilon=args.epsilon, accountants=accountants)
    else:
        delta = args.delta if args.delta is not None else (doc.delta if doc.delta is not None
                                                            else 1e-5)
        result = tightest(doc.plan, delta=delta, accountants=accountants)
    certified = math.isfinite(result.epsilon) and math.isfinite(result.delta) and (
        result.delta < 1.0)
    if args.json:
        print(json.dumps(_finite_or_null({
            "epsilon": result.epsilon, "delta": result.delta, "accountant": result.accountant,
            "by_accountant": result.by_accountant, "refused": result.refused,
            "certified": certified,
        }), indent=2, allow_nan=False))
        return 0 if certified else 1
    tree = doc.plan.tree() if isinstance(doc.plan, PlanNode) else str(doc.plan)
    print(tree)
    print()
    print(result.table())
    print()
    if not certified:
        print("no accountant certifies a finite guarantee for this plan", file=sys.stderr)
        return 1
    print(f"tightest: ({result.epsilon:.6g}, {result.delta:.3g})-DP by the "
          f"{result.accountant} accountant")
    return 0


def _finite_or_null(value: Any) -> Any:
    """JSON has no infinity or NaN: such numbers become null (``certified`` says why)."""
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_null(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: Which optional extra provides each third-party module a case may need.
_EXTRAS = {"sklearn": "algorithms", "cvxpy": "algorithms", "opacus": "algorithms",
           "torch": "algorithms", "flwr": "algorithms", "hypothesis": "audits",
           "tqdm": "audits", "dask": "audits", "distributed": "audits",
           "matplotlib": "audits", "randomgen": "secure", "scipy": "audits"}


def _missing_extra(exc: ModuleNotFoundError) -> str:
    module = (exc.name or "").split(".")[0]
    extra = _EXTRAS.get(module, "all")
    return (f"needs the module {module!r}: install it with pip install "
            f"\"privkit[{extra}]\"")


def _check_audit_args(args: argparse.Namespace) -> None:
    """Refuse bad options before any draw is made (a bad --report path included)."""
    from privkit import _validation as check
    from privkit.audits.attacks import MIN_TRIALS

    owner = "privkit audit"
    check.positive_finite("--epsilon", args.epsilon, owner)
    check.open_unit("--delta", args.delta, owner)
    check.open_unit("--confidence", args.confidence, owner)
    if args.trials is not None and args.trials < MIN_TRIALS:
        raise check.fail("--trials", args.trials, f"an integer >= {MIN_TRIALS} (draws per "
                         "side)", owner)
    if args.seed < 0:
        raise check.fail("--seed", args.seed, "an integer >= 0", owner)
    if args.transcript_fits is not None and args.transcript_fits < MIN_TRIALS:
        raise check.fail("--transcript-fits", args.transcript_fits, f"an integer >= "
                         f"{MIN_TRIALS} (fits per side)", owner)
    if args.report:
        _check_report_path(args.report, owner)


def _check_report_path(report: str, owner: str) -> None:
    """Refuse a --report path that is not a writable regular file (or a new one in a
    writable folder). Opening is non-blocking: a FIFO with no reader would otherwise
    hold the run forever, before or after its draws."""
    import os
    import stat

    from privkit import _validation as check

    try:
        mode: int | None = os.stat(report).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise check.fail("--report", report, "a writable file path", owner, str(exc)) from exc
    if mode is not None and not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        raise check.fail("--report", report, "a regular file path (the markdown table is "
                         "written to it)", owner, f"it is {kind}")
    try:
        fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise check.fail("--report", report, "a writable file path", owner, str(exc)) from exc
    os.close(fd)
    if mode is None:
        os.unlink(report)


def _transcript_estimators(names: list[str]) -> tuple[dict[str, type], str | None]:
    """The estimators audited on their transcripts (by row name) when ``names`` asks for
    them (none named: all), or why there are none (a missing optional dependency)."""
    if names and not any(n.startswith("transcript:") for n in names):
        return {}, None
    try:
        from privkit.audits.estimators import estimators
    except ModuleNotFoundError as exc:
        return {}, _missing_extra(exc)
    try:
        return {f"transcript:{n}": cls for n, cls in estimators().items()}, None
    except ModuleNotFoundError as exc:
        return {}, _missing_extra(exc)


def _audit(args: argparse.Namespace) -> int:
    import contextlib
    import logging
    import time
    import warnings
    from pathlib import Path

    try:
        import numpy as np

        from privkit.audits import report
        from privkit.audits.registry import CASES, run_case
        from privkit.audits.transcript import single_threaded
    except ModuleNotFoundError as exc:
        print(f"privkit audit: error: the auditor {_missing_extra(exc)}", file=sys.stderr)
        return 2
    from privkit._progress import note, progress
    from privkit._validation import fail
    from privkit.plugins import import_modules

    _check_audit_args(args)
    import_modules(args.imports, "privkit audit")
    transcripts, missing = _transcript_estimators(args.names)
    names = args.names or [*sorted(CASES), *transcripts]
    unknown = [n for n in names if n not in CASES and n not in transcripts]
    if unknown and missing and unknown[0].startswith("transcript:"):
        print(f"privkit audit: error: {unknown[0]} {missing}", file=sys.stderr)
        return 2
    if unknown:
        raise fail("NAME", unknown[0], f"one of {', '.join([*sorted(CASES), *transcripts])}",
                   "privkit audit")
    results: list[Any] = []
    paper_claims: set[str] = set()
    skipped: list[str] = []
    if missing and not args.names:
        skipped.append("the transcript tier")
        note(f"      skipped: the transcript tier {missing}")
    start = time.perf_counter()
    tier: list[Any] = []
    tier_seconds = 0.0
    bars = False if args.quiet else None  # None: only when stderr is a terminal
    finished = 0
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)  # third-party log lines (opacus) stay out of the output
    threads = contextlib.ExitStack()  # the audits fit small models: one BLAS thread
    threads.enter_context(single_threaded())
    try:
        with progress(len(names), "privkit audit", unit="row", enabled=bars) as bar:
            for i, name in enumerate(names):
                note(f"[{i + 1}/{len(names)}] {name} ...")
                seed = np.random.SeedSequence([args.seed, i])
                began = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if name in transcripts:
                            rows = _transcript_rows(transcripts[name], args, seed)
                        else:
                            case = CASES[name](epsilon=args.epsilon, delta=args.delta)
                            rows = [run_case(case, name=name, trials=args.trials,
                                             confidence=args.confidence,
                                             sequential=args.sequential, rng=seed,
                                             progress=bars)]
                            if case.claim == "paper":
                                paper_claims.add(name)
                except ModuleNotFoundError as exc:
                    skipped.append(name)
                    note(f"      skipped: {name} {_missing_extra(exc)}")
                    finished = i + 1
                    continue
                finally:
                    bar.update(1)
                finished = i + 1
                if name in transcripts:
                    tier += rows
                    tier_seconds += time.perf_counter() - began
                    paper_claims.update(r.name for r in rows if r.claim == "paper")
                results += rows
                for row in rows:
                    note(f"      {row} ({time.perf_counter() - start:.0f} s)")
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    finally:
        threads.close()
        logging.disable(previous)
    if results:
        print(report(results))
    if tier:
        from privkit.audits.estimators import CLI_FITS, cli_selection

        screen = args.transcript_fits or CLI_FITS
        print(f"\ntranscript tier: {len(tier)} rows, {screen} + {cli_selection(screen)} fits "
              f"per side of each channel, {sum(r.fits_run for r in tier):,} fits in "
              f"{tier_seconds:.1f} s")
    for r in results:
        if r.name in paper_claims:
            print(f"\n{r.name}: the source paper's claim, which privkit does not make "
                  f"(privkit certifies no finite guarantee for it): {r.verdict}")
    if skipped:
        print(f"\nnot audited (missing optional dependencies): {', '.join(skipped)}")
    stopped = (f"interrupted (Ctrl-C) after {finished} of {len(names)} cases: the rows "
               "above are the finished ones" if interrupted else "")
    if args.report and results:
        text = report(results, markdown=True) + "\n" + (f"\n{stopped}\n" if stopped else "")
        Path(args.report).write_text(text, encoding="utf-8")
    if interrupted:
        print(f"privkit audit: {stopped}", file=sys.stderr)
        return 130
    if any(r.verdict == "violation" and r.name not in paper_claims for r in results):
        return 1
    return 2 if set(skipped) & set(args.names) else 0


def _transcript_rows(cls: type, args: argparse.Namespace, seed: Any) -> list[Any]:
    """``privkit audit``'s transcript rows of ``cls`` (one per label mode)."""
    from privkit.audits.estimators import CLI_FITS, cli_selection, run_estimator

    fits = args.transcript_fits or CLI_FITS
    rows: list[Any] = run_estimator(cls, fits=fits, selection_fits=cli_selection(fits),
                                    confidence=args.confidence, rng=seed)
    return rows


def _reproduce(args: argparse.Namespace) -> int:
    import importlib

    from privkit._validation import fail

    if args.list:
        from privkit.algorithms.reproduce import listing

        print(listing(), end="")
        return 0
    if args.paper not in _REPRODUCTIONS:
        raise fail("PAPER", args.paper, f"one of {', '.join(_REPRODUCTIONS)}",
                   "privkit reproduce")
    module_name, _ = _REPRODUCTIONS[args.paper]
    try:
        runner = importlib.import_module(module_name)
        code: int = runner.main([*args.options])
    except ModuleNotFoundError as exc:
        print(f"privkit reproduce: error: {args.paper} {_missing_extra(exc)}",
              file=sys.stderr)
        return 2
    return code


_COMMANDS = {"account": _account, "audit": _audit, "reproduce": _reproduce}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from privkit.errors import PrivkitError

    try:
        return _COMMANDS[args.command](args)
    except (PrivkitError, OSError) as exc:
        print(f"privkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C outside a loop that reports what it finished
        print(f"privkit {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
