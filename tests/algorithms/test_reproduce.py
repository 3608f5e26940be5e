"""``privkit reproduce NAME``: the report framework (cells, verdicts, tables, headers) and
each paper's ``--quick`` run writing its folder (slow tier: all five; fast tier: the
fastest one and every paper's refusal of a missing data folder)."""

import csv
import math
from pathlib import Path

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from privkit.algorithms.reproduce._report import Cell, Report, code_version
from privkit.cli import _REPRODUCTIONS, main

DATA = Path("/work/shared/data")
PAPERS = ("park2022", "dpksvmel", "lee-nystrom", "vanderreijden2019", "wang2024")


@pytest.fixture
def data_dir():
    if not (DATA / "iris.csv.gz").exists():
        pytest.skip(f"the shared data sets are not in {DATA}")
    return DATA


def test_five_papers_are_registered():
    from privkit.algorithms.reproduce import CATALOGUE

    assert tuple(_REPRODUCTIONS) == PAPERS
    assert tuple(e.name for e in CATALOGUE) == PAPERS
    assert [e.module for e in CATALOGUE] == [m for m, _ in _REPRODUCTIONS.values()]


def test_list_names_each_paper_what_it_reproduces_and_its_commands(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name, author in zip(PAPERS, ("J. Park", "Z. Sun", "B. Lee", "van der Reijden",
                                     "T. Wang"), strict=True):
        assert f"privkit reproduce {name} --quick --data DIR" in out
        assert f"privkit reproduce {name} --full --data DIR" in out
        assert author in out
    assert out.count("reproduces: ") == 5


def test_no_paper_and_no_list_is_refused_by_name(capsys):
    assert main(["reproduce"]) == 2
    assert "PAPER" in capsys.readouterr().err


def test_standard_error_against_its_closed_form():
    """se = sample sd / sqrt(k): for (0.5, 0.6), sd = 0.1 / sqrt(2), so se = 0.05."""
    cell = Cell([0.5, 0.6], paper=0.55)
    assert cell.mean == pytest.approx(0.55)
    assert cell.se == pytest.approx(0.05)
    assert math.isnan(Cell([0.7]).se)


def test_verdict_rule_two_standard_errors_plus_rounding():
    """Tolerance 2 se + half a unit of the paper's last digit: se 0.05 (above) gives
    0.1005 around the mean 0.55."""
    assert Cell([0.5, 0.6], paper=0.65).verdict == "match"  # 0.100 <= 0.1005
    assert Cell([0.5, 0.6], paper=0.651).verdict == "differs"  # 0.101 > 0.1005
    assert Cell([0.5, 0.5], paper=0.5004).verdict == "match"  # rounding only
    assert Cell([0.5, 0.5], paper=0.501).verdict == "differs"
    assert Cell([0.5, 0.5], paper=0.54, decimals=1).verdict == "match"  # 0.04 <= 0.05
    assert Cell([0.5], paper=0.5).verdict == "one run"
    assert Cell([0.5, 0.6]).verdict == "figure only"


def test_reason_is_shown_only_where_the_cell_differs():
    assert "slow" in Cell([0.5, 0.5], paper=0.9, reason="slow").text()
    assert "slow" not in Cell([0.5, 0.5], paper=0.5, reason="slow").text()


def test_report_writes_markdown_csv_and_headers(tmp_path):
    report = Report(paper="demo", title="Demo", out=tmp_path, argv=["--quick"],
                    depends=["algorithms/reproduce"], seed=3, grid="quick")
    table = report.table("t1", "A table", ["eps 1"], row_label="method")
    table.put("m", "eps 1", Cell([0.5, 0.6], paper=0.9, reason="why"))
    table.put("n", "eps 1", "text")
    readme = report.write()
    text = readme.read_text()
    for key in ("command: privkit reproduce demo --quick", "privkit-commit: ",
                "privkit-depends: algorithms/reproduce", "machine: ", "load average",
                "seed 3", "differs; why", "Verdicts: differs: 1."):
        assert key in text
    rows = list(csv.reader(line for line in (tmp_path / "t1.csv").read_text()
                                  .splitlines() if not line.startswith("#")))
    assert rows[0][:3] == ["row", "column", "privkit_mean"]
    assert float(rows[1][2]) == pytest.approx(0.55)
    assert rows[1][6] == "differs"
    assert (tmp_path / "t1.csv").read_text().startswith("# command: ")
    assert "privkit-commit: " in (tmp_path / "t1.md").read_text()


def test_code_version_names_a_commit_or_the_package():
    version = code_version(["algorithms/reproduce"])
    assert version.startswith("privkit ") or len(version.split("+")[0]) == 40


@pytest.mark.parametrize("paper", PAPERS)
def test_a_missing_data_file_is_refused_by_option_name(paper, tmp_path, capsys):
    code = main(["reproduce", paper, "--quick", "--data", str(tmp_path), "--out",
                 str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    if paper == "lee-nystrom":  # generated data: no folder needed
        assert code == 0
        return
    assert code == 2
    assert err.startswith(f"privkit reproduce {paper}: error:")
    assert "--data" in err


@pytest.mark.parametrize(("argv", "name"), [(["--runs", "0"], "--runs"),
                                            (["--seed", "-1"], "--seed"),
                                            (["--bogus"], "--bogus")])
def test_bad_options_are_named(argv, name, capsys):
    assert main(["reproduce", "dpksvmel", *argv]) == 2
    assert name in capsys.readouterr().err


def _check_folder(out: Path, paper: str) -> None:
    readme = (out / "README.md").read_text()
    assert readme.count("privkit-commit: ") == 1
    assert f"command: privkit reproduce {paper} --quick" in readme
    assert "grid: quick" in readme
    csvs = list(out.glob("*.csv"))
    assert csvs
    for path in csvs:
        assert "# privkit-commit: " in path.read_text()
    assert list(out.glob("*.png"))


def test_quick_dpksvmel_writes_its_folder(data_dir, tmp_path, capsys):
    """The fastest paper end to end (a few seconds): files, header, deterministic for
    a seed (two runs give the same CSV rows)."""
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main(["reproduce", "dpksvmel", "--quick", "--out", str(out), "--data",
                     str(data_dir), "--quiet"]) == 0
    assert (outs[0] / "accuracy.png").is_file()
    body = [(o / "accuracy.csv").read_text().split("row,column", 1)[1] for o in outs]
    assert body[0] == body[1]
    assert "majority" in (outs[0] / "README.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_quick_run_of_every_paper_writes_tables_figures_and_headers(paper, data_dir,
                                                                     tmp_path):
    out = tmp_path / paper
    assert main(["reproduce", paper, "--quick", "--out", str(out), "--data",
                 str(data_dir), "--quiet"]) == 0
    _check_folder(out, paper)
