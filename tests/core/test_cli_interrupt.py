"""``privkit audit`` under interruption, with odd --report paths, and its progress bars.

Ctrl-C (SIGINT) prints the rows already finished and exits with 130, no traceback; a
--report path that is not a regular file is refused before any draw (a FIFO used to be
opened for writing, which waits for a reader forever); bars are drawn on a terminal,
never when stderr is piped or with --quiet.
"""

import io
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from privkit.cli import main

AUDIT = [sys.executable, "-m", "privkit.cli", "audit"]


def _lines(stream: io.TextIOBase, into: "queue.Queue[str]") -> None:
    for line in stream:
        into.put(line)


def test_ctrl_c_prints_the_finished_rows_and_exits_130(tmp_path: Path) -> None:
    """The first case finishes, the second (10^8 draws per side) is interrupted: the
    table holds the first row, the report is written with it, and nothing is raised."""
    report = tmp_path / "audit.md"
    proc = subprocess.Popen([*AUDIT, "laplace", "gaussian", "--report", str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_lines, args=(proc.stderr, lines), daemon=True)
    reader.start()
    seen = []
    while not any(line.startswith("[2/2] gaussian") for line in seen):
        seen.append(lines.get(timeout=120))
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    out = proc.stdout.read()  # the table is a few lines: the pipe cannot have filled
    reader.join(timeout=30)
    while not lines.empty():
        seen.append(lines.get())
    err = "".join(seen)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted (Ctrl-C) after 1 of 2 cases" in err
    assert "laplace" in out
    assert "gaussian" not in out
    written = report.read_text()
    assert "| laplace |" in written
    assert "interrupted" in written


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_report_that_is_not_a_regular_file_is_refused_before_any_draw(
        kind: str, tmp_path: Path) -> None:
    """The run stops at once with exit code 2 and a message naming --report and what
    the path is; no case starts."""
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
        word = "a FIFO"
    elif kind == "directory":
        path, word = tmp_path, "a directory"
    else:
        path, word = Path(os.devnull), "a device"
    done = subprocess.run([*AUDIT, "laplace", "--report", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "`--report` must be a regular file path" in done.stderr
    assert word in done.stderr
    assert "[1/1]" not in done.stderr
    assert done.stdout == ""


def test_a_new_report_path_is_checked_and_left_absent(tmp_path: Path) -> None:
    """A new file in a writable folder is accepted by the check, which leaves nothing."""
    from privkit.cli import _check_report_path

    path = tmp_path / "new.md"
    _check_report_path(str(path), "privkit audit")
    assert not path.exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("quiet", "drawn"), [(False, True), (True, False)])
def test_bars_on_a_terminal_unless_quiet(quiet: bool, drawn: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, a bar over the rows and one over the draws; none with --quiet.
    The per-row lines are printed either way."""
    pytest.importorskip("tqdm")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["audit", "laplace", "exponential", "--trials", "20000"]
    assert main([*argv, "--quiet"] if quiet else argv) == 0
    err = terminal.getvalue()
    assert ("privkit audit" in err and "audit draws" in err) is drawn
    assert ("row/s" in err or "s/row" in err) is drawn
    assert "[2/2] exponential ..." in err


def test_no_bar_when_stderr_is_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped (not a terminal), only plain lines: no carriage return, no bar."""
    sink = io.StringIO()
    monkeypatch.setattr(sys, "stderr", sink)
    assert main(["audit", "laplace", "--sequential", "--trials", "8000"]) == 0
    assert "\r" not in sink.getvalue()
    assert "audit stages" not in sink.getvalue()


def test_sequential_audits_draw_a_bar_over_their_stages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With --sequential on a terminal, a bar over the stages sits above the draws'."""
    pytest.importorskip("tqdm")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["audit", "laplace", "--sequential", "--trials", "8000"]) == 0
    assert "audit stages" in terminal.getvalue()
