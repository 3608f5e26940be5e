"""The exponential mechanism (McSherry, Talwar 2007), by the Gumbel-max trick.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import BoundedRange, Guarantee, PureDP
from privkit.neighbouring import Neighbouring, Sensitivity

from ._selection import NoisyArgmax

__all__ = ["Exponential"]


@attrs.frozen(kw_only=True)
class Exponential(NoisyArgmax):
    """Select candidate i with probability proportional to ``exp(u_i / noise_scale)``.

    ``Exponential.for_epsilon(eps, sensitivity=Δ)`` gives ``noise_scale = 2Δ / eps``: the
    familiar ``exp(eps u / (2Δ))``. The factor 2 is needed because between neighbours both
    the chosen utility and the normaliser move; with ``monotone=True`` (all utilities move
    the same way, e.g. counts under ADD_REMOVE) ``noise_scale = Δ / eps`` suffices (McSherry,
    Talwar 2007, Theorem 6; Dwork, Roth 2014, Theorem 3.10).

    Notes
    -----
    Drawn as ``argmax((u - max u) / noise_scale + G)`` with independent standard Gumbel
    G (Gumbel-max trick; G = -log E with E standard exponential). Privacy: pure eps-DP and
    eps-bounded-range (Durfee, Rogers 2019, Lemma 3.2), whose exact profile, zCDP
    ``eps^2 / 8`` and RDP are given by :class:`~privkit.BoundedRange`.

    Examples
    --------
    >>> from privkit.mechanisms import Exponential
    >>> m = Exponential.for_epsilon(1.0, sensitivity=1.0, relation="replace_one")
    >>> m.guarantees()
    (BoundedRange(eta=1.0), PureDP(epsilon=1.0))
    >>> int(m.release([0.0, 10.0, 50.0], rng=0))
    2

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "exponential"

    @classmethod
    def for_zcdp(cls, rho: float, *, sensitivity: float | Sensitivity,
                 relation: Neighbouring | str | None = None, monotone: bool = False
                 ) -> Exponential:
        """The mechanism that is rho-zCDP through bounded range: ``eta = sqrt(8 rho)``
        (Cesar, Rogers 2021, Lemma 3.2), i.e. ``for_epsilon(sqrt(8 rho))``."""
        r = check.positive_finite("rho", rho, "Exponential.for_zcdp")
        result: Exponential = cls.for_epsilon(math.sqrt(8.0 * r), sensitivity=sensitivity,
                                              relation=relation, monotone=monotone)
        return result

    def guarantees(self) -> tuple[Guarantee, ...]:
        eps = self.pure_epsilon
        return (BoundedRange(eta=eps), PureDP(epsilon=eps))

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        return -np.log(rng.standard_exponential(shape))
