"""Analyze Gauss: symmetric Gaussian noise on a second-moment matrix, for private PCA.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import GDP, ZCDP, Guarantee
from privkit.mechanism import AdditiveMechanism, WorstCase, as_value, noise_scale_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import StandardNoise, standard_normal
from ._validators import positive_finite
from .gaussian import analytic_gaussian_sigma

__all__ = ["AnalyzeGauss", "second_moment_sensitivity"]


def second_moment_sensitivity(row_norm_bound: float, relation: Neighbouring | str
                              ) -> Sensitivity:
    """L2 sensitivity of the upper triangle (diagonal included) of ``X^T X``.

    Notes
    -----
    With rows ``||x||_2 <= B``: adding or removing a row changes ``X^T X`` by ``x x^T``,
    whose upper triangle has L2 norm at most ``||x x^T||_F = ||x||^2 <= B^2``; replacing
    ``x`` by ``y`` changes it by ``x x^T - y y^T``, with
    ``||x x^T - y y^T||_F^2 = ||x||^4 + ||y||^4 - 2 (x.y)^2 <= 2 B^4``, so ``sqrt(2) B^2``
    (attained by orthogonal x, y on the two diagonal entries). Dwork, Talwar, Thakurta,
    Zhang 2014 (STOC, "Analyze Gauss"), Algorithm 1, for the add/remove case.
    """
    b = check.positive_finite("row_norm_bound", row_norm_bound, "second_moment_sensitivity")
    rel = Neighbouring.parse(relation, owner="second_moment_sensitivity")
    factor = 1.0 if rel is Neighbouring.ADD_REMOVE else math.sqrt(2.0)
    return Sensitivity(value=factor * b * b, norm=Norm.L2, relation=rel)


def _relation(value: Any) -> Neighbouring:
    return Neighbouring.parse(value, owner="AnalyzeGauss")


@attrs.frozen(kw_only=True)
class AnalyzeGauss(AdditiveMechanism):
    """Release ``C + E`` for a symmetric d x d second-moment matrix ``C = X^T X`` whose
    rows have L2 norm at most ``row_norm_bound``; E is symmetric with independent
    N(0, sigma^2) entries on and above the diagonal.

    Parameters
    ----------
    noise_scale : float
        sigma, finite and > 0.
    row_norm_bound : float
        B: a public bound on every row's L2 norm (clip rows to it).
    relation : Neighbouring or str
        Neighbouring relation; sets the sensitivity (:func:`second_moment_sensitivity`).

    Notes
    -----
    A Gaussian mechanism on the d(d+1)/2 upper-triangle entries, so exactly
    ``(Δ / sigma)``-GDP. Wang et al. 2024 ("Differentially private SVMs with knowledge
    aggregation"), Algorithm 2 ("DPDR"), uses this noise for DP-PCA. The Wishart
    mechanism, sometimes offered for the same job, is not private (diffprivlib removed
    it) and privkit does not offer it.

    The matrix is private (``privkit.mechanism``'s rule): only its shape (square) is
    checked, and only its upper triangle, diagonal included, is read (the lower one is
    ignored, so no asymmetry from rounding can refuse a release); those ``d(d+1)/2``
    entries are clamped onto ``[-B, B]`` with ``B = clamp_bound(d (d + 1) // 2)``, at no
    cost in privacy. NaN is refused without showing the value.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.mechanisms import AnalyzeGauss
    >>> m = AnalyzeGauss.for_approx_dp(epsilon=1.0, delta=1e-5, row_norm_bound=1.0,
    ...                                relation="add_remove")
    >>> noisy = m.release(np.eye(3), rng=0)
    >>> bool(np.allclose(noisy, noisy.T))
    True

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "analyze_gauss"

    noise_scale: float = noise_scale_field()
    row_norm_bound: float = attrs.field(validator=positive_finite)
    _relation: Neighbouring = attrs.field(alias="relation", converter=_relation)

    @classmethod
    def for_approx_dp(cls, *, epsilon: float, delta: float, row_norm_bound: float,
                      relation: Neighbouring | str) -> AnalyzeGauss:
        """The smallest sigma meeting (epsilon, delta) exactly (analytic Gaussian)."""
        owner = "AnalyzeGauss.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        d = check.open_unit("delta", delta, owner)
        sens = second_moment_sensitivity(row_norm_bound, relation)
        sigma = analytic_gaussian_sigma(epsilon=eps, delta=d, sensitivity=sens.value)
        return cls(noise_scale=sigma, row_norm_bound=row_norm_bound, relation=sens.relation)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """The zero matrix against ``e_1 e_1^T`` (one unit row added): the upper triangle
        moves by exactly the sensitivity, in the one entry ``(0, 0)``.

        The matrices are 1 x 1: every other entry of a larger matrix is the same noise on
        both inputs (independent of the changed entry), so the changed entry's law, the
        only thing the audit looks at, is the same, and a draw costs one normal instead
        of d(d+1)/2 (the audit can afford 10^8 draws per side).
        """
        mech = cls.for_approx_dp(epsilon=epsilon, delta=delta, row_norm_bound=1.0,
                                 relation=Neighbouring.ADD_REMOVE)
        e1 = np.ones((1, 1))
        return WorstCase(mech, np.zeros((1, 1)), e1, statistic=_changed_entry)

    @property
    def relation(self) -> Neighbouring:
        return self._relation

    @property
    def sensitivity(self) -> Sensitivity:  # type: ignore[override]
        """L2 sensitivity of the upper triangle (:func:`second_moment_sensitivity`)."""
        return second_moment_sensitivity(self.row_norm_bound, self._relation)

    def guarantees(self) -> tuple[Guarantee, ...]:
        mu = self.sensitivity.value / self.noise_scale
        return (GDP(mu=mu), ZCDP(rho=mu * mu / 2.0))

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.float64]:
        c = as_value(value, owner, bound=math.inf)  # clamped on the grid (clamp_bound)
        if c.ndim != 2 or c.shape[0] != c.shape[1]:
            raise check.private_fail("value", "a square matrix (d x d for d features)", owner)
        return c

    def standard_noise(self, query_ndim: int) -> StandardNoise:
        return standard_normal

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.float64]:
        upper = np.triu_indices(value.shape[0])
        return _symmetric(super().sample(value[upper], rng, shape), value.shape[0], upper)

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                    **options: Any) -> NDArray[np.float64]:
        """``C + E``, floating-point safe; shape ``(*size, d, d)``."""
        upper = np.triu_indices(value.shape[0])
        return _symmetric(super().safe_sample(value[upper], rng, shape), value.shape[0], upper)


def _symmetric(upper_values: NDArray[np.float64], d: int,
               upper: tuple[NDArray[np.int64], NDArray[np.int64]]) -> NDArray[np.float64]:
    out = np.zeros((*upper_values.shape[:-1], d, d))
    out[..., upper[0], upper[1]] = upper_values
    out[..., upper[1], upper[0]] = upper_values
    return out


def _changed_entry(outputs: NDArray[np.float64]) -> NDArray[np.float64]:
    return outputs[..., 0, 0]
