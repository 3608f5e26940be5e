"""The privkit command line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from privkit import __version__
from privkit.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plan.json"


def test_version(capsys):
    """--version prints the package version."""
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"privkit {__version__}"


def test_account_prints_tree_and_tightest(capsys):
    """account prints the plan tree, a row per accountant and the tightest guarantee."""
    assert main(["account", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Sequential [add_remove]")
    assert "Repeat ×10" in out
    assert "Parallel (disjoint parts)" in out
    assert "tightest: (" in out
    assert "-DP by the" in out
    for name in ("basic", "zcdp", "rdp"):
        assert name in out


def test_account_json_is_consistent(capsys):
    """--json gives the tightest epsilon, which is the minimum over accountants."""
    assert main(["account", str(EXAMPLE), "--json", "--delta", "1e-6"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["delta"] == 1e-6
    assert result["epsilon"] == min(result["by_accountant"].values())


def test_account_delta_at_epsilon(capsys):
    """--epsilon reports delta instead."""
    assert main(["account", str(EXAMPLE), "--epsilon", "5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["epsilon"] == 5.0
    assert 0 <= result["delta"] < 1e-5


def test_account_single_accountant(capsys):
    """--accountant restricts the accountants used."""
    assert main(["account", str(EXAMPLE), "--accountant", "basic", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["by_accountant"]) == ["basic"]


def test_bad_plan_exits_2_with_message(tmp_path, capsys):
    """A malformed plan gives exit code 2 and a one-line error, not a traceback."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"relation": "add_remove", "plan": '
                   '{"laplace": {"noise_scale": -1, "l1_sensitivity": 1}}}')
    assert main(["account", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "privkit account: error: `noise_scale` must be a finite number > 0" in err


def test_missing_file_exits_2(capsys):
    """A missing plan file is reported, not raised."""
    assert main(["account", "/nonexistent/plan.json"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_console_script_runs():
    """The installed `privkit` entry point works in a fresh process."""
    exe = Path(sys.executable).with_name("privkit")
    out = subprocess.run([str(exe), "account", str(EXAMPLE)], capture_output=True, text=True,
                         check=True)
    assert "tightest" in out.stdout


def test_audit_prints_claims_against_bounds(tmp_path, capsys):
    """privkit audit NAME prints a table of claim against measured bound and writes a
    markdown report; built-in mechanisms are consistent, so the exit code is 0."""
    report = tmp_path / "audit.md"
    code = main(["audit", "laplace", "exponential", "--trials", "50000", "--report",
                 str(report)])
    out = capsys.readouterr().out
    assert code == 0
    assert "laplace" in out
    assert "exponential" in out
    assert "lower bound" in out
    assert report.read_text().startswith("| audit |")


def test_audit_unknown_name_is_refused(capsys):
    """An unknown mechanism name exits 2 listing the known ones."""
    assert main(["audit", "teleport"]) == 2
    assert "one of analyze_gauss" in capsys.readouterr().err
