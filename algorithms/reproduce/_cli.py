"""The shared command line of ``privkit reproduce NAME``: every paper runner takes the same
options and writes its output folder through `privkit.algorithms.reproduce._report`.

``NAME [--quick | --full] [--out DIR] [--data DIR] [--seed S] [--runs K] [--jobs J]
[--quiet]``: ``--quick`` runs a small grid that still exercises every method (seconds),
``--full`` (the default) the paper's grid; ``--data`` defaults to ``$PRIVKIT_DATA``;
``--out`` defaults to ``./privkit-reproduce/NAME``; ``--jobs`` is the number of worker
processes the independent cells of a grid run in (`Run.map`). Exit code 0, or 2 after a
message that names the bad option (a missing data folder included).

Parallel cells give the serial run's numbers: every cell carries its own seed (derived
from ``--seed`` and the cell's place in the grid, never from the order cells finish in),
its results are put back in grid order, and every process, the serial one included, runs
its linear algebra on one BLAS thread (a threaded BLAS may sum in another order).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privkit import _validation as check
from privkit._progress import Progress, progress

from ._report import Report

__all__ = ["DATA_ENV", "Paper", "Run", "run_paper"]

DATA_ENV = "PRIVKIT_DATA"


#: The thread-count variables BLAS and OpenMP libraries read when they load.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread() -> None:
    """A worker's BLAS and OpenMP pools to one thread (see the module docstring): the
    variables for libraries not loaded yet (inherited from the parent too), a runtime
    limit for those loaded already."""
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    import numpy  # noqa: F401  (load the BLAS the limit applies to)

    try:
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_limits
    except ModuleNotFoundError:  # scikit-learn's dependencies; without them, no pools
        return
    threadpool_limits(1)


@contextmanager
def _single_threaded() -> Iterator[None]:
    """This process's BLAS and OpenMP on one thread for the duration (the environment
    and the limits restored afterwards: ``main`` may run inside another program)."""
    saved = {v: os.environ.get(v) for v in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    try:
        try:
            import scipy.linalg  # noqa: F401
            from threadpoolctl import threadpool_limits
        except ModuleNotFoundError:
            yield
            return
        with threadpool_limits(1):
            yield
    finally:
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value


@dataclass
class Run:
    """What a runner's body gets: the parsed options, the report to fill, a progress bar
    over the grid's public number of units, and the data folder (``None``: absent)."""

    args: argparse.Namespace
    report: Report
    bar: Progress
    data: Path | None
    pool: Executor | None = None

    @property
    def quick(self) -> bool:
        return bool(self.args.quick)

    def map(self, fn: Callable[..., Any], tasks: Iterable[tuple[Any, ...]],
            *, units: int = 1) -> list[Any]:
        """``[fn(*task) for task in tasks]``, in ``--jobs`` worker processes when there
        are more than one (``fn`` and the tasks must pickle: module-level functions,
        paths rather than data); each finished task advances the bar by ``units``. The
        list is in task order whatever order the tasks finish in."""
        tasks = list(tasks)
        if self.args.jobs <= 1 or len(tasks) <= 1:
            out = []
            for task in tasks:
                out.append(fn(*task))
                self.bar.update(units)
            return out
        if self.pool is None:
            import multiprocessing

            self.pool = ProcessPoolExecutor(self.args.jobs, initializer=_one_blas_thread,
                                            mp_context=multiprocessing.get_context("spawn"))
        futures = [self.pool.submit(fn, *task) for task in tasks]
        for future in futures:
            future.add_done_callback(lambda _f: self.bar.update(units))
        return [future.result() for future in futures]

    def need_data(self, *files: str) -> Path:
        """The data folder, or an error naming ``--data`` when a file is missing."""
        owner = f"privkit reproduce {self.report.paper}"
        if self.data is None:
            raise check.fail("--data", None, f"the folder of the shared data sets ({DATA_ENV} "
                             "is not set either)", owner, f"needs {', '.join(files)}")
        for name in files:
            if not (self.data / name).is_file():
                raise check.fail("--data", str(self.data), f"a folder holding {name}", owner)
        return self.data


