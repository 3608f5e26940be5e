"""A private MMD two-sample test on private kernel mean embeddings.

:func:`private_mmd_test` releases the private means ``m~_X`` and ``m~_Y`` of two private
samples (replace-one, sizes m and n public) through a *data-independent* feature map and
rejects ``P = Q`` when ``T = ||m~_X - m~_Y||_2`` exceeds a threshold c that accounts for
both the sampling and the privacy noise:

1. sampling: under ``P = Q`` with i.i.d. samples, ``E ||m_X - m_Y||^2
   = (1/m + 1/n)(E||phi||^2 - ||E phi||^2) <= B^2 (1/m + 1/n)``, and ``||m_X - m_Y||``
   changes by at most ``2B/m`` (``2B/n``) when one x (y) changes, so McDiarmid's
   inequality gives ``||m_X - m_Y|| <= t_0 = B sqrt(1/m + 1/n) (1 + sqrt(2 log(1/a_1)))``
   with probability >= ``1 - a_1``. This is the bound of A. Gretton, K. Borgwardt,
   M. Rasch, B. Schölkopf, A. Smola, "A kernel two-sample test" (JMLR 2012), Theorem 7 /
   Corollary 9 (their ``m = n`` case is ``sqrt(2K/m)(1 + sqrt(2 log 1/alpha))``).
2. noise: ``E = E_X - E_Y ~ N(0, s^2 I_D)`` with ``s^2 = s_X^2 + s_Y^2`` is independent
   of the data; for any fixed a with ``||a|| <= t_0``, ``||a + E||^2 / s^2`` is
   noncentral chi-square with D degrees of freedom and noncentrality ``||a||^2 / s^2``,
   which is stochastically increasing in the noncentrality (N. Johnson, S. Kotz,
   N. Balakrishnan, *Continuous univariate distributions* vol. 2, ch. 29), so
   ``c = s sqrt(ncx2.ppf(1 - a_2, D, t_0^2 / s^2))`` is exceeded with probability
   ``<= a_2``.

By the union bound the level is at most ``alpha = a_1 + a_2`` for every sample size and
every privacy level, up to the discretisation that the floating-point-safe ``release``
applies to the Gaussian noise (the test is conservative: McDiarmid's bound is not
tight). The feature map must not depend on X or Y (RFF, or Nyström on public landmarks, or on a
K-means fit to *other* private data): a map fitted on the two samples breaks the i.i.d.
argument. A permutation test would need the private data at test time and its
permutation distribution does not include the noise; it is not used. Only Gaussian noise
is supported for the test (its threshold needs the noise's norm law in closed form).

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Moved here from :mod:`privkit.algorithms.kernels.kernel_mean` (one concept per module).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.conversions import gdp_mu_for_approx_dp
from privkit.guarantees import Guarantee
from privkit.ledger import Ledger
from privkit.mechanisms import Gaussian
from privkit.neighbouring import Norm
from privkit.plan import Block, Parallel

from .._private_rows import private_rows
from .kernel_mean import feature_sums, mean_sensitivities

__all__ = ["MMDTestResult", "mmd_null_threshold", "private_mmd_test"]



def mmd_null_threshold(*, norm_bound: float, n_x: int, n_y: int, noise_std: float,
                       n_components: int, alpha: float = 0.05, noise_alpha_share: float = 0.5
                       ) -> float:
    """The rejection threshold c for ``||m~_X - m~_Y||`` (module docstring, steps 1-2).

    ``t_0 = B sqrt(1/m + 1/n) (1 + sqrt(2 log(1 / a_1)))`` (McDiarmid; Gretton et al.
    2012, Theorem 7) and ``c = s sqrt(ncx2.ppf(1 - a_2, D, t_0^2 / s^2))`` with
    ``a_2 = noise_alpha_share * alpha``, ``a_1 = alpha - a_2``; for ``s = 0``, ``c = t_0``.
    """
    from scipy.stats import ncx2

    owner = "mmd_null_threshold"
    b = check.positive_finite("norm_bound", norm_bound, owner)
    m = check.positive_int("n_x", n_x, owner)
    n = check.positive_int("n_y", n_y, owner)
    s = check.nonnegative_finite("noise_std", noise_std, owner)
    d = check.positive_int("n_components", n_components, owner)
    a = check.open_unit("alpha", alpha, owner)
    share = check.open_unit("noise_alpha_share", noise_alpha_share, owner)
    a2 = share * a if s > 0 else 0.0
    a1 = a - a2
    t0 = b * math.sqrt(1.0 / m + 1.0 / n) * (1.0 + math.sqrt(2.0 * math.log(1.0 / a1)))
    if s == 0:
        return t0
    return s * math.sqrt(float(ncx2.ppf(1.0 - a2, d, (t0 / s) ** 2)))


@attrs.frozen(kw_only=True)
class MMDTestResult:
    """The released statistic, the threshold, the decision and the privacy accounting."""

    statistic: float
    threshold: float
    reject: bool
    alpha: float
    embedding_x: NDArray[np.float64] = attrs.field(eq=False, repr=False)
    embedding_y: NDArray[np.float64] = attrs.field(eq=False, repr=False)
    noise_std: float
    plan: Block = attrs.field(eq=False)
    delta: float

    @property
    def guarantee(self) -> Guarantee:
        """privkit's tightest accountant on ``plan`` (computed on demand)."""
        return tightest(self.plan, delta=self.delta).guarantee


