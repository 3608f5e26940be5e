# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled kernels of random Fourier features: the feature map (Park 2022, eq. 4.5) and
the gradient flow of the support function on it (eq. 5.2), used by
:meth:`privkit.algorithms.kernels.random_features.RandomFourierFeatures.transform` and
:func:`privkit.algorithms.svdd._equilibrium_dynamics.descend`.

The kernels (``_rff_simd.h``) are vectorised within a row and compute every row by the
same sequence of operations whatever the other rows, so a row's result is a function of
that row alone, bit for bit. They are compiled for AVX-512, for AVX2 with FMA and for the
x86-64 baseline, and chosen at load time.
"""

import numpy as np

cdef extern from "_rff_simd.h":
    int LANES "PK_LANES"
    int ROWS "PK_ROWS"
    void _descend "pk_descend"(const float* phase, const float* steps, float* x,
                               Py_ssize_t n, Py_ssize_t d, Py_ssize_t h, long n_iter,
                               long decay_from, float* work) noexcept nogil
    void _features "pk_features"(const double* proj, double* out, Py_ssize_t n,
                                 Py_ssize_t h) noexcept nogil

#: the frequency count of descend_rows' arrays must be a multiple of this
lanes = LANES
#: the row count of descend_rows' x must be a multiple of this
rows = ROWS


def descend_rows(const float[:, ::1] phase, const float[:, :, ::1] steps, float[:, ::1] x,
                 long n_iter, long decay_from):
    """``n_iter`` steps ``x <- x + sum_j sin(phase_j . [x, 1]) steps[t >= decay_from, :, j]``
    on every row of ``x``, in place (float32).

    ``phase`` is ``(d + 1, h)``: the frequencies by coordinate, then the phases to add;
    ``steps`` is ``(2, d, h)``; ``x`` is ``(n, d)`` with n a multiple of :data:`rows` and
    h of :data:`lanes` (pad with zeros: a zero frequency and step adds exactly nothing).
    """
    cdef Py_ssize_t n = x.shape[0], d = x.shape[1], h = phase.shape[1]
    if (phase.shape[0] != d + 1 or steps.shape[0] != 2 or steps.shape[1] != d
            or steps.shape[2] != h or h % LANES or n % ROWS or d < 1 or h < 1):
        raise ValueError(f"descend_rows: need phase (d + 1, h), steps (2, d, h), x (n, d) "
                         f"with h a multiple of {LANES} and n of {ROWS}; got "
                         f"{(phase.shape[0], phase.shape[1])}, "
                         f"{(steps.shape[0], steps.shape[1], steps.shape[2])}, {(n, d)}")
    if n == 0:
        return
    work_arr = np.empty(2 * ROWS * h, dtype=np.float32)
    cdef float[::1] work = work_arr
    with nogil:
        _descend(&phase[0, 0], &steps[0, 0, 0], &x[0, 0], n, d, h, n_iter, decay_from,
                 &work[0])


def features(const double[:, ::1] proj, double[:, ::1] out):
    """``out[i] = [cos p_i, sin p_i] / ||[cos p_i, sin p_i]||`` for the rows ``p_i`` of
    ``proj`` (``(n, h)``; ``out`` is ``(n, 2h)``)."""
    cdef Py_ssize_t n = proj.shape[0], h = proj.shape[1]
    if out.shape[0] != n or out.shape[1] != 2 * h or h < 1:
        raise ValueError(f"features: need proj (n, h) and out (n, 2h) with h >= 1; got "
                         f"{(n, h)} and {(out.shape[0], out.shape[1])}")
    if n == 0:
        return
    with nogil:
        _features(&proj[0, 0], &out[0, 0], n, h)