@dataclass
class Paper:
    """A reproducible paper: its command name, citation, the source paths its numbers
    depend on (for staleness), the number of progress units of each grid, and its body."""

    name: str
    title: str
    depends: Sequence[str]
    units: Callable[[argparse.Namespace], int]
    body: Callable[[Run], None]
    default_runs: tuple[int, int] = (2, 5)  # quick, full
    options: Callable[[argparse.ArgumentParser], None] | None = None
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        from privkit.errors import InvalidParameterError

        raise InvalidParameterError(message)


def _parser(paper: Paper) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"privkit reproduce {paper.name}",
                     description=f"Rerun {paper.title}. {paper.description}")
    grid = parser.add_mutually_exclusive_group()
    grid.add_argument("--quick", action="store_true",
                      help="a small grid that exercises every method (seconds)")
    grid.add_argument("--full", action="store_true", help="the paper's grid (the default)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=f"output folder (default ./privkit-reproduce/{paper.name})")
    parser.add_argument("--data", default=None, metavar="DIR",
                        help=f"folder of the shared data sets (default ${DATA_ENV})")
    parser.add_argument("--seed", type=int, default=0, help="base seed, >= 0 (default 0)")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {paper.default_runs[0]} with --quick, "
                             f"{paper.default_runs[1]} otherwise)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes for independent cells (default: 1 with "
                             "--quick, where starting workers costs more than it saves; "
                             "else 2, or 1 on one CPU); results are the same for any "
                             "number")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    if paper.options is not None:
        paper.options(parser)
    return parser


def run_paper(paper: Paper, argv: Sequence[str] | None) -> int:
    """Parse ``argv``, run ``paper.body`` and write the report; the exit code."""
    from privkit.errors import InvalidParameterError

    owner = f"privkit reproduce {paper.name}"
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser(paper).parse_args(argv)
        if args.seed < 0:
            raise check.fail("--seed", args.seed, "an integer >= 0", owner)
        if args.runs is None:
            args.runs = paper.default_runs[0 if args.quick else 1]
        if args.runs < 1:
            raise check.fail("--runs", args.runs, "an integer >= 1", owner)
        if args.jobs is None:
            args.jobs = 1 if args.quick else min(2, os.cpu_count() or 1)
        if args.jobs < 1:
            raise check.fail("--jobs", args.jobs, "an integer >= 1", owner)
        data_dir = args.data or os.environ.get(DATA_ENV) or None
        data = Path(data_dir) if data_dir else None
        if data is not None and not data.is_dir():
            raise check.fail("--data", str(data), "an existing folder", owner)
        out = Path(args.out) if args.out else Path("privkit-reproduce") / paper.name
        report = Report(paper=paper.name, title=paper.title, out=out, argv=argv,
                        depends=paper.depends, seed=args.seed,
                        grid=("quick" if args.quick else "full") + f", {args.runs} runs per "
                        "cell", workers=args.jobs)
        bar_on = False if args.quiet else None
        with _single_threaded(), warnings.catch_warnings(), progress(
                paper.units(args), paper.name, unit="cell", enabled=bar_on) as bar:
            warnings.simplefilter("ignore")
            run = Run(args, report, bar, data)
            try:
                paper.body(run)
            finally:
                if run.pool is not None:  # joined: their CPU time counts as children's
                    run.pool.shutdown(cancel_futures=True)
        readme = report.write()
    except (InvalidParameterError, FileNotFoundError) as exc:
        print(f"{owner}: error: {exc}", file=sys.stderr)
        return 2
    print(readme.read_text(encoding="utf-8"))
    print(f"wrote {report.out}", file=sys.stderr)
    return 0
