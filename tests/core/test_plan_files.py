"""Plan files as hostile input, and conversions that validate their arguments."""

import pytest

from privkit import InvalidParameterError, conversions
from privkit.plan_spec import MAX_PLAN_BYTES, load_plan

LEAF = '{"laplace": {"noise_scale": 1.0, "l1_sensitivity": 1.0}}'


def _file(tmp_path, text):
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_repeated_key_is_refused(tmp_path):
    """json keeps the last of two equal keys: a plan file refuses them instead."""
    path = _file(tmp_path, '{"relation": "add_remove", "plan": {"laplace": {"noise_scale": '
                           '1.0, "noise_scale": 100.0, "l1_sensitivity": 1.0}}}')
    with pytest.raises(InvalidParameterError, match="'noise_scale' twice"):
        load_plan(path)


@pytest.mark.parametrize("count", ["1e400", "9" * 5000])
def test_counts_beyond_any_float_are_refused(tmp_path, count):
    """10^400 and a 5,000-digit count get a clear error, not an overflow."""
    path = _file(tmp_path, f'{{"relation": "add_remove", "plan": {{"repeat": {{"count": '
                           f'{count}, "block": {LEAF}}}}}}}')
    with pytest.raises(InvalidParameterError, match="plan file's"):
        load_plan(path)


def test_files_are_read_with_a_size_cap(tmp_path):
    """A file over the cap is refused after reading at most cap + 1 bytes."""
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_PLAN_BYTES + 1))
    with pytest.raises(InvalidParameterError, match="larger than"):
        load_plan(path)


def test_a_good_file_still_reads(tmp_path):
    """The refusals leave ordinary files alone."""
    doc = load_plan(_file(tmp_path, f'{{"relation": "add_remove", "delta": 1e-5, '
                                    f'"plan": {LEAF}}}'))
    assert doc.delta == 1e-5


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: conversions.zcdp_to_epsilon(-1.0, delta=1e-5), "`rho`"),
    (lambda: conversions.zcdp_to_epsilon(0.5, delta=1.5), "`delta`"),
    (lambda: conversions.zcdp_to_delta(float("nan"), epsilon=1.0), "`rho`"),
    (lambda: conversions.zcdp_to_delta(0.5, epsilon=-1.0), "`epsilon`"),
])
def test_conversions_validate_their_arguments(call, fragment):
    """zcdp_to_epsilon(-1, 1e-5) used to return 0; now it names the parameter."""
    with pytest.raises(InvalidParameterError, match=fragment):
        call()
