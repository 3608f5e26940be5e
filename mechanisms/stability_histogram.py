"""The stability-based histogram: release the labels of the data-dependent cells whose
noisy count clears a threshold (Korolova, Kenthapadi, Mishra, Ntoulas 2009; Bun, Nissim,
Stemmer 2016; Vadhan 2017, "The complexity of differential privacy", Theorem 3.5).

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee
from privkit.mechanism import Mechanism, WorstCase, noise_scale_field
from privkit.neighbouring import Neighbouring

from ._noise import standard_laplace
from ._validators import INTEGER_BOUND, integer_answers

__all__ = ["StabilityHistogram"]


def _relation(value: Any) -> Neighbouring:
    return Neighbouring.parse(value, owner="StabilityHistogram")


def _categories(instance: Any, attribute: Any, value: Any) -> None:
    check.positive_int(check.field_name(attribute), value, type(instance).__name__)


def _threshold(instance: Any, attribute: Any, value: Any) -> None:
    t = check.real(check.field_name(attribute), value, type(instance).__name__)
    if not 1.0 <= t < math.inf:
        raise check.fail(check.field_name(attribute), value, "a finite number >= 1",
                         type(instance).__name__, "below 1, one record alone clears it")


@attrs.frozen(kw_only=True)
class StabilityHistogram(Mechanism):
    """Noisy class counts per occupied cell; a cell's label (its noisy argmax) is released
    only if its largest noisy count exceeds ``threshold``.

    The query answer is a ``(n_cells, n_classes)`` array of non-negative integer counts
    of the *occupied* cells (which cells are occupied depends on the data; an all-zero row
    stands for an empty cell and is never released). Each record adds 1 to one class of
    one cell. The output is one label per row, ``-1`` where the cell is suppressed.

    Parameters
    ----------
    noise_scale : float
        b, the Laplace scale on every count.
    threshold : float
        tau >= 1.
    n_classes : int
        c, the number of count columns.
    relation : Neighbouring or str

    Notes
    -----
    A cell occupied in both neighbours sees its count vector move by 1 in L1 under
    ADD_REMOVE, a Laplace mechanism: ``1/b``-DP on that cell. A cell occupied in one
    neighbour only holds a single record, and is released with probability at most
    ``delta_cell = 1/2 exp(-(tau - 1)/b) (1 + (c - 1) exp(-1/b))`` (its record's class
    clears tau w.p. ``1/2 e^(-(tau-1)/b)``, each other class w.p. ``1/2 e^(-tau/b)``).
    Hence ``(1/b, delta_cell)``-DP under ADD_REMOVE (Vadhan 2017, Theorem 3.5, for
    vectors of counts). A replacement is a removal and an addition, so by group privacy
    for approximate DP (``P[M(D) in S] <= e^eps (e^eps P[M(D') in S] + delta) + delta``)
    it is ``(2/b, delta_cell (1 + e^(1/b)))``-DP under REPLACE_ONE. Labels are integers,
    so no low-order bits are released; the noise has exact tails
    (:func:`privkit.mechanisms.standard_laplace`), which the delta above relies on.

    The counts are private (``privkit.mechanism``'s rule): the array's dtype and its
    ``n_classes`` columns are checked (the number of rows is not shown); NaN and
    non-integer counts are refused without showing them; counts are clamped onto
    ``[0, 2^62]`` (infinities included), which moves no count further.
    """

    kind: ClassVar[str] = "stability_histogram"

    noise_scale: float = noise_scale_field()
    threshold: float = attrs.field(validator=_threshold)
    n_classes: int = attrs.field(validator=_categories)
    _relation: Neighbouring = attrs.field(alias="relation", converter=_relation)

    @classmethod
    def for_approx_dp(cls, *, epsilon: float, delta: float, n_classes: int,
                      relation: Neighbouring | str) -> StabilityHistogram:
        """The noise scale and threshold that are exactly (epsilon, delta)-DP: ``b = 1/eps``
        (ADD_REMOVE) or ``2/eps`` (REPLACE_ONE), then the smallest ``tau`` whose delta
        (see the class notes) is ``delta``."""
        owner = "StabilityHistogram.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        dlt = check.open_unit("delta", delta, owner)
        c = check.positive_int("n_classes", n_classes, owner)
        rel = Neighbouring.parse(relation, owner=owner)
        b = (2.0 if rel is Neighbouring.REPLACE_ONE else 1.0) / eps
        per_cell = dlt if rel is Neighbouring.ADD_REMOVE else dlt / (1.0 + math.exp(1.0 / b))
        spread = 1.0 + (c - 1) * math.exp(-1.0 / b)
        tau = max(1.0, 1.0 + b * math.log(spread / (2.0 * per_cell)))
        mechanism = cls(noise_scale=b, threshold=tau, n_classes=c, relation=rel)
        while mechanism.guarantees()[0].delta_at(eps) > dlt:  # rounding: step tau up
            tau = math.nextafter(tau, math.inf)
            mechanism = cls(noise_scale=b, threshold=tau, n_classes=c, relation=rel)
        return mechanism

    @classmethod
    def worst_case(cls, epsilon: float, delta: float) -> WorstCase:
        """One cell with ``ceil(tau)`` records of class 0 against one more. Both counts are
        at or above the threshold, where the Laplace distribution function below them is
        ``exp(x / b) / 2``, so the probability that the cell is not released falls by
        exactly ``e^(1/b)``, the claim's epsilon, and it is large (above 0.1), so the delta
        costs almost nothing: the pair's exact epsilon is within 1e-4 of the claim at
        epsilon 1 and 4. (``floor(tau)`` records, below the threshold, reached only 0.84
        of the claim at epsilon 4.)"""
        mech = cls.for_approx_dp(epsilon=epsilon, delta=delta, n_classes=2,
                                 relation=Neighbouring.ADD_REMOVE)
        k = math.ceil(mech.threshold)
        return WorstCase(mech, np.array([[k, 0]]), np.array([[k + 1, 0]]))

    @property
    def relation(self) -> Neighbouring:
        return self._relation

    @property
    def cell_delta(self) -> float:
        """The probability bound for a cell holding one record (see the class notes)."""
        b = self.noise_scale
        spread = 1.0 + (self.n_classes - 1) * math.exp(-1.0 / b)
        return min(1.0, 0.5 * math.exp(-(self.threshold - 1.0) / b) * spread)

    def guarantees(self) -> tuple[Guarantee, ...]:
        eps = 1.0 / self.noise_scale
        if self._relation is Neighbouring.ADD_REMOVE:
            return (ApproxDP(epsilon=eps, delta=min(self.cell_delta, 1.0 - 1e-16)),)
        delta = self.cell_delta * (1.0 + math.exp(eps))
        return (ApproxDP(epsilon=2.0 * eps, delta=min(delta, 1.0 - 1e-16)),)

    def _prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        allowed = f"a (n_cells, {self.n_classes}) array of non-negative integer counts"
        counts = integer_answers(value, owner, low=0, high=INTEGER_BOUND, allowed=allowed)
        if counts.ndim != 2 or counts.shape[1] != self.n_classes:
            raise check.private_fail("value", allowed, owner)
        return counts

    def _sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                **options: Any) -> NDArray[np.int64]:
        noisy = value + self.noise_scale * standard_laplace(rng, shape + value.shape)
        released = (noisy.max(axis=-1) > self.threshold) & (value.sum(axis=-1) > 0)
        labels: NDArray[np.int64] = np.where(released, np.argmax(noisy, axis=-1), -1)
        return labels
