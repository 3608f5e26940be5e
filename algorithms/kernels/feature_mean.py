"""The mean of a bounded feature map over private rows: its sensitivities and its sums.

A feature map ``phi`` with a public bound ``B >= sup_x ||phi(x)||_2`` (random Fourier
features: ``B = 1``; Nyström: :mod:`privkit.algorithms.kernels.nystrom_map`) gives a mean whose
sensitivity does not depend on the data (the proof is in
:mod:`privkit.algorithms.kernels.kernel_mean`'s docstring, "Sensitivity"):

* replace-one (n public): the mean moves by ``(phi(x') - phi(x)) / n``, so
  ``Delta_2 = 2B / n`` and ``Delta_1 = 2 sqrt(D) B / n`` (Balog, Tolstikhin, Schölkopf,
  "Differentially private database release via kernel mean embeddings", ICML 2018,
  Section 4, for ``B = 1``);
* add-remove (n private): the sum (``Delta_2 = B``, ``Delta_1 = sqrt(D) B``) and the count
  (``Delta = 1``), released separately.

A row with a non-finite entry, or whose features are not finite, is the null record: in
neither the sum nor the count. :class:`~privkit.algorithms.kernels.kernel_mean.PrivateKernelMean`
and :func:`~privkit.algorithms.kernels.mmd_test.private_mmd_test` release these means.

.. versionadded:: 0.3.0
   (moved from :mod:`privkit.algorithms.kernels.kernel_mean`, where it was added in 0.2.0)
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from .kmeans import row_block_sums

__all__ = ["feature_sums", "mean_sensitivities"]


def mean_sensitivities(norm_bound: float, n_components: int, *, n_samples: int | None,
                       relation: Neighbouring | str, norm: Norm
                       ) -> tuple[Sensitivity, Sensitivity | None]:
    """The sensitivities of a feature mean with ``||phi(x)||_2 <= norm_bound`` (module
    docstring): ``(mean, None)`` under REPLACE_ONE (``2B/n`` in L2, ``2 sqrt(D) B / n`` in
    L1), ``(sum, count)`` under ADD_REMOVE (``B`` or ``sqrt(D) B``, and 1)."""
    owner = "mean_sensitivities"
    b = check.positive_finite("norm_bound", norm_bound, owner)
    d = check.positive_int("n_components", n_components, owner)
    rel = Neighbouring.parse(relation, owner=owner)
    if norm is Norm.L2:
        scale = 1.0
    elif norm is Norm.L1:
        scale = math.sqrt(d)
    else:
        raise check.fail("norm", norm, "Norm.L1 or Norm.L2", owner)
    if rel is Neighbouring.REPLACE_ONE:
        if n_samples is None:
            raise check.fail("n_samples", None, "the public number of rows", owner,
                             "the mean's replace-one sensitivity is 2B/n")
        n = check.positive_int("n_samples", n_samples, owner)
        return Sensitivity(value=2.0 * scale * b / n, norm=norm, relation=rel), None
    return (Sensitivity(value=scale * b, norm=norm, relation=rel),
            Sensitivity(value=1.0, norm=norm, relation=rel))


def _feature_sums(block: NDArray[Any], transform: Any) -> NDArray[np.float64]:
    """One row block's feature sum and count of non-null rows, as a (D + 1,) array.

    A row with a non-finite entry, or whose features are not finite, is the null record
    (module docstring): it is never passed to ``transform`` (a zero row is, in its place)
    and adds nothing to the sum or the count."""
    rows = np.asarray(block, dtype=np.float64)
    ok = np.asarray(np.isfinite(rows).all(axis=1))
    if not ok.all():
        rows = np.where(ok[:, None], rows, 0.0)
    F = np.array(transform(rows), dtype=np.float64)
    ok &= np.isfinite(F).all(axis=1)
    if not ok.all():
        F[~ok] = 0.0
    out: NDArray[np.float64] = np.empty(F.shape[1] + 1)
    out[:-1] = F.sum(axis=0)
    out[-1] = np.count_nonzero(ok)
    return out


def feature_sums(X: Any, transform: Any, chunk_size: int) -> NDArray[np.float64]:
    """``[sum_i phi(x_i), number of non-null rows]`` over row blocks, numpy or dask alike
    (block order, so both give bit-identical sums:
    :func:`~privkit.algorithms.kernels.kmeans.row_block_sums`)."""
    return row_block_sums(X, functools.partial(_feature_sums, transform=transform),
                          chunk_size)
