"""The numpy path of the Lawson-Hanson solver (``_hull.pyx``): the same algorithm, step
for step, with the vector work in numpy and the triangular solves in scipy.

Lawson and Hanson, "Solving least squares problems" (1974), ch. 23, Algorithm NNLS, on a
Gram matrix, with the passive set's upper Cholesky factor updated by one column when a
variable enters and by Givens rotations when one leaves (Golub, Van Loan, "Matrix
computations", 4th ed., section 6.5.2); see ``_hull.pyx`` for the details. Dot products
are summed in a different order than the compiled module's BLAS, so results agree to
rounding (tested to ``1e-9`` relative on the solution), not bit for bit; no private
mode's stability rests on this solver's last bits.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

__all__ = ["gather_gram", "nnls_gram"]


def _forward(R: NDArray[np.float64], k: int, y: NDArray[np.float64]) -> None:
    """Solve ``R^T x = y`` in place on the first k entries (R upper)."""
    if k > 0:
        y[:k] = solve_triangular(R[:k, :k], y[:k], trans="T", check_finite=False)


def _solve_ones(R: NDArray[np.float64], k: int, y: NDArray[np.float64], y_valid: bool,
                z: NDArray[np.float64]) -> None:
    """``z = H_PP^-1 1`` from ``y = R^-T 1`` (computed here unless ``y_valid``)."""
    if k == 0:
        return
    if not y_valid:
        y[:k] = 1.0
        _forward(R, k, y)
    z[:k] = solve_triangular(R[:k, :k], y[:k], check_finite=False)


def _append(H: NDArray[np.float64], R: NDArray[np.float64], order: NDArray[np.intc],
            k: int, j: int, reject: float, work: NDArray[np.float64]) -> bool:
    """Add column j as position k of the factor; False (nothing changed) if its pivot
    ``H_jj - ||R^-T H_Pj||^2`` is at most ``reject H_jj``. Leaves ``R^-T H_Pj`` in work."""
    if k >= R.shape[0]:
        return False
    work[:k] = H[j, order[:k]]
    _forward(R, k, work)
    d2 = H[j, j] - float(work[:k] @ work[:k])
    if not d2 > reject * H[j, j]:
        return False
    R[:k, k] = work[:k]
    R[k, :k] = 0.0
    R[k, k] = math.sqrt(d2)
    order[k] = j
    return True


def _delete(R: NDArray[np.float64], order: NDArray[np.intc], k: int, p: int) -> None:
    """Remove position p: shift the later columns left, then Givens rotations on rows
    (l, l+1) clear the subdiagonal this leaves."""
    R[:k, p:k - 1] = R[:k, p + 1:k].copy()
    for row in range(p, k - 1):
        a, b = R[row, row], R[row + 1, row]
        r = math.hypot(a, b)
        c, s = a / r, b / r
        top, bot = R[row, row:k - 1].copy(), R[row + 1, row:k - 1].copy()
        R[row, row:k - 1] = c * top + s * bot
        R[row + 1, row:k - 1] = c * bot - s * top
        R[row + 1, row] = 0.0
    order[p:k - 1] = order[p + 1:k].copy()


def nnls_gram(H: NDArray[np.float64], u: NDArray[np.float64], order: NDArray[np.intc],
              R: NDArray[np.float64], excluded: NDArray[np.uint8], k: int, k_factored: int,
              max_iter: int, wtol: float, reject: float) -> tuple[int, int, bool]:
    """Lawson-Hanson NNLS for ``min u^T H u / 2 - 1^T u`` over ``u >= 0``, in place, as
    ``_hull.nnls_gram`` (same arguments, same return ``(k, iterations, converged)``)."""
    m = H.shape[0]
    ld = R.shape[0]
    if (H.shape[1] != m or u.shape[0] != m or order.shape[0] < m or R.shape[1] != ld
            or excluded.shape[0] != m):
        raise ValueError("nnls_gram: H must be (m, m), u and excluded (m,), order (>= m,), "
                         "R square")
    if not (0 <= k_factored <= k <= m and k_factored <= ld):
        raise ValueError(f"nnls_gram: need 0 <= k_factored <= k <= m, got "
                         f"{k_factored}, {k}, {m}")
    z, y = np.empty(ld + 1), np.empty(ld + 1)
    work = np.empty(max(m, ld + 1))
    Hu = np.empty(m)
    starts = order[k_factored:k].copy()
    flags = np.zeros(m, dtype=np.intc)  # 1 passive, 2 not admitted this pass, 3 out
    flags[excluded.astype(bool)] = 3
    flags[order[:k_factored]] = 1
    kk = k_factored
    for j in starts:
        if _append(H, R, order, kk, int(j), reject, work):
            flags[j] = 1
            kk += 1
        else:
            u[j] = 0.0
    iterations, converged, fresh, y_valid = 0, False, False, False
    while iterations < max_iter:
        # the inner loop: move toward the passive solution until it is feasible
        while kk > 0:
            if not fresh:
                _solve_ones(R, kk, y, y_valid, z)
                y_valid = True
            fresh = False
            P = order[:kk]
            zk, uP = z[:kk], u[P]
            blocking = np.flatnonzero(zk <= 0.0)
            if blocking.size == 0:
                u[P] = zk
                break
            ratios = uP[blocking] / (uP[blocking] - zk[blocking])
            p = int(blocking[np.argmin(ratios)])
            u[P] = uP + ratios.min() * (zk - uP)
            u[order[p]] = 0.0
            for t in range(kk - 1, -1, -1):
                if u[order[t]] <= 0.0:
                    u[order[t]] = 0.0
                    flags[order[t]] = 0
                    _delete(R, order, kk, t)
                    kk -= 1
                    y_valid = False
            iterations += 1
        # the outer loop: admit the most violated variable whose column is independent
        flags[flags == 2] = 0
        candidates = flags == 0
        if np.count_nonzero(candidates) < kk:
            Hu[candidates] = H[candidates] @ u
        else:
            P = order[:kk]
            Hu[:] = u[P] @ H[P]
        while True:
            w = 1.0 - Hu
            w = np.where((flags == 0) & (w > wtol), w, -math.inf)
            best = int(np.argmax(w))
            if not w[best] > wtol:
                converged = True
                break
            if not _append(H, R, order, kk, best, reject, work):
                flags[best] = 2
                continue
            if y_valid:
                y[kk] = (1.0 - float(work[:kk] @ y[:kk])) / R[kk, kk]
            kk += 1
            _solve_ones(R, kk, y, y_valid, z)
            y_valid = True
            if not z[kk - 1] > 0.0:  # rounding: the new variable would not enter
                kk -= 1
                flags[best] = 2
                continue
            flags[best] = 1
            fresh = True
            break
        if converged:
            break
        iterations += 1
    return kk, iterations, converged


def gather_gram(G: NDArray[np.float64], keep: NDArray[np.intp],
                out: NDArray[np.float64]) -> None:
    """``out[:k, :k] = G[keep][:, keep]`` (``k = keep.size``), as ``_hull.gather_gram``."""
    k, m = keep.shape[0], G.shape[0]
    if out.shape[0] < k or out.shape[1] < k:
        raise ValueError(f"gather_gram: out must be at least ({k}, {k})")
    outside = np.flatnonzero((keep < 0) | (keep >= m))
    if outside.size:
        i = int(outside[0])
        raise ValueError(f"gather_gram: keep[{i}] = {keep[i]} is outside [0, {m})")
    out[:k, :k] = G[np.ix_(keep, keep)]
