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


#: The largest float: the threshold's upper end in the calibration's bisection.
_LARGEST = float(np.finfo(np.float64).max)


def _bits(x: float) -> int:
    """The bit pattern of a float >= 0, an integer ordered as the floats are."""
    return int(np.float64(x).view(np.int64))


def _float(bits: int) -> float:
    return float(np.int64(bits).view(np.float64))


def _epsilon(noise_scale: float, relation: Neighbouring) -> float:
    """The guarantee's epsilon: ``1/b``, or ``2/b`` under REPLACE_ONE (class notes)."""
    return (2.0 if relation is Neighbouring.REPLACE_ONE else 1.0) * (1.0 / noise_scale)


def _log_cell_delta(noise_scale: float, threshold: float, n_classes: int) -> float:
    """``log(1/2 exp(-(tau - 1)/b) (1 + (c - 1) exp(-1/b)))`` (class notes)."""
    spread = math.log1p((n_classes - 1) * math.exp(-1.0 / noise_scale))
    return math.log(0.5) - (threshold - 1.0) / noise_scale + spread


def _delta(noise_scale: float, threshold: float, n_classes: int,
           relation: Neighbouring) -> float:
    """The guarantee's delta: the cell delta, times ``1 + e^(1/b)`` under REPLACE_ONE,
    in log space (finite at every epsilon), capped below 1."""
    log = _log_cell_delta(noise_scale, threshold, n_classes)
    if relation is Neighbouring.REPLACE_ONE:
        log += float(np.logaddexp(0.0, 1.0 / noise_scale))
    return min(math.exp(min(log, 0.0)), 1.0 - 1e-16)


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
        (ADD_REMOVE) or ``2/eps`` (REPLACE_ONE), raised by an ulp or two if rounding would
        put the guarantee's epsilon above ``epsilon``; then the smallest float ``tau``
        whose delta (see the class notes, as :meth:`guarantees` computes it) is at most
        ``delta``, found by bisection on the floats (their bit patterns are ordered as
        their values): 64 steps at most, at every epsilon and delta."""
        owner = "StabilityHistogram.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        dlt = check.open_unit("delta", delta, owner)
        c = check.positive_int("n_classes", n_classes, owner)
        rel = Neighbouring.parse(relation, owner=owner)
        b = (2.0 if rel is Neighbouring.REPLACE_ONE else 1.0) / eps
        while math.isfinite(b) and _epsilon(b, rel) > eps:  # 1/(1/x) can exceed x
            b = math.nextafter(b, math.inf)
        if not (math.isfinite(b) and _delta(b, _LARGEST, c, rel) <= dlt):
            raise check.fail("epsilon", epsilon, "large enough that the noise scale "
                             "and the threshold it needs are finite floats", owner)
        low, high = _bits(1.0), _bits(_LARGEST)  # delta <= dlt holds at high
        if _delta(b, 1.0, c, rel) <= dlt:
            high = low
        while high - low > 1:  # delta > dlt at low (unless low == high), <= dlt at high
            middle = (low + high) // 2
            if _delta(b, _float(middle), c, rel) <= dlt:
                high = middle
            else:
                low = middle
        return cls(noise_scale=b, threshold=_float(high), n_classes=c, relation=rel)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
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
        return min(1.0, math.exp(_log_cell_delta(self.noise_scale, self.threshold,
                                                 self.n_classes)))

    def guarantees(self) -> tuple[Guarantee, ...]:
        b, rel = self.noise_scale, self._relation
        delta = _delta(b, self.threshold, self.n_classes, rel)
        return (ApproxDP(epsilon=_epsilon(b, rel), delta=delta),)

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        allowed = f"a (n_cells, {self.n_classes}) array of non-negative integer counts"
        counts = integer_answers(value, owner, low=0, high=INTEGER_BOUND, allowed=allowed)
        if counts.ndim != 2 or counts.shape[1] != self.n_classes:
            raise check.private_fail("value", allowed, owner)
        return counts

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int64]:
        noisy = value + self.noise_scale * standard_laplace(rng, shape + value.shape)
        released = (noisy.max(axis=-1) > self.threshold) & (value.sum(axis=-1) > 0)
        labels: NDArray[np.int64] = np.where(released, np.argmax(noisy, axis=-1), -1)
        return labels
