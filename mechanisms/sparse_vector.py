"""The sparse vector technique, in the form proven private by Lyu, Su, Li (2017).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.mechanism import Mechanism, WorstCase, as_value, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import standard_laplace
from ._validators import boolean, positive_finite

__all__ = ["ABOVE", "BELOW", "NOT_ANSWERED", "SparseVector"]

#: Output codes of :meth:`SparseVector.release`.
ABOVE, BELOW, NOT_ANSWERED = 1, 0, -1


@attrs.frozen(kw_only=True)
class SparseVector(Mechanism):
    """AboveThreshold and its c-fold version: report which queries exceed a threshold,
    stopping after ``max_positives`` of them.

    For a fixed sequence of queries ``q_1, q_2, ...`` each of sensitivity Δ and a public
    threshold T: draw ``rho ~ Lap(threshold_scale)`` once; for each query draw
    ``nu_i ~ Lap(query_scale)`` and answer ABOVE if ``q_i + nu_i >= T + rho``, else BELOW;
    halt after the c-th ABOVE (later queries are NOT_ANSWERED).

    Parameters
    ----------
    threshold_scale : float
        Scale of the threshold noise, ``Δ / eps_1``.
    query_scale : float
        Scale of each query's noise, ``2 c Δ / eps_2`` (``c Δ / eps_2`` if monotone).
    sensitivity : Sensitivity
        Each query's sensitivity (L-infinity over the query vector).
    max_positives : int
        c >= 1; ``c = 1`` is AboveThreshold.
    monotone : bool, default False
        Whether all queries move in the same direction between any two neighbours.

    Notes
    -----
    Lyu, Su, Li 2017, "Understanding the sparse vector technique for differential
    privacy" (arXiv:1603.01699v4), Algorithm 1 and Theorem 2: eps_1 + eps_2 -DP with
    ``eps_1 = Δ / threshold_scale`` and ``eps_2 = 2 c Δ / query_scale``. Variants that
    reuse no threshold noise, give numeric answers for free, or do not halt after c
    positives are not private (Lyu et al., Section 3); privkit calls nothing else SVT.
    The best split is ``eps_1 : eps_2 = 1 : (2c)^(2/3)`` (their Section 4.2).

    The answers are private (``privkit.mechanism``'s rule): clamped onto
    ``[-FLOAT_BOUND, FLOAT_BOUND]`` (2^1000, infinities included), which moves no answer
    further, at no cost in privacy; NaN is refused without showing the value; an empty
    vector of queries gives an empty answer. The threshold is public.

    Examples
    --------
    >>> from privkit import Neighbouring
    >>> from privkit.mechanisms import SparseVector
    >>> svt = SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE,
    ...                                max_positives=1)
    >>> svt.release([1.0, 2.0, 500.0, 3.0], threshold=100.0, rng=1).tolist()
    [0, 0, 1, -1]

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "sparse_vector"
    release_options: ClassVar[tuple[str, ...]] = ("threshold",)

    threshold_scale: float = attrs.field(validator=positive_finite)
    query_scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = sensitivity_field(Norm.LINF)
    max_positives: int = attrs.field(default=1,
                                     validator=check.attrs_validator(check.positive_int))
    monotone: bool = attrs.field(default=False, validator=boolean)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | str | None = None, max_positives: int = 1,
                    monotone: bool = False, threshold_share: float | None = None
                    ) -> SparseVector:
        """Split epsilon between threshold and queries (by default Lyu et al.'s optimal
        ``1 : (2c)^(2/3)``, or ``threshold_share`` of it to the threshold)."""
        owner = "SparseVector.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.LINF, relation=relation, owner=owner)
        c = check.positive_int("max_positives", max_positives, owner)
        check.instance("monotone", monotone, bool, owner)
        if threshold_share is None:
            share = 1.0 / (1.0 + (2.0 * c) ** (2.0 / 3.0))
        else:
            share = check.open_unit("threshold_share", threshold_share, owner)
        eps1, eps2 = share * eps, (1.0 - share) * eps
        factor = 1.0 if monotone else 2.0
        return cls(threshold_scale=sens.value / eps1,
                   query_scale=factor * c * sens.value / eps2,
                   sensitivity=sens, max_positives=c, monotone=monotone)

    def guarantees(self) -> tuple[Guarantee, ...]:
        d = self.sensitivity.value
        factor = 1.0 if self.monotone else 2.0
        eps = d / self.threshold_scale + factor * self.max_positives * d / self.query_scale
        return (PureDP(epsilon=eps),)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """AboveThreshold (c = 1) on m + 1 queries against threshold 0 under ADD_REMOVE:
        all answers 0 on D; on D' the first m move down by Δ and the last up by Δ. The
        output "m BELOWs, then ABOVE" has probability
        ``P = int f_rho(r) F_nu(r + s_below)^m S_nu(r - s_above) dr``, and its privacy loss
        ``log(P' / P)`` tends to eps_1 + eps_2 as m grows (Lyu, Su, Li 2017, Theorem 2 is
        then tight; the pair follows their proof, whose worst case moves BELOW answers and
        the ABOVE answer in opposite directions). m is the smallest in 1..24 reaching 0.97
        of epsilon (the output's probability falls with m, so 10^6 draws must still
        measure it). The statistic is the position of the first ABOVE; ``ceiling`` is the
        pair's exact epsilon over the claim (the integral over the threshold noise, by
        the trapezoid rule; the tests check it against scipy's quad).
        """
        import math

        mech = cls.for_epsilon(epsilon, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
        ts, qs = mech.threshold_scale, mech.query_scale
        # the integrals over the threshold noise r, by the trapezoid rule on a grid fine
        # enough (step < 0.003 qs) that its error is below 1e-6 of each probability
        r = np.linspace(-60.0 * max(ts, qs), 60.0 * max(ts, qs), 400_001)
        density = np.exp(-np.abs(r) / ts) / (2.0 * ts)

        def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / qs),
                            1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / qs))

        below = {0.0: cdf(r), 1.0: cdf(r + 1.0)}
        above = {0.0: 1.0 - cdf(r), 1.0: 1.0 - cdf(r - 1.0)}
        m, true = 1, 0.0
        for m in range(1, 25):
            laws = [float(np.trapezoid(density * below[s] ** m * above[s], r))
                    for s in (0.0, 1.0)]
            true = math.log(laws[1] / laws[0])
            if true >= 0.97 * epsilon:
                break
        def first_above(outputs: NDArray[np.int8]) -> NDArray[np.int64]:
            """The position of the first ABOVE (the number of queries if none)."""
            above = outputs == ABOVE
            found: NDArray[np.int64] = np.where(above.any(axis=-1),
                                                np.argmax(above, axis=-1), outputs.shape[-1])
            return found

        second = np.concatenate([-np.ones(m), [1.0]])
        return WorstCase(mech, np.zeros(m + 1), second, {"threshold": 0.0},
                         statistic=first_above, ceiling=min(1.0, true / epsilon))

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.float64]:
        q = as_value(value, owner)  # clamped onto [-FLOAT_BOUND, FLOAT_BOUND]
        if q.ndim != 1:
            raise check.private_fail("value", "a 1-d array of query answers", owner)
        return q

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int8]:
        """Answer the queries ``value`` against ``threshold`` (default 0).

        Returns int8 codes ABOVE (1), BELOW (0), NOT_ANSWERED (-1) of shape
        ``(*size, len(value))``; the codes are integers, so the draw is also the
        publication path.
        """
        owner = f"{type(self).__name__}.release"
        t = check.real("threshold", options.get("threshold", 0.0), owner)
        if not math.isfinite(t):
            raise check.fail("threshold", t, "a finite number", owner)
        full = shape + value.shape
        rho = self.threshold_scale * standard_laplace(rng, (*shape, 1))
        nu = self.query_scale * standard_laplace(rng, full)
        with np.errstate(over="ignore"):  # only with noise scales near the largest double
            above = value + nu >= t + rho
        positives_before: NDArray[np.int64] = np.cumsum(above, axis=-1) - above
        answered = positives_before < self.max_positives
        return np.where(answered, above.astype(np.int8), np.int8(NOT_ANSWERED)).astype(np.int8)
