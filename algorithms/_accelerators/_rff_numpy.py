"""The numpy path of the random Fourier feature kernels (``_rff.pyx``): the same operations
in the same order, one IEEE float32 or float64 rounding each, so the results are those of
the compiled kernels bit for bit (which are built without contraction into fused
multiply-adds, ``-ffp-contract=off``).

The feature map is Park 2022's eq. 4.5 and the descent its eq. 5.2 (Park, Hwang, Lee,
"Efficient differentially private kernel support vector classifier for multi-class
classification", 2022). The sine and cosine are Cody and Waite's reduction by pi/2 and
Cephes' ``sinf``/``cosf`` minimax polynomials (Moshier, "Methods and programs for
mathematical functions", 1989), evaluated lane by lane as the kernel does. Every
operation on a row is element-wise or a reduction within that row in a fixed order, so a
row's result is a function of that row alone, which the private mode's stability
histogram needs.

The one place the two paths may differ: a row whose phases leave ``[-1e5, 1e5]`` (or a
feature row with a projection beyond ``2^50``) takes the platform's sine and cosine,
libm's in the kernel and numpy's here, which agree to an ulp or so, not bit for bit.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["descend_rows", "features", "lanes", "rows"]

#: the frequency count of descend_rows' arrays must be a multiple of this
lanes = 16
#: the row count of descend_rows' x must be a multiple of this
rows = 4

_F = np.float32
_SHIFT = _F(12582912.0)  # 1.5 2^23: adding it rounds to an integer
_TWO_OVER_PI = _F(0.636619772367581343)
_PIO2 = (_F(1.5703125), _F(4.837512969970703125e-4), _F(7.54978995489188216e-8))
_SIN = (_F(-1.6666654611e-1), _F(8.3321608736e-3), _F(-1.9515295891e-4))
_COS = (_F(4.166664568298827e-2), _F(-1.388731625493765e-3), _F(2.443315711809948e-5))
_WIDE = 0x47C35000  # the bits of 1e5f; NaN's are above


def _sincos(x: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.float32],
                                              NDArray[np.bool_]]:
    """``(sin x, cos x, wide)`` lane by lane as ``pk_sincos`` computes them, with ``wide``
    marking the lanes beyond 1e5 in absolute value or NaN."""
    big = x * _TWO_OVER_PI + _SHIFT
    n = big - _SHIFT
    q = big.view(np.int32)  # n mod 4 in the low bits (two's complement)
    r = ((x - n * _PIO2[0]) - n * _PIO2[1]) - n * _PIO2[2]
    r2 = r * r
    s = r + r * r2 * (_SIN[0] + r2 * (_SIN[1] + r2 * _SIN[2]))
    c = _F(1.0) - _F(0.5) * r2 + r2 * r2 * (_COS[0] + r2 * (_COS[1] + r2 * _COS[2]))
    si, ci = s.view(np.int32), c.view(np.int32)
    # sin x = (s, c, -s, -c) and cos x = sin(x + pi/2) = (c, -s, -c, s) by quadrant
    q1 = q + np.int32(1)
    sign = np.int32(-(2**31))
    so = np.where((q & 1).astype(bool), ci, si) ^ np.where((q & 2).astype(bool), sign, 0)
    co = np.where((q1 & 1).astype(bool), ci, si) ^ np.where((q1 & 2).astype(bool), sign, 0)
    wide = (x.view(np.int32) & np.int32(0x7FFFFFFF)) > _WIDE
    return (so.astype(np.int32).view(np.float32), co.astype(np.int32).view(np.float32),
            wide)


def _hsum(v: NDArray[Any]) -> NDArray[Any]:
    """The sum over the last axis (16 lanes) in ``pk_hsum``'s order: lane l plus lane
    l + 8, then l + 4, l + 2, l + 1."""
    a = v[..., :8] + v[..., 8:]
    b = a[..., :4] + a[..., 4:]
    c = b[..., :2] + b[..., 2:]
    out: NDArray[Any] = c[..., 0] + c[..., 1]
    return out


def descend_rows(phase: NDArray[np.float32], steps: NDArray[np.float32],
                 x: NDArray[np.float32], n_iter: int, decay_from: int) -> None:
    """``n_iter`` steps ``x <- x + sum_j sin(phase_j . [x, 1]) steps[t >= decay_from, :, j]``
    on every row of ``x``, in place (float32), as ``_rff.descend_rows``.

    ``phase`` is ``(d + 1, h)``: the frequencies by coordinate, then the phases to add;
    ``steps`` is ``(2, d, h)``; ``x`` is ``(n, d)`` with n a multiple of :data:`rows` and
    h of :data:`lanes` (pad with zeros: a zero frequency and step adds exactly nothing).
    """
    n, d = x.shape
    h = phase.shape[1]
    if (phase.shape[0] != d + 1 or steps.shape[0] != 2 or steps.shape[1] != d
            or steps.shape[2] != h or h % lanes or n % rows or d < 1 or h < 1):
        raise ValueError(f"descend_rows: need phase (d + 1, h), steps (2, d, h), x (n, d) "
                         f"with h a multiple of {lanes} and n of {rows}; got "
                         f"{phase.shape}, {steps.shape}, {(n, d)}")
    if n == 0:
        return
    theta = phase[d]
    chunks = h // lanes
    with np.errstate(all="ignore"):
        for t in range(n_iter):
            st = steps[1 if t >= decay_from else 0].reshape(d, chunks, lanes)
            acc = np.broadcast_to(theta, (n, h)).copy()
            for k in range(d):
                acc += x[:, k:k + 1] * phase[k]
            sines, _, wide = _sincos(acc)
            outside = wide.any(axis=1)
            if outside.any():  # the row takes the platform's sine for this step
                sines[outside] = np.sin(acc[outside].astype(np.float64)).astype(np.float32)
            blocks = sines.reshape(n, 1, chunks, lanes)
            g = np.zeros((n, d, lanes), dtype=np.float32)
            for c in range(chunks):
                g += blocks[:, :, c] * st[:, c]
            x += _hsum(g)


def features(proj: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``out[i] = [cos p_i, sin p_i] / ||[cos p_i, sin p_i]||`` for the rows ``p_i`` of
    ``proj`` (``(n, h)``; ``out`` is ``(n, 2h)``), as ``_rff.features``: p reduced to
    ``[-pi, pi]`` in float64, the trigonometry in float32, the norm and the division in
    float64."""
    n, h = proj.shape
    if out.shape[0] != n or out.shape[1] != 2 * h or h < 1:
        raise ValueError(f"features: need proj (n, h) and out (n, 2h) with h >= 1; got "
                         f"{(n, h)} and {out.shape}")
    if n == 0:
        return
    chunks = -(-h // lanes)
    v = np.zeros((n, chunks * lanes))
    v[:, :h] = proj
    with np.errstate(all="ignore"):
        shift = 6755399441055744.0  # 1.5 2^52: adding it rounds to an integer
        turns = (v * 0.15915494309189535 + shift) - shift
        reduced = (v - turns * 6.283185307179586).astype(np.float32)
        s32, c32, wide = _sincos(reduced)
        sd, cd = s32.astype(np.float64), c32.astype(np.float64)
        sd[:, h:] = cd[:, h:] = 0.0
        squares = (cd * cd + sd * sd).reshape(n, chunks, lanes)
        sq = np.zeros((n, lanes))
        for c in range(chunks):
            sq += squares[:, c]
        total = np.zeros(n)
        for lane in range(lanes):
            total += sq[:, lane]
        out[:, :h] = cd[:, :h]
        out[:, h:] = sd[:, :h]
        outside = wide.any(axis=1) | ~(np.abs(proj) <= 2.0**50).all(axis=1)
        if outside.any():  # the platform's float64 cosine and sine for the whole row
            p = proj[outside]
            co, si = np.cos(p), np.sin(p)
            out[outside, :h], out[outside, h:] = co, si
            total[outside] = np.cumsum(co * co + si * si, axis=1)[:, -1]
        out /= np.sqrt(total)[:, None]