def private_mmd_test(X: Any, Y: Any, feature_map: Any, *, epsilon: float, delta: float,
                     alpha: float = 0.05, noise_alpha_share: float = 0.5,
                     chunk_size: int = 65536, random_state: Any = None) -> MMDTestResult:
    """A private two-sample test of ``P = Q`` from two private samples X ~ P, Y ~ Q.

    Each sample's feature mean is released by the Gaussian mechanism at
    ``(epsilon, delta)`` (replace-one, sensitivity ``2B/m`` and ``2B/n``); X and Y are
    disjoint datasets, so the plan is ``Parallel(mean_X, mean_Y)`` and each person's
    guarantee is ``(epsilon, delta)``. ``feature_map`` (``transform``, ``norm_bound``,
    ``n_components``) must not depend on X or Y. A row with a non-finite entry is the
    null record of :mod:`~privkit.algorithms.kernels.kernel_mean` (feature vector 0). The level
    is at most ``alpha`` for all sample sizes (module docstring); the statistic, the
    threshold and the decision are post-processing of the two released means.
    """
    owner = "private_mmd_test"
    eps = check.positive_finite("epsilon", epsilon, owner)
    dlt = check.open_unit("delta", delta, owner)
    check.open_unit("alpha", alpha, owner)
    for name in ("transform", "norm_bound", "n_components"):
        if not hasattr(feature_map, name):
            raise check.fail("feature_map", feature_map, "a fitted map with transform, "
                             "norm_bound and n_components (NystromMap, RFF map)", owner)
    b = float(feature_map.norm_bound)
    dim = int(feature_map.n_components)
    mu = gdp_mu_for_approx_dp(epsilon=eps, delta=dlt)
    # n is public here (replace-one): a sample without rows is refused
    samples = [private_rows(data, owner=owner, name=name, min_rows=1, dask=True)
               for name, data in (("X", X), ("Y", Y))]
    blocks = [Gaussian.for_gdp(mu, sensitivity=mean_sensitivities(
        b, dim, n_samples=int(data.shape[0]), relation="replace_one", norm=Norm.L2)[0])
        for data in samples]
    rng = np.random.default_rng(random_state)
    means = []
    with Ledger():
        for data, block in zip(samples, blocks, strict=True):
            stats = feature_sums(data, feature_map.transform, chunk_size)
            means.append(np.asarray(block.release(stats[:-1] / data.shape[0], rng=rng),
                                    dtype=np.float64))
    s = math.hypot(blocks[0].noise_scale, blocks[1].noise_scale)
    threshold = mmd_null_threshold(norm_bound=b, n_x=int(samples[0].shape[0]),
                                   n_y=int(samples[1].shape[0]),
                                   noise_std=s, n_components=dim, alpha=alpha,
                                   noise_alpha_share=noise_alpha_share)
    stat = float(np.linalg.norm(means[0] - means[1]))
    plan = Parallel(blocks[0], blocks[1])
    return MMDTestResult(statistic=stat, threshold=threshold, reject=stat > threshold,
                         alpha=float(alpha), embedding_x=means[0], embedding_y=means[1],
                         noise_std=s, plan=plan, delta=dlt)
