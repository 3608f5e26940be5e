"""Random number generators."""

import numpy as np

from privkit import as_generator, secure_generator


def test_generator_is_passed_through_unchanged():
    """A Generator is returned as is, so callers thread one stream through."""
    g = np.random.default_rng(0)
    assert as_generator(g) is g


def test_seeds_are_reproducible_and_none_is_fresh():
    """The same int seed gives the same stream; None gives OS entropy."""
    assert as_generator(7).integers(1 << 62) == as_generator(7).integers(1 << 62)
    assert as_generator(np.random.SeedSequence(7)).integers(1 << 62) == \
        as_generator(7).integers(1 << 62)
    assert as_generator(None).integers(1 << 62) != as_generator(None).integers(1 << 62)


def test_secure_generator_is_chacha_and_unseeded():
    """secure_generator uses ChaCha20 and two instances give different streams."""
    a, b = secure_generator(), secure_generator()
    assert type(a.bit_generator).__name__ == "ChaCha"
    assert a.integers(1 << 62) != b.integers(1 << 62)
    # its draws are ordinary numpy draws: a mean of 10^5 normals is near 0
    assert abs(a.standard_normal(100_000).mean()) < 0.02  # 6.3 standard errors
