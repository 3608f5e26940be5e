"""privkit._validation.withheld: third-party readers of private data refuse without
quoting it (issue 22, rule R5)."""

import numpy as np
import pytest
from _transcript import SENTINEL_LABEL, capture, leaks

from privkit import InvalidParameterError
from privkit import _validation as check


def test_a_reader_that_succeeds_returns_its_value():
    x = np.arange(3.0)
    assert check.withheld(lambda: x, "X", "numbers", "t") is x


@pytest.mark.parametrize("raise_", [
    lambda: np.asarray(["1.0", SENTINEL_LABEL], dtype=float),  # numpy echoes the string
    lambda: (_ for _ in ()).throw(TypeError(SENTINEL_LABEL)),
    lambda: (_ for _ in ()).throw(OverflowError(SENTINEL_LABEL)),
])
def test_a_refusal_is_replaced_and_chains_nothing(raise_):
    """numpy's message names the value; the replacement names the parameter, what is
    allowed and the owner, and has no __cause__ or __context__ that could."""
    said = capture(lambda: check.withheld(raise_, "X", "a 2-D array of numbers", "Owner"))
    assert isinstance(said.error, InvalidParameterError)
    assert said.error.__cause__ is None
    assert said.error.__context__ is None
    assert str(said.error) == ("`X` must be a 2-D array of numbers for Owner "
                               f"{check.NOT_SHOWN}")
    assert not leaks(said)


def test_privkits_own_error_passes_through():
    error = check.fail("n_components", 0, "an integer >= 1", "Owner")

    def refuse():
        raise error

    with pytest.raises(InvalidParameterError) as info:
        check.withheld(refuse, "X", "numbers", "t")
    assert info.value is error


def test_other_exceptions_are_not_swallowed():
    with pytest.raises(KeyError):
        check.withheld(lambda: {}["k"], "X", "numbers", "t")
