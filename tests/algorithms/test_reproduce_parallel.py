"""``privkit reproduce NAME --jobs J``: independent cells in worker processes give the
serial run's numbers (per-cell seeds, results in grid order, one BLAS thread everywhere),
and the header records the CPU time beside the wall time."""

from pathlib import Path

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from privkit.cli import main

DATA = Path("/work/shared/data")


def _body(path: Path) -> str:
    """A CSV's rows without its header (the header's times and load vary)."""
    return path.read_text(encoding="utf-8").split("row,column", 1)[1]


def test_two_workers_give_the_serial_numbers(tmp_path):
    """dpksvmel --quick (a few seconds): every CSV row equal for --jobs 1 and 2."""
    if not (DATA / "heart.csv.gz").exists():
        pytest.skip(f"the shared data sets are not in {DATA}")
    for jobs in (1, 2):
        assert main(["reproduce", "dpksvmel", "--quick", "--jobs", str(jobs), "--out",
                     str(tmp_path / str(jobs)), "--data", str(DATA), "--quiet"]) == 0
    assert _body(tmp_path / "1" / "accuracy.csv") == _body(tmp_path / "2" / "accuracy.csv")
    readme = (tmp_path / "2" / "README.md").read_text(encoding="utf-8")
    assert "--jobs 2): " in readme
    assert "over 2 workers: " in readme
    assert "wall time: " in readme
    assert "## Summary" in readme.rsplit("## Notes", 1)[-1]


def test_jobs_below_one_is_refused_by_name(capsys):
    assert main(["reproduce", "dpksvmel", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_a_rerun_removes_its_papers_old_tables_only(tmp_path):
    """A table an earlier run of the same paper wrote, and this run does not, would stay
    stale: it is removed; a file of another paper or without a stamp stays."""
    from privkit.algorithms.reproduce._report import Cell, Report

    old = tmp_path / "gone.md"
    old.write_text("# x\n\n- command: privkit reproduce demo --full\n", encoding="utf-8")
    other = tmp_path / "other.md"
    other.write_text("- command: privkit reproduce demo2 --full\n", encoding="utf-8")
    mine = tmp_path / "notes.md"
    mine.write_text("hand-written\n", encoding="utf-8")
    report = Report(paper="demo", title="Demo", out=tmp_path, argv=["--full"],
                    depends=["algorithms/reproduce"], seed=0, grid="full")
    report.table("kept", "A table", ["c"]).put("r", "c", Cell([0.5, 0.6]))
    report.write()
    assert not old.exists()
    assert other.exists()
    assert mine.exists()
    assert (tmp_path / "kept.md").exists()
    assert (tmp_path / "kept.csv").exists()


def test_the_stamp_is_the_code_the_run_started_with(tmp_path, monkeypatch):
    """The commit is taken when the run starts; if the depended-on code changes before
    the files are written, the stamp says ``+dirty`` (no single commit wrote them)."""
    from privkit.algorithms.reproduce import _report

    monkeypatch.setattr(_report, "code_version", lambda depends: "a" * 40)
    report = _report.Report(paper="demo", title="Demo", out=tmp_path, argv=[],
                            depends=["algorithms/reproduce"], seed=0, grid="full")
    monkeypatch.setattr(_report, "_git", lambda *args: "")
    assert report._version() == "a" * 40
    monkeypatch.setattr(_report, "_git", lambda *args: "algorithms/reproduce/_cli.py"
                        if args[0] == "diff" else "")
    assert report._version() == "a" * 40 + "+dirty"
