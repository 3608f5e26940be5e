"""Shared machinery of the selection mechanisms: noisy argmax over candidate utilities.

All of them release ``argmax_i (u_i + Z_i)`` for independent noise ``Z_i`` of a given
``noise_scale``; they differ in the law of ``Z`` and hence in their privacy:

===================  =================  ===========================================
noise                mechanism          privacy, noise_scale = 2 Δ / eps
===================  =================  ===========================================
Gumbel               exponential mech.  eps-DP and eps-bounded-range (eps^2/8 zCDP)
exponential (1-sided) permute-and-flip  eps-DP
Laplace              report noisy max   eps-DP
===================  =================  ===========================================

With ``monotone=True`` (every utility moves in the same direction between neighbours,
e.g. counts under ADD_REMOVE), ``noise_scale = Δ / eps`` suffices for all three.

Outputs are candidate indices, so floating-point attacks on low-order bits do not
apply; the noise itself is drawn in double precision.

The utilities are private (``privkit.mechanism``'s rule): they are clamped onto
``[-FLOAT_BOUND, FLOAT_BOUND]`` (2^1000, infinities included), which moves no utility
further and keeps monotone utilities monotone, so it costs no privacy; NaN is refused
without showing the value. The number of candidates is public: at least one.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.mechanism import Mechanism, WorstCase, as_value, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._validators import boolean


@attrs.frozen(kw_only=True)
class NoisyArgmax(Mechanism):
    """Base of the selection mechanisms (see the module docstring).

    Parameters
    ----------
    noise_scale : float
        The noise scale, finite and > 0 (in the utilities' units).
    sensitivity : Sensitivity
        Sensitivity of the utility vector in the L-infinity norm: no candidate's utility
        moves by more than this between neighbours.
    monotone : bool, default False
        Whether all utilities move in the same direction between any two neighbours.

    The query answer is one utility vector (one run); its maximum is subtracted before
    the noise is added, so utilities of any magnitude select without rounding bias.
    """

    kind: ClassVar[str]
    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.LINF)
    monotone: bool = attrs.field(default=False, validator=boolean)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | str | None = None, monotone: bool = False) -> Any:
        """The mechanism with the smallest scale that is epsilon-DP:
        ``2 Δ / epsilon``, or ``Δ / epsilon`` for monotone utilities."""
        owner = f"{cls.__name__}.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.LINF, relation=relation, owner=owner)
        check.instance("monotone", monotone, bool, owner)
        factor = 1.0 if monotone else 2.0
        return cls(noise_scale=factor * sens.value / eps, sensitivity=sens, monotone=monotone)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """k candidates under REPLACE_ONE: all utilities 0 on D; on D' candidate 0 moves up
        by Δ and the k - 1 others down by Δ, with ``k = clip(40 e^eps, 4, 128)``.

        The privacy loss of the output "candidate 0" is
        ``log(k P'[0])``, which tends to ``2Δ / noise_scale = eps`` as k grows: the others'
        mass dominates the normaliser (for the exponential mechanism,
        ``P'[0] = e^(eps/2) / (e^(eps/2) + (k - 1) e^(-eps/2))``; McSherry, Talwar 2007;
        Dwork, Roth 2014, Theorem 3.10's proof). k is capped so that output 0 keeps a
        probability of about 1/k that 10^6 draws can measure. ``ceiling`` is this pair's
        exact epsilon over the claim: ``P'[0]`` is the integral of the noise density
        against the other candidates' CDFs (scipy quad; closed form for Gumbel noise).
        """
        import math

        from scipy import integrate, stats

        mech = cls.for_epsilon(epsilon, sensitivity=1.0, relation=Neighbouring.REPLACE_ONE)
        k = int(min(128, max(4, math.ceil(40.0 * math.exp(epsilon)))))
        second = -np.ones(k)
        second[0] = 1.0
        gap = 2.0 / mech.noise_scale  # candidate 0's lead over each other, in noise units
        if cls.kind == "exponential":
            win = 1.0 / (1.0 + (k - 1) * math.exp(-gap))
        else:
            law = stats.laplace if cls.kind == "report_noisy_max" else stats.expon
            lo, hi = law.ppf(1e-16) - gap, law.isf(1e-16) + gap
            win = float(integrate.quad(lambda x: law.pdf(x) * law.cdf(x + gap) ** (k - 1),
                                       lo, hi, limit=400, points=[0.0, -gap])[0])
        true = max(math.log(win * k), abs(math.log((1.0 - win) / (1.0 - 1.0 / k))))
        return WorstCase(mech, np.zeros(k), second, ceiling=min(1.0, true / epsilon))

    @property
    def pure_epsilon(self) -> float:
        """``2 Δ / noise_scale`` (``Δ / noise_scale`` when monotone)."""
        return (1.0 if self.monotone else 2.0) * self.sensitivity.value / self.noise_scale

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.pure_epsilon),)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        raise NotImplementedError

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.float64]:
        u = as_value(value, owner)  # clamped onto [-FLOAT_BOUND, FLOAT_BOUND]
        if u.ndim != 1 or u.shape[0] == 0:
            raise check.private_fail("value", "a 1-d array of utilities (one per candidate, "
                                     "at least one)", owner,
                                     "one call selects once; call again for another selection")
        return u

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int64]:
        """The index of the selected candidate, shape ``size``."""
        with np.errstate(over="ignore"):  # a gap beyond the doubles becomes -inf: never chosen
            centred = (value - np.max(value)) / self.noise_scale
        noisy = centred + self._noise(rng, shape + value.shape)
        chosen: NDArray[np.int64] = np.argmax(noisy, axis=-1)
        return chosen
