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
from privkit.ledger import record
from privkit.mechanism import Mechanism, Size, as_size, as_value
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.rng import RNGLike, as_generator

from ._selection import _check_bool
from ._validators import positive_finite, sensitivity_in
from .laplace import standard_laplace

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

    threshold_scale: float = attrs.field(validator=positive_finite)
    query_scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.LINF))
    max_positives: int = attrs.field(default=1,
                                     validator=check.attrs_validator(check.positive_int))
    monotone: bool = attrs.field(default=False, validator=_check_bool)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | None = None, max_positives: int = 1,
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

    def release(self, value: ArrayLike, *, threshold: float = 0.0, rng: RNGLike = None,
                size: Size = None) -> NDArray[np.int8]:
        """Answer the queries ``value`` (last axis) against ``threshold``.

        Returns int8 codes ABOVE (1), BELOW (0), NOT_ANSWERED (-1) of shape
        ``(*size, *value.shape)``; each run over the last axis is one SVT invocation.
        """
        out = self.simulate(value, threshold=threshold, rng=rng, size=size)
        record(self, math.prod(out.shape[:-1]))
        return out

    def simulate(self, value: ArrayLike, *, threshold: float = 0.0, rng: RNGLike = None,
                 size: Size = None) -> NDArray[np.int8]:
        owner = "SparseVector.release"
        q = as_value(value, owner)
        if q.ndim == 0:
            raise check.fail("value", value, "an array of query answers (queries on the last "
                             "axis)", owner)
        t = check.real("threshold", threshold, owner)
        if not math.isfinite(t):
            raise check.fail("threshold", threshold, "a finite number", owner)
        shape = as_size(size, owner) + q.shape
        gen = as_generator(rng, owner=owner)
        rho = self.threshold_scale * standard_laplace(gen, (*shape[:-1], 1))
        nu = self.query_scale * standard_laplace(gen, shape)
        above = q + nu >= t + rho
        positives_before: NDArray[np.int64] = np.cumsum(above, axis=-1) - above
        answered = positives_before < self.max_positives
        return np.where(answered, above.astype(np.int8), np.int8(NOT_ANSWERED)).astype(np.int8)

    def to_spec(self) -> dict[str, Any]:
        return {"sparse_vector": {"threshold_scale": self.threshold_scale,
                                  "query_scale": self.query_scale,
                                  "linf_sensitivity": self.sensitivity.value,
                                  "max_positives": self.max_positives,
                                  "monotone": self.monotone}}

    def __str__(self) -> str:
        return (f"SparseVector(c={self.max_positives}, threshold_scale="
                f"{self.threshold_scale:.6g}, query_scale={self.query_scale:.6g}): "
                f"{self.guarantee()}")

