"""Report noisy max (Laplace noise) and permute-and-flip.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
from numpy.typing import NDArray

from ._noise import standard_laplace
from ._selection import NoisyArgmax

__all__ = ["PermuteAndFlip", "ReportNoisyMax"]


@attrs.frozen(kw_only=True)
class ReportNoisyMax(NoisyArgmax):
    """Report ``argmax_i (u_i + Laplace(noise_scale))``: eps-DP with
    ``noise_scale = 2Δ / eps``.

    Notes
    -----
    Dwork, Roth 2014, Claim 3.9 (monotone counting queries, ``noise_scale = Δ / eps``); the
    general case pays the factor 2 as for the exponential mechanism. Pure DP only: unlike
    the Gumbel version it is not known to be bounded-range.

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "report_noisy_max"

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        return standard_laplace(rng, shape)


@attrs.frozen(kw_only=True)
class PermuteAndFlip(NoisyArgmax):
    """Permute-and-flip (McKenna, Sheldon 2020): eps-DP with ``noise_scale = 2Δ / eps``.

    Visit the candidates in random order and accept candidate r with probability
    ``exp((u_r - max u) / noise_scale)``. Never worse in expected utility than the exponential
    mechanism (McKenna, Sheldon 2020, Theorem 2).

    Notes
    -----
    Drawn as report-noisy-max with one-sided exponential noise, which has exactly the same
    output distribution (Ding, Kifer, Saghaian, Steinke, Wang, Xiao, Zhang 2021,
    arXiv:2105.07260, Theorem 1) and vectorises.

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "permute_and_flip"

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        return rng.standard_exponential(shape)
