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
    err = capsys.readouterr().err
    assert "must be one of analytics_count" in err  # sorted: the query layer's cases first
    assert "analyze_gauss" in err


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--trials", "3", "`--trials` must be an integer >= 10"),
    ("--seed", "-1", "`--seed` must be an integer >= 0"),
    ("--delta", "1", "`--delta` must be in (0, 1)"),
    ("--epsilon", "0", "`--epsilon` must be a finite number > 0"),
    ("--confidence", "1.5", "`--confidence` must be in (0, 1)"),
])
def test_audit_bad_options_exit_2_before_any_draw(option, value, message, capsys):
    """Bad options are refused before the first case runs (a pure mechanism's delta is
    checked too, though pure mechanisms are audited at delta 0)."""
    assert main(["audit", "laplace", option, value]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "[1/1]" not in err


def test_audit_bad_report_path_is_found_before_the_run(tmp_path, capsys):
    """An unwritable --report path is refused up front, not after the audits."""
    path = tmp_path / "missing-dir" / "report.md"
    assert main(["audit", "laplace", "--report", str(path)]) == 2
    err = capsys.readouterr().err
    assert "`--report` must be a writable file path" in err
    assert "[1/1]" not in err


def test_audit_prints_threat_models_and_progress(capsys):
    """An algorithm's row comes with its threat model; progress lines go to stderr."""
    pytest.importorskip("sklearn")
    assert main(["audit", "output_perturbation", "--trials", "20000"]) == 0
    captured = capsys.readouterr()
    assert "threat models:" in captured.out
    assert "output_perturbation: black box on the released weights" in captured.out
    assert "[1/1] output_perturbation" in captured.err


def test_audit_missing_extra_names_the_extra(capsys):
    """A case whose optional dependency is missing is skipped with the extra to install
    (was a ModuleNotFoundError traceback after three cases)."""
    from privkit.audits import registry

    def needs_sklearn(*, epsilon, delta):
        raise ModuleNotFoundError("No module named 'sklearn'", name="sklearn")

    registry.register("needs_sklearn", needs_sklearn)
    try:
        assert main(["audit", "laplace", "needs_sklearn", "--trials", "1000"]) == 2
    finally:
        registry._ALGORITHMS.pop("needs_sklearn")
    captured = capsys.readouterr()
    assert 'pip install "privkit[algorithms]"' in captured.err
    assert "laplace" in captured.out
    assert "not audited (missing optional dependencies): needs_sklearn" in captured.out


def test_account_json_with_infinite_epsilon_is_json_and_exits_1(tmp_path, capsys):
    """No accountant certifies a finite epsilon at delta 0 for a Gaussian: the JSON is
    valid (null, not Infinity), says certified false, and the exit code is 1."""
    plan = tmp_path / "gauss.json"
    plan.write_text('{"relation": "add_remove", "plan": '
                    '{"gaussian": {"noise_scale": 1.0, "l2_sensitivity": 1.0}}}')
    code = main(["account", str(plan), "--json", "--delta", "0"])
    out = capsys.readouterr().out
    result = json.loads(out)
    assert "Infinity" not in out
    assert result["epsilon"] is None
    assert result["certified"] is False
    assert code == 1


def test_audit_sequential_reports_draws_used(capsys):
    """--sequential stops a correct mechanism at the --trials cap and prints the draws
    every stage used (2,000 then 8,000 measured draws, with their selection draws)."""
    assert main(["audit", "laplace", "--sequential", "--trials", "8000"]) == 0
    out = capsys.readouterr().out
    assert "laplace" in out
    assert "12,000" in out  # 2,400 + 9,600 draws per side over the two stages


def test_reproduce_unknown_paper_is_refused_by_name(capsys):
    """An unknown paper exits 2 with the list of papers, not a traceback."""
    assert main(["reproduce", "nope2099"]) == 2
    err = capsys.readouterr().err
    assert "PAPER" in err
    assert "park2022" in err
    assert "nope2099" in err


def test_reproduce_passes_options_to_the_papers_runner(capsys):
    """Options after PAPER reach the paper's own parser (its --help names the verb)."""
    pytest.importorskip("sklearn")
    with pytest.raises(SystemExit) as info:
        main(["reproduce", "park2022", "--help"])
    assert info.value.code == 0
    assert "privkit reproduce park2022" in capsys.readouterr().out


@pytest.fixture
def toy_estimators(monkeypatch):
    """The correct and one leaky toy estimator, registered for the transcript tier."""
    pytest.importorskip("sklearn")
    from privkit.audits import estimators
    from privkit.audits.leaky import PrivateCentroids, UniqueLabels

    monkeypatch.setattr(estimators, "_REGISTERED", {
        "PrivateCentroids": PrivateCentroids, "UniqueLabels": UniqueLabels})


def test_audit_transcript_tier_prints_rows_threat_models_and_what_it_ran(toy_estimators,
                                                                        capsys):
    """A transcript row per label mode, its threat model (channels, fits, the channel
    shown), and the tier's size and time; a correct estimator passes (exit 0)."""
    assert main(["audit", "transcript:PrivateCentroids"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "transcript:PrivateCentroids[classes declared]" in out
    assert "transcript:PrivateCentroids[classes learnt]" in out
    assert ("the whole transcript: attributes, predictions on 8 probes, warnings, "
            "exceptions; pair: 6 channels (new_label, record, non_finite, at_bound, "
            "beyond_bound, worst_case), each at 0.9958") in out
    assert "transcript tier: 2 rows, 20 + 10 fits per side of each channel, 720 fits" in out
    assert "[1/1] transcript:PrivateCentroids" in captured.err


def test_audit_transcript_tier_fails_on_a_leak(toy_estimators, capsys):
    """classes_ = np.unique(y) separates every fit on the new_label channel: the second
    stage certifies more than the claim of 2 and the run exits 1."""
    assert main(["audit", "transcript:UniqueLabels", "--transcript-fits", "40"]) == 1
    out = capsys.readouterr().out
    assert "transcript:UniqueLabels[classes declared]" in out
    assert "violation" in out
    assert "the largest bound shown: new_label" in out


def test_audit_unknown_transcript_name_lists_the_known_ones(toy_estimators, capsys):
    assert main(["audit", "transcript:Nope"]) == 2
    assert "transcript:PrivateCentroids" in capsys.readouterr().err


def test_audit_transcript_fits_are_checked_before_any_fit(capsys):
    assert main(["audit", "transcript:Nope", "--transcript-fits", "3"]) == 2
    assert "`--transcript-fits` must be an integer >= 10" in capsys.readouterr().err


def test_audit_runs_the_transcript_tier_by_default(toy_estimators):
    """With no names, every registered transcript estimator is audited after the cases."""
    from privkit.cli import _transcript_estimators

    found, missing = _transcript_estimators([])
    assert missing is None
    assert {"transcript:PrivateCentroids", "transcript:UniqueLabels"} <= set(found)
    assert _transcript_estimators(["laplace"]) == ({}, None)


def test_the_flower_federation_is_exempt_from_the_transcript_tier():
    """Flower's estimator starts about 13 processes per fit: it is exempt (its transcript
    equals the in-process FedDPDRDPMLClassifier's bit for bit, tests/algorithms/
    test_flower.py), and the in-process estimator is audited in its place."""
    pytest.importorskip("sklearn")
    from privkit.audits.estimators import EXEMPT, estimators, uncovered

    assert "FlowerFedDPDRDPMLClassifier" in EXEMPT
    audited = estimators()
    assert "FlowerFedDPDRDPMLClassifier" not in audited
    assert "FedDPDRDPMLClassifier" in audited
    assert "FlowerFedDPDRDPMLClassifier" not in uncovered()
