"""Randomized response, binary and k-ary (Warner 1965; Kairouz, Oh, Viswanath 2014).

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
from privkit.mechanism import Mechanism, WorstCase
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._validators import integer_answers

__all__ = ["RandomizedResponse", "randomized_response_rdp"]


def randomized_response_rdp(keep_probability: float, n_categories: int,
                            orders: ArrayLike) -> NDArray[np.float64]:
    """Exact Renyi divergence of k-ary randomized response at each order.

    Notes
    -----
    The worst pair of inputs a != b gives output laws P = (p, q, q, ...) and
    Q = (q, p, q, ...) with ``q = (1 - p) / (k - 1)``, so (Mironov 2017, Definition 3)::

        D_a = log(p^a q^(1-a) + q^a p^(1-a) + (k - 2) q) / (a - 1)
    """
    a = np.asarray(orders, dtype=float)
    p = keep_probability
    q = (1.0 - p) / (n_categories - 1)
    log_p, log_q = math.log(p), math.log(q)
    terms = [a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p]
    if n_categories > 2:
        terms.append(np.full(a.shape, math.log((n_categories - 2) * q)))
    result: NDArray[np.float64] = np.logaddexp.reduce(terms, axis=0) / (a - 1)
    return np.maximum(result, 0.0)


def _categories(value: Any, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 2:
        raise check.fail("n_categories", value, "an integer >= 2", owner)
    return int(value)


def _check_categories(instance: Any, attribute: Any, value: Any) -> None:
    _categories(value, type(instance).__name__)


def _check_keep(instance: Any, attribute: Any, value: Any) -> None:
    k = instance.n_categories
    v = check.real("keep_probability", value, type(instance).__name__)
    if not (1.0 / k < v < 1.0):
        raise check.fail("keep_probability", value, f"in (1/{k}, 1) for {k} categories "
                         "(at most 1/k gives no information; 1 gives no privacy)",
                         type(instance).__name__)


@attrs.frozen(kw_only=True)
class RandomizedResponse(Mechanism):
    """Report each value truthfully w.p. ``keep_probability``, else a uniformly random
    *other* category: a local randomizer, eps-DP with
    ``eps = log(p (k - 1) / (1 - p))``.

    Parameters
    ----------
    n_categories : int
        k >= 2; values are integers in ``[0, k)``.
    keep_probability : float
        p in (1/k, 1).

    Notes
    -----
    The neighbouring relation is REPLACE_ONE: the input is one record's value, and the
    guarantee compares any two values (local DP). The RDP curve is exact
    (:func:`randomized_response_rdp`). Values are private (``privkit.mechanism``'s rule):
    their dtype must be integer (public); a value outside ``[0, k)`` is clamped onto the
    nearest category, a per-record public map into the domain, which the guarantee (any
    two values) covers. The keep/flip decision compares a 53-bit uniform
    with p, so p is realised to within 2^-53.

    Examples
    --------
    >>> from privkit.mechanisms import RandomizedResponse
    >>> rr = RandomizedResponse.for_epsilon(1.0, n_categories=2)
    >>> round(rr.keep_probability, 4)
    0.7311
    >>> rr.release([0, 1, 1, 0], rng=3).shape
    (4,)

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "randomized_response"

    n_categories: int = attrs.field(validator=_check_categories)
    keep_probability: float = attrs.field(validator=_check_keep)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, n_categories: int = 2) -> RandomizedResponse:
        """``p = e^eps / (e^eps + k - 1)``: exactly eps-DP."""
        owner = "RandomizedResponse.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        k = _categories(n_categories, owner)
        keep = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
        if keep >= 1.0:
            limit = math.log((k - 1) / math.ulp(1.0))
            raise check.fail("epsilon", epsilon, f"below about {limit:.1f} for {k} categories",
                             owner, "a larger epsilon rounds the keep probability to 1 in "
                             "double precision, which would report every value truthfully")
        return cls(n_categories=k, keep_probability=keep)

    @property
    def relation(self) -> Neighbouring:
        """Always REPLACE_ONE (see the class notes)."""
        return Neighbouring.REPLACE_ONE

    @property
    def sensitivity(self) -> Sensitivity:
        """Any two values are neighbours: sensitivity 1 in the L-infinity sense."""
        return Sensitivity(value=1.0, norm=Norm.LINF, relation=Neighbouring.REPLACE_ONE)

    def guarantees(self) -> tuple[Guarantee, ...]:
        p, k = self.keep_probability, self.n_categories
        return (PureDP(epsilon=math.log(p * (k - 1) / (1.0 - p))),)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """Exact RDP curve (:func:`randomized_response_rdp`)."""
        return randomized_response_rdp(self.keep_probability, self.n_categories, orders)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """One record's value 0 against 1, with three categories: the loss reaches epsilon
        on the output 0."""
        return WorstCase(cls.for_epsilon(epsilon, n_categories=3), 0, 1)

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        return integer_answers(value, owner, low=0, high=self.n_categories - 1, kinds="iu",
                               allowed=f"integers in [0, {self.n_categories})")

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int64]:
        """Randomize each value independently; shape ``(*size, *value.shape)``. Each value
        is one record's, so under REPLACE_ONE the whole array is one run."""
        full = shape + value.shape
        keep = rng.random(full) < self.keep_probability
        # a uniformly random other category: x + U{1..k-1} mod k
        other = (value + rng.integers(1, self.n_categories, size=full)) % self.n_categories
        out: NDArray[np.int64] = np.where(keep, np.broadcast_to(value, full), other)
        return out


