"""The reproduction report: one output folder per run, tables as Markdown and CSV, figures
as PNG, and a header that says which code, command and machine wrote them.

Every paper runner (``privkit reproduce NAME``) builds a `Report`, adds `Table` objects
whose cells are `Cell` values (privkit's runs next to the paper's number) and figures,
and calls `Report.write`. Nothing here draws randomness: a runner's numbers depend on its
seed only; the header's timings and load averages are the only things that vary.

Verdict rule (`Cell.verdict`): with the paper's number ``p`` printed to ``r`` decimals,
privkit's mean ``m`` and standard error ``se`` over ``k >= 2`` runs (sample standard
deviation / sqrt(k)), the cell *matches* when ``|m - p| <= 2 se + 0.5 10^-r`` (two standard
errors, plus the paper's rounding); otherwise it *differs* and the runner states a
one-line reason. Two standard errors is a two-sided test at about 5% when the paper's
number is the true mean; the paper's own run-to-run spread is not counted (papers rarely
print it), so a "differs" says the paper's number is not privkit's mean, not that either
is wrong. With one run there is no standard error and the verdict is "one run".

Time: the header records the wall time and the CPU time of the process and its worker
processes (``--jobs``), and the CPU time over the number of workers: on a machine shared
with other work, the wall time measures the load, the CPU time per worker the run.

Summary: the README ends with a per-paper summary (`Report.write`): per table, how many
cells match, differ or have no paper number, every differing cell with its reason, then
the runner's own analysis lines (`Report.summary`).

Staleness: every file records ``privkit-commit: SHA`` (the checkout's HEAD when the run
started, with ``+dirty`` when the runner's code differed from it, or changed before the
run ended) and ``privkit-depends: PATH ...`` (the
source paths the runner reads). ``tests/core/test_results_fresh.py`` fails when a committed
results file names a commit whose depended-on code has changed since.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import csv
import io
import math
import os
import platform
import resource
import shlex
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["REPO_ROOT", "Cell", "Report", "Table", "code_version"]

#: The source checkout this module lives in (``algorithms/reproduce/`` is two levels down).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The shared code every paper's results depend on (each runner adds its own file and
#: the algorithms it runs to its ``privkit-depends``).
RUNNER = ("algorithms/reproduce/_report.py", "algorithms/reproduce/_cli.py")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_version(depends: Sequence[str]) -> str:
    """``SHA`` of the checkout's HEAD (``SHA+dirty`` when a file under ``depends`` has
    uncommitted changes), or ``privkit X.Y.Z`` outside a git checkout."""
    sha = _git("rev-parse", "HEAD") if (REPO_ROOT / ".git").exists() else None
    if sha is None:
        from privkit import __version__

        return f"privkit {__version__}"
    dirty = _git("status", "--porcelain", "--", *depends)
    return sha + ("+dirty" if dirty else "")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process since it started (its imports included)
    and of its children that have ended (worker processes count once joined)."""
    own, kids = (resource.getrusage(resource.RUSAGE_SELF),
                 resource.getrusage(resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _fmt(x: float, digits: int = 3) -> str:
    return "-" if not math.isfinite(x) else f"{x:.{digits}f}"


@dataclass
class Cell:
    """One table cell: privkit's ``values`` over runs next to the paper's number.

    ``paper`` is the number printed in the paper's text, ``decimals`` how many decimals
    it is printed with (its rounding enters the verdict), ``paper_note`` what to show when
    the paper has no number in its text (e.g. "figure only"), ``reason`` the one-line
    explanation shown when privkit's mean differs from the paper's number.
    """

    values: Sequence[float]
    paper: float | None = None
    decimals: int = 3
    paper_note: str = "figure only"
    reason: str = ""

    @property
    def mean(self) -> float:
        return float(sum(self.values) / len(self.values)) if self.values else math.nan

    @property
    def se(self) -> float:
        """Standard error of the mean: sample standard deviation / sqrt(runs)."""
        k = len(self.values)
        if k < 2:
            return math.nan
        m = self.mean
        var = sum((v - m) ** 2 for v in self.values) / (k - 1)
        return math.sqrt(var / k)

    @property
    def verdict(self) -> str:
        """``match``, ``differs``, ``one run`` or the paper note (module docstring)."""
        if self.paper is None:
            return self.paper_note
        if len(self.values) < 2:
            return "one run"
        tolerance = 2 * self.se + 0.5 * 10.0 ** (-self.decimals)
        return "match" if abs(self.mean - self.paper) <= tolerance else "differs"

    def text(self) -> str:
        """``mean ± se (paper p: verdict; reason)`` for Markdown."""
        own = f"{_fmt(self.mean)} ± {_fmt(self.se)}" if len(self.values) > 1 else _fmt(self.mean)
        paper = (f"paper {self.paper:.{self.decimals}f}" if self.paper is not None
                 else "paper: " + self.paper_note)
        verdict = self.verdict if self.paper is not None else ""
        why = f"; {self.reason}" if self.reason and verdict == "differs" else ""
        return f"{own} ({paper}{': ' + verdict if verdict else ''}{why})"


@dataclass
class Table:
    """A named table: ``rows`` x ``columns`` of `Cell` (or plain text) values."""

    name: str
    title: str
    columns: list[str]
    rows: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], Cell | str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    row_label: str = ""

    def put(self, row: str, column: str, value: Cell | str) -> None:
        if row not in self.rows:
            self.rows.append(row)
        if column not in self.columns:
            self.columns.append(column)
        self.cells[row, column] = value

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join([self.row_label, *self.columns])
               + " |", "|---" * (len(self.columns) + 1) + "|"]
        for row in self.rows:
            parts = []
            for col in self.columns:
                v = self.cells.get((row, col), "")
                parts.append(v.text() if isinstance(v, Cell) else v)
            out.append("| " + " | ".join([row, *parts]) + " |")
        out += ["", *self.notes] if self.notes else []
        return "\n".join(out)

    def records(self) -> Iterable[list[str]]:
        """CSV rows: one per cell, numbers unrounded."""
        yield ["row", "column", "privkit_mean", "privkit_se", "runs", "paper", "verdict",
               "reason", "text"]
        for row in self.rows:
            for col in self.columns:
                v = self.cells.get((row, col))
                if v is None:
                    continue
                if isinstance(v, Cell):
                    yield [row, col, repr(v.mean), repr(v.se), str(len(v.values)),
                           "" if v.paper is None else repr(v.paper), v.verdict,
                           v.reason if v.verdict == "differs" else "", ""]
                else:
                    yield [row, col, "", "", "", "", "", "", v]

    def verdicts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for v in self.cells.values():
            if isinstance(v, Cell) and v.paper is not None:
                counts[v.verdict] = counts.get(v.verdict, 0) + 1
        return counts


