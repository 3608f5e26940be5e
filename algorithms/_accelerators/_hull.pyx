# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Lawson and Hanson's non-negative least squares on a Gram matrix, warm-startable.

Solves ``min_u ||E u - f||^2`` over ``u >= 0`` given only ``H = E^T E`` and ``E^T f = 1``
(the least distance programming form of a convex hull's minimum-norm point, see
:func:`privkit.algorithms.svdd._svdd_dual._capped_min_norm`), by the active set of Lawson and Hanson,
"Solving least squares problems" (1974), ch. 23, Algorithm NNLS. The passive set's
``H_PP = R^T R`` is kept as an upper Cholesky factor, updated by one column when a
variable enters (``O(k^2)``) and by Givens rotations when one leaves (Golub, Van Loan,
"Matrix computations", 4th ed., section 6.5.2), so a step costs ``O(k^2 + m k)`` instead
of the ``O(m F)`` of the textbook form on ``E``; and a solve may start from a passive set
and its factor (a previous solve's), which the working-set rounds of the SVDD solver do.

A variable whose column is (numerically) in the span of the passive columns is not
admitted (its pivot ``d^2 <= reject H_jj``), as in Lawson and Hanson's own test; the
caller certifies the answer (a duality gap) and has a fallback. The vector work (dot
products, axpy and the triangular solves) is scipy's BLAS (``scipy.linalg.cython_blas``), which runs at the
machine's width on every platform; the same algorithm in numpy is ``_hull_numpy.py``.
"""

from libc.math cimport sqrt, hypot
from libc.string cimport memmove, memset
from scipy.linalg.cython_blas cimport daxpy, ddot, dtrsv


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """``sum_i a[i] b[i]`` (BLAS ddot; 0 for n <= 0)."""
    cdef int nn = <int>n, one = 1
    if n <= 0:
        return 0.0
    return ddot(&nn, <double*>a, &one, <double*>b, &one)


cdef inline void _axpy(double alpha, const double* x, double* y, Py_ssize_t n) noexcept nogil:
    """``y[i] += alpha x[i]`` (BLAS daxpy)."""
    cdef int nn = <int>n, one = 1
    if n > 0:
        daxpy(&nn, &alpha, <double*>x, &one, y, &one)


cdef void _triangular(double* R, Py_ssize_t ld, Py_ssize_t k, double* y,
                      bint transposed) noexcept nogil:
    """Solve ``R^T x = y`` (``transposed``) or ``R x = y`` in place, R upper and row-major:
    BLAS dtrsv on the column-major lower ``R^T`` that the same memory holds."""
    cdef int n = <int>k, lda = <int>ld, one = 1
    cdef char lower = b'L', plain = b'N', trans = b'T'
    if k > 0:
        dtrsv(&lower, &plain if transposed else &trans, &plain, &n, R, &lda, y, &one)


cdef void _forward(double* R, Py_ssize_t ld, Py_ssize_t k, double* y) noexcept nogil:
    """Solve ``R^T x = y`` in place."""
    _triangular(R, ld, k, y, True)


cdef void _backward(double* R, Py_ssize_t ld, Py_ssize_t k, double* y) noexcept nogil:
    """Solve ``R x = y`` in place."""
    _triangular(R, ld, k, y, False)


cdef void _solve_ones(double* R, Py_ssize_t ld, Py_ssize_t k, double* y, bint y_valid,
                     double* z) noexcept nogil:
    """``z = H_PP^-1 1``, the least-squares solution on the passive columns, from
    ``y = R^-T 1`` (computed here unless ``y_valid``: admissions extend it in O(k))."""
    cdef Py_ssize_t i
    if not y_valid:
        for i in range(k):
            y[i] = 1.0
        _forward(R, ld, k, y)
    for i in range(k):
        z[i] = y[i]
    _backward(R, ld, k, z)


cdef bint _append(const double* H, Py_ssize_t m, double* R, Py_ssize_t ld, int* order,
                  Py_ssize_t k, int j, double reject, double* work) noexcept nogil:
    """Add column j as position k of the factor; False (nothing changed) if its pivot
    ``H_jj - ||R^-T H_Pj||^2`` is at most ``reject H_jj``. Leaves ``R^-T H_Pj`` in work."""
    cdef Py_ssize_t i
    cdef const double* hj = H + j * m
    cdef double d2
    if k >= ld:
        return False
    for i in range(k):
        work[i] = hj[order[i]]
    _forward(R, ld, k, work)
    d2 = hj[j] - _dot(work, work, k)
    if not d2 > reject * hj[j]:
        return False
    for i in range(k):
        R[i * ld + k] = work[i]
    memset(R + k * ld, 0, k * sizeof(double))
    R[k * ld + k] = sqrt(d2)
    order[k] = j
    return True


cdef void _delete(double* R, Py_ssize_t ld, int* order, Py_ssize_t k,
                  Py_ssize_t p) noexcept nogil:
    """Remove position p: shift the later columns left, then Givens rotations on rows
    (l, l+1) clear the subdiagonal this leaves (Golub, Van Loan, section 6.5.2)."""
    cdef Py_ssize_t i, l, col
    cdef double a, b, r, c, s, x, y
    cdef double* top
    cdef double* bot
    for i in range(k):
        memmove(R + i * ld + p, R + i * ld + p + 1, (k - 1 - p) * sizeof(double))
    for l in range(p, k - 1):
        top = R + l * ld
        bot = R + (l + 1) * ld
        a = top[l]
        b = bot[l]
        r = hypot(a, b)
        c = a / r
        s = b / r
        for col in range(l, k - 1):
            x = top[col]
            y = bot[col]
            top[col] = c * x + s * y
            bot[col] = c * y - s * x
        bot[l] = 0.0
    memmove(order + p, order + p + 1, (k - 1 - p) * sizeof(int))


cdef void _gradient(const double* H, Py_ssize_t m, const int* order, Py_ssize_t k,
                    const double* u, const int* flags, double* Hu) noexcept nogil:
    """``(H u)_j`` for the candidates ``flags[j] == 0`` (H symmetric, u zero outside the
    passive set): by rows of the passive set (``m k``) or by one dot product per
    candidate (``m c``), whichever is less work; late in a warm solve few rows are
    candidates."""
    cdef Py_ssize_t t, i, c = 0
    for i in range(m):
        if flags[i] == 0:
            c += 1
    if c < k:
        for i in range(m):
            if flags[i] == 0:
                Hu[i] = _dot(H + i * m, u, m)
        return
    for i in range(m):
        Hu[i] = 0.0
    for t in range(k):
        _axpy(u[order[t]], H + order[t] * m, Hu, m)


def nnls_gram(const double[:, ::1] H, double[::1] u, int[::1] order, double[:, ::1] R,
              const unsigned char[::1] excluded, int k, int k_factored, int max_iter,
              double wtol, double reject):
    """Lawson-Hanson NNLS for ``min u^T H u / 2 - 1^T u`` over ``u >= 0``, in place.

    ``order[:k]`` is the starting passive set and ``u`` its (non-negative) values, zero
    elsewhere; ``R[:k_factored, :k_factored]`` is the upper Cholesky factor of
    ``H[order[:k_factored]][:, order[:k_factored]]`` and the rest of ``order[:k]`` is
    factored here (a column that is not admitted starts at zero). ``R`` is
    ``(K, K)`` with ``K`` the largest passive set allowed (the rank of ``H`` is at most the
    number of feature coordinates plus one). Variables with ``excluded`` set stay at
    zero (they must not be in ``order[:k]``). Returns ``(k, iterations, converged)``: on
    return ``order[:k]`` is the passive set, ``R`` its factor, ``u`` the solution, and
    ``converged`` says every ``1 - (H u)_j <= wtol`` outside the passive set.
    """
    cdef Py_ssize_t m = H.shape[0]
    cdef Py_ssize_t ld = R.shape[0]
    if (H.shape[1] != m or u.shape[0] != m or order.shape[0] < m or R.shape[1] != ld
            or excluded.shape[0] != m):
        raise ValueError("nnls_gram: H must be (m, m), u and excluded (m,), order (>= m,), "
                         "R square")
    if not (0 <= k_factored <= k <= m and k_factored <= ld):
        raise ValueError(f"nnls_gram: need 0 <= k_factored <= k <= m, got "
                         f"{k_factored}, {k}, {m}")
    import numpy as np
    z_arr = np.empty(ld + 1)
    y_arr = np.empty(ld + 1)
    work_arr = np.empty(max(m, ld + 1))
    hu_arr = np.empty(m)
    starts = np.array(order[k_factored:k], dtype=np.intc)
    flags_arr = np.zeros(m, dtype=np.intc)  # 1 passive, 2 not admitted this pass, 3 out
    cdef double[::1] zv = z_arr
    cdef double[::1] yv = y_arr
    cdef double[::1] workv = work_arr
    cdef double[::1] huv = hu_arr
    cdef int[::1] startv = starts
    cdef int[::1] flags = flags_arr
    cdef const double* Hp = &H[0, 0]
    cdef double* up = &u[0]
    cdef int* op = &order[0]
    cdef double* Rp = &R[0, 0]
    cdef double* z = &zv[0]
    cdef double* y = &yv[0]
    cdef double* work = &workv[0]
    cdef double* Hu = &huv[0]
    cdef Py_ssize_t kk = k_factored, t, i, p, n_starts = startv.shape[0]
    cdef int j, best, iterations = 0, converged = 0
    cdef double w, wbest, alpha, ratio
    cdef bint fresh, y_valid = False
    with nogil:
        for i in range(m):
            if excluded[i]:
                flags[i] = 3
        for t in range(kk):
            flags[op[t]] = 1
        for t in range(n_starts):
            j = startv[t]
            if _append(Hp, m, Rp, ld, op, kk, j, reject, work):
                flags[j] = 1
                kk += 1
            else:
                up[j] = 0.0
        fresh = False  # z already holds the passive solution (after an admission)
        while iterations < max_iter:
            # the inner loop: move toward the passive solution until it is feasible
            while kk > 0:
                if not fresh:
                    _solve_ones(Rp, ld, kk, y, y_valid, z)
                    y_valid = True
                fresh = False
                p = -1
                alpha = 1.0
                for t in range(kk):
                    if z[t] <= 0.0:
                        ratio = up[op[t]] / (up[op[t]] - z[t])
                        if p < 0 or ratio < alpha:
                            alpha = ratio
                            p = t
                if p < 0:
                    for t in range(kk):
                        up[op[t]] = z[t]
                    break
                for t in range(kk):
                    up[op[t]] += alpha * (z[t] - up[op[t]])
                up[op[p]] = 0.0
                for t in range(kk - 1, -1, -1):
                    if up[op[t]] <= 0.0:
                        up[op[t]] = 0.0
                        flags[op[t]] = 0
                        _delete(Rp, ld, op, kk, t)
                        kk -= 1
                        y_valid = False
                iterations += 1
            # the outer loop: admit the most violated variable whose column is independent
            for i in range(m):
                if flags[i] == 2:
                    flags[i] = 0
            _gradient(Hp, m, op, kk, up, &flags[0], Hu)
            while True:
                best = -1
                wbest = wtol
                for i in range(m):
                    if flags[i] == 0:
                        w = 1.0 - Hu[i]
                        if w > wbest:
                            wbest = w
                            best = <int>i
                if best < 0:
                    converged = 1
                    break
                if not _append(Hp, m, Rp, ld, op, kk, best, reject, work):
                    flags[best] = 2
                    continue
                if y_valid:
                    y[kk] = (1.0 - _dot(work, y, kk)) / Rp[kk * ld + kk]
                kk += 1
                _solve_ones(Rp, ld, kk, y, y_valid, z)
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
    return kk, iterations, bool(converged)


def gather_gram(const double[:, ::1] G, const Py_ssize_t[::1] keep, double[:, ::1] out):
    """``out[:k, :k] = G[keep][:, keep]`` (``k = keep.size``) without numpy's temporaries:
    the Gram matrix of a working set's kept rows, for the next round's."""
    cdef Py_ssize_t k = keep.shape[0], m = G.shape[0], i, j
    cdef const double* row
    if out.shape[0] < k or out.shape[1] < k:
        raise ValueError(f"gather_gram: out must be at least ({k}, {k})")
    for i in range(k):
        if not 0 <= keep[i] < m:
            raise ValueError(f"gather_gram: keep[{i}] = {keep[i]} is outside [0, {m})")
    with nogil:
        for i in range(k):
            row = &G[keep[i], 0]
            for j in range(k):
                out[i, j] = row[keep[j]]

