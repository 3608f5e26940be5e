"""The ``privkit`` command line.

``privkit account PLAN.json`` prints a plan's tree and the guarantee each accountant
certifies for it. Commands import what they need when they run, so ``privkit --help``
stays fast.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

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

    audit = commands.add_parser(
        "audit", help="audit the built-in mechanisms (or the named ones) empirically",
        description="Attack each mechanism on its worst-case neighbouring pair and print its "
        "claim against the epsilon lower bound measured at the given confidence. A claim is "
        "violated only when the lower bound exceeds it.")
    audit.add_argument("names", nargs="*", metavar="NAME",
                       help="mechanisms to audit (default: all registered)")
    audit.add_argument("--epsilon", type=float, default=1.0,
                       help="the epsilon each mechanism is calibrated to (default 1)")
    audit.add_argument("--delta", type=float, default=1e-5,
                       help="the delta approximate-DP mechanisms are calibrated to (default "
                       "1e-5; pure mechanisms are audited at delta 0)")
    audit.add_argument("--trials", type=int, default=1_000_000,
                       help="draws per side (default 10^6)")
    audit.add_argument("--confidence", type=float, default=0.95,
                       help="confidence of the lower bounds (default 0.95)")
    audit.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    audit.add_argument("--report", metavar="PATH",
                       help="also write the table as markdown to PATH")
    return parser


def _account(args: argparse.Namespace) -> int:
    from privkit.accountants import get_accountant, tightest, tightest_delta
    from privkit.plan import PlanNode
    from privkit.plan_spec import load_plan

    doc = load_plan(args.plan)
    accountants = None if not args.accountant else [get_accountant(n) for n in args.accountant]
    if args.epsilon is not None:
        result = tightest_delta(doc.plan, epsilon=args.epsilon, accountants=accountants)
    else:
        delta = args.delta if args.delta is not None else (doc.delta if doc.delta is not None
                                                            else 1e-5)
        result = tightest(doc.plan, delta=delta, accountants=accountants)
    if args.json:
        print(json.dumps({
            "epsilon": result.epsilon, "delta": result.delta, "accountant": result.accountant,
            "by_accountant": result.by_accountant, "refused": result.refused,
        }, indent=2))
        return 0
    tree = doc.plan.tree() if isinstance(doc.plan, PlanNode) else str(doc.plan)
    print(tree)
    print()
    print(result.table())
    print()
    print(f"tightest: ({result.epsilon:.6g}, {result.delta:.3g})-DP by the "
          f"{result.accountant} accountant")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    from privkit._validation import fail
    from privkit.audits import audit, report
    from privkit.audits.registry import CASES

    names = args.names or sorted(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        raise fail("NAME", unknown[0], f"one of {', '.join(sorted(CASES))}", "privkit audit")
    results = []
    for i, name in enumerate(names):
        case = CASES[name](args.epsilon, args.delta)
        trials = min(args.trials, case.max_trials or args.trials)
        results.append(audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                             trials=trials, confidence=args.confidence,
                             rng=np.random.SeedSequence([args.seed, i]), name=name))
        print(f"  {results[-1]}", file=sys.stderr, flush=True)
    print(report(results))
    if args.report:
        Path(args.report).write_text(report(results, markdown=True) + "\n", encoding="utf-8")
    return 1 if any(r.verdict == "violation" for r in results) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from privkit.errors import PrivkitError

    try:
        return _account(args) if args.command == "account" else _audit(args)
    except (PrivkitError, OSError) as exc:
        print(f"privkit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
