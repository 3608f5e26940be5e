"""Random number generators: one ``rng`` argument everywhere.

Every privkit function that draws randomness takes ``rng``, which may be

* a :class:`numpy.random.Generator` (used as is, so a caller can thread one generator
  through a whole pipeline, NEP 19 / SPEC 7),
* an ``int`` or :class:`numpy.random.SeedSequence` (a reproducible seed), or
* ``None`` (fresh entropy from the operating system).

.. warning::
   numpy's default bit generator (PCG64) is statistically excellent but **not
   cryptographically secure**: an adversary who sees enough outputs can in principle
   recover its state and so the noise, and with it the private value. Seeds make runs
   reproducible, which is what tests and experiments need and what a production release
   must not have. For releases that will be published, use :func:`secure_generator`,
   a numpy Generator driven by the ChaCha20 stream cipher seeded from the operating
   system's CSPRNG (``secrets``).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import secrets
from typing import TypeAlias

import numpy as np

from privkit import _validation as check

__all__ = ["RNGLike", "as_generator", "secure_generator"]

#: What privkit accepts wherever it takes ``rng``.
RNGLike: TypeAlias = np.random.Generator | np.random.SeedSequence | int | None


def as_generator(rng: RNGLike, *, owner: str = "as_generator") -> np.random.Generator:
    """Normalise ``rng`` to a :class:`numpy.random.Generator`.

    A Generator is returned unchanged (not copied), so successive calls draw fresh values.

    Raises
    ------
    InvalidParameterError
        For anything else (a bool, a float, numpy's legacy ``RandomState``, ...).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    seed: object = rng
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise check.fail("rng", rng, "a seed >= 0", owner)
        return np.random.default_rng(int(seed))
    raise check.fail(
        "rng", rng,
        "a numpy.random.Generator, a SeedSequence, an int seed >= 0, or None", owner,
        "for published releases use privkit.secure_generator()",
    )


def secure_generator() -> np.random.Generator:
    """A Generator whose bits come from ChaCha20, keyed by the OS's CSPRNG.

    Notes
    -----
    Uses ``randomgen.ChaCha(rounds=20)`` (Bernstein's ChaCha20 in counter mode) with a
    256-bit key from :mod:`secrets`. It is about 2-3 times slower than PCG64 and cannot be
    seeded, by design. Install it with ``pip install "privkit[secure]"``.

    Raises
    ------
    ImportError
        If the optional dependency ``randomgen`` is not installed.
    """
    try:
        from randomgen import ChaCha
    except ImportError as exc:  # pragma: no cover - randomgen is installed by the README
        raise ImportError(
            "privkit.secure_generator() needs the optional dependency randomgen: "
            'pip install "privkit[secure]"'
        ) from exc
    return np.random.Generator(ChaCha(seed=secrets.randbits(256), rounds=20))