class Report:
    """The output folder of one ``privkit reproduce NAME`` run.

    ``write`` puts ``README.md`` (header, every table, notes, figure links), one
    ``TABLE.md`` and ``TABLE.csv`` per table and one ``FIGURE.png`` per figure in
    ``out``; every file starts with the same header (CSV: as ``#`` comment lines).
    """

    def __init__(self, *, paper: str, title: str, out: str | Path, argv: Sequence[str],
                 depends: Sequence[str], seed: int, grid: str, workers: int = 1) -> None:
        self.paper, self.title, self.out = paper, title, Path(out)
        self.workers = workers
        self.summary: list[str] = []
        self.argv, self.depends, self.seed, self.grid = list(argv), list(depends), seed, grid
        self.tables: list[Table] = []
        self.figures: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.started = time.perf_counter()
        self.load_start = os.getloadavg()
        self.version = code_version(self.depends)  # the code the run starts with
        self.out.mkdir(parents=True, exist_ok=True)

    def table(self, name: str, title: str, columns: Sequence[str] = (),
              row_label: str = "") -> Table:
        t = Table(name, title, list(columns), row_label=row_label)
        self.tables.append(t)
        return t

    def figure(self, name: str, caption: str, fig: Any) -> None:
        """Save a matplotlib figure as ``NAME.png`` (closed afterwards)."""
        import matplotlib.pyplot as plt

        fig.savefig(self.out / f"{name}.png", dpi=100)
        plt.close(fig)
        self.figures.append((name, caption))

    def _version(self) -> str:
        """The code version at the start, marked ``+dirty`` when the depended-on files
        changed while the run went on (committed or not): then no single commit wrote
        the numbers, and the freshness test calls the files stale. A commit of other
        files meanwhile changes nothing."""
        start = self.version
        if start.endswith("+dirty") or len(start) != 40:
            return start
        changed = (_git("status", "--porcelain", "--", *self.depends)
                   or _git("diff", "--name-only", start, "HEAD", "--", *self.depends))
        return start + "+dirty" if changed else start

    def header(self) -> list[str]:
        load_end = os.getloadavg()
        seconds = time.perf_counter() - self.started
        cpu = _cpu_seconds()
        command = "privkit reproduce " + " ".join(shlex.quote(a) for a in
                                                  [self.paper, *self.argv])
        return [
            f"command: {command}",
            f"privkit-commit: {self._version()}",
            f"privkit-depends: {' '.join(self.depends)}",
            f"grid: {self.grid}; seed {self.seed}",
            (f"machine: {os.cpu_count()} CPUs, {platform.platform()}, "
            f"{platform.processor() or platform.machine()}, Python "
            f"{platform.python_version()}"),
            "load average (1, 5, 15 min): start " + ", ".join(f"{x:.2f}" for x in
                                                             self.load_start)
            + "; end " + ", ".join(f"{x:.2f}" for x in load_end),
            f"wall time: {seconds:.1f} s",
            (f"CPU time (the process since its start, and its workers, --jobs {self.workers}): "
             f"{cpu:.1f} s; "
             f"over {self.workers} worker{'s' if self.workers > 1 else ''}: "
             f"{cpu / self.workers:.1f} s (the run's length with its workers on free "
             "cores: the measure of its speed on a shared machine)"),
        ]

    def _summary(self) -> list[str]:
        """Per table: the verdict counts and every differing cell with its reason; then
        the runner's analysis (``self.summary``)."""
        out = []
        for t in self.tables:
            counts = t.verdicts()
            figure_only = sum(1 for v in t.cells.values()
                              if isinstance(v, Cell) and v.paper is None)
            parts = [f"{k} {v}" for k, v in sorted(counts.items())]
            if figure_only:
                parts.append(f"{figure_only} without a number in the paper's text")
            out.append(f"- {t.name}: " + ("; ".join(parts) if parts else "text only") + ".")
            by_row = []
            for row in t.rows:
                judged = [v for (r, _), v in t.cells.items() if r == row
                          and isinstance(v, Cell) and v.paper is not None]
                if judged:
                    hits = sum(v.verdict == "match" for v in judged)
                    by_row.append(f"{row} {hits} of {len(judged)}")
            if by_row:
                out.append("  - matches by row: " + "; ".join(by_row) + ".")
            for (row, col), v in t.cells.items():
                if isinstance(v, Cell) and v.verdict == "differs":
                    side = "above" if v.mean > (v.paper or 0.0) else "below"
                    out.append(f"  - differs: {row} / {col}: {v.mean:.3f}, {side} the "
                               f"paper's {v.paper:.{v.decimals}f}: "
                               f"{v.reason or 'no reason given'}")
        return out + self.summary

    def _remove_previous(self, keep: set[str]) -> None:
        """Delete the tables an earlier run of this paper left in the folder and this run
        does not write (a stamped leftover would be stale); nothing else is touched."""
        mine = f"command: privkit reproduce {self.paper} "
        for path in self.out.iterdir():
            if path.suffix in (".md", ".csv") and path.name not in keep and path.is_file():
                head = path.read_text(encoding="utf-8", errors="replace")[:600]
                if mine in head:
                    path.unlink()

    def write(self) -> Path:
        """Write every file (removing this paper's earlier tables that this run does
        not write); returns the README's path."""
        self._remove_previous({"README.md", *(f"{t.name}{ext}" for t in self.tables
                                              for ext in (".md", ".csv"))})
        head = self.header()
        md_head = [f"# {self.title}", ""] + [f"- {h}" for h in head] + [
            "", ("Verdict rule: *match* when |privkit mean - paper| <= 2 standard errors + "
            "half a unit of the paper's last printed digit; *differs* otherwise (with a "
            "reason); *one run* when there is no standard error; cells without a paper "
            "number say where the paper's result is (e.g. figure only)."), ""]
        body: list[str] = []
        for t in self.tables:
            (self.out / f"{t.name}.md").write_text("\n".join([*md_head, t.markdown(), ""]),
                                                   encoding="utf-8")
            buffer = io.StringIO()
            buffer.write("".join(f"# {h}\n" for h in head))
            csv.writer(buffer, lineterminator="\n").writerows(t.records())
            (self.out / f"{t.name}.csv").write_text(buffer.getvalue(), encoding="utf-8")
            counts = t.verdicts()
            summary = (", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
                       if counts else "no paper numbers in the text")
            body += [t.markdown(), "", f"Verdicts: {summary}.", ""]
        for name, caption in self.figures:
            body += [f"![{caption}]({name}.png)", "", caption, ""]
        if self.notes:
            body += ["## Notes", "", *self.notes, ""]
        body += ["## Summary", "", *self._summary(), ""]
        readme = self.out / "README.md"
        readme.write_text("\n".join([*md_head, *body]), encoding="utf-8")
        return readme
