"""The equilibrium-point dynamics on a support function of random features, and the
public grid of cells their end points fall in (Park 2022, eq. 5.2 and 5.6), for
:mod:`privkit.algorithms.svdd.equilibrium`.

.. versionadded:: 0.3.0
   (moved out of :mod:`privkit.algorithms.svdd.equilibrium`, where it was added in 0.2.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._accelerators import rff as _rff
from ..kernels.random_features import RandomFourierFeatures

__all__ = ["COORDINATE_BOUND", "Descent", "cubes", "descend", "grid_keys", "knn_labels",
           "row_values", "unique_rows"]


def descend(features: RandomFourierFeatures, centre: NDArray[np.float64],
            X: NDArray[np.float64], learning_rate: float, n_iter: int,
            decay_at: float = 0.8, decay: float = 0.2) -> NDArray[np.float64]:
    """Gradient descent on ``f(x) = 1 - 2 phi(x) . a + ||a||^2`` from every row of X.

    ``grad f = -2 grad (phi . a)`` (Park 2022, eq. 5.2). Table 7.1's schedule:
    ``learning_rate`` for the first ``floor(decay_at n_iter)`` of ``n_iter`` steps, then
    times ``decay`` (1/5). In float32 (float64 result), by privkit's compiled kernel
    (``_rff.descend_rows``), which computes every row by the same operations whatever the
    other rows: each row's end point is a function of that row, the public frequencies
    and the centre alone, bit for bit. The private mode's stability histogram needs
    exactly that: were a row's cube to depend on the other rows, adding one row could
    move another across a cube boundary. (A BLAS matrix product does not promise it: it
    may round a row's products differently with the shape of the batch.)

    With the centre's cosine and sine weights of frequency ``w_j`` written in polar form,
    ``c_j = rho_j cos(theta_j)``, ``s_j = rho_j sin(theta_j)``, the feature map of eq. 4.5
    (``phi(x) = sqrt(2/F) [cos <w_j, x>, sin <w_j, x>]``) gives

        grad (phi . a)(x) = sqrt(2/F) sum_j (s_j cos <w_j, x> - c_j sin <w_j, x>) w_j
                          = -sqrt(2/F) sum_j rho_j sin(<w_j, x> - theta_j) w_j

    (``sin(u - v) = sin u cos v - cos u sin v``), so one step is
    ``x <- x - 2 lr sqrt(2/F) sum_j rho_j sin(<w_j, x> - theta_j) w_j``: one sine per
    frequency and row, two products with the frequencies.
    """
    return Descent(features, centre, learning_rate, n_iter, decay_at, decay)(X)


class Descent:
    """:func:`descend` for one support function: its phases and steps, computed once, then
    ``Descent(...)(X)`` runs the dynamics from the rows of X (a fitted classifier keeps
    one for ``predict``)."""

    def __init__(self, features: RandomFourierFeatures, centre: NDArray[np.float64],
                 learning_rate: float, n_iter: int, decay_at: float = 0.8,
                 decay: float = 0.2) -> None:
        W = np.asarray(features.frequencies_, dtype=np.float64)
        half, d = W.shape
        a = np.asarray(centre, dtype=np.float64)
        c, s = a[:half], a[half:]
        rho, theta = np.hypot(c, s), np.arctan2(s, c)
        scale = 2.0 * math.sqrt(2.0 / (2 * half))
        # zero frequencies pad to the kernel's vector width: sin(0) times a zero step
        # adds exactly nothing
        width = -(-half // _rff.lanes) * _rff.lanes
        self.phase = np.zeros((d + 1, width), dtype=np.float32)  # [W^T; -theta]
        self.phase[:d, :half] = W.T
        self.phase[d, :half] = -theta
        step = (-scale * rho)[None, :] * W.T  # -(2 sqrt(2/F)) rho_j w_j, by coordinate
        self.steps = np.zeros((2, d, width), dtype=np.float32)
        self.steps[0, :, :half] = np.float32(learning_rate) * step.astype(np.float32)
        self.steps[1, :, :half] = np.float32(learning_rate * decay) * step.astype(np.float32)
        self.n_iter = int(n_iter)
        self.decay_from = math.floor(decay_at * n_iter)

    def __call__(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        rows = np.asarray(X, dtype=np.float64)
        n, d = rows.shape
        # zero rows pad to the kernel's block of rows and are discarded
        x = np.zeros((-(-n // _rff.rows) * _rff.rows, d), dtype=np.float32)
        x[:n] = rows
        _rff.descend_rows(self.phase, self.steps, x, self.n_iter, self.decay_from)
        ends: NDArray[np.float64] = x[:n].astype(np.float64)
        return ends


#: The coordinates of rows and queries are clipped onto [-COORDINATE_BOUND,
#: COORDINATE_BOUND] before the descent, which runs in float32 (whose range ends near
#: 3.4e38): a per-row public map, so that no finite row becomes an infinity.
COORDINATE_BOUND = 1e30
#: Cell indices stay within [-2^61, 2^61], well inside int64.
_INDEX_BOUND = 2.0**61


def grid_keys(points: NDArray[np.float64], width: float, offset: float = 0.0
              ) -> NDArray[np.int64]:
    """``floor((points + offset) / width)`` as int64 (``round(points / width)`` with
    ``offset = width / 2``), for any end point: coordinates are first clipped to the
    public range whose indices stay within +-2^61 (an end point beyond it, or not finite
    because the parameters made the descent overflow, goes to the range's edge, 0 for
    NaN), so no cast overflows or warns. A per-row function of public objects."""
    limit = _INDEX_BOUND * width
    clipped = np.clip(np.nan_to_num(points, nan=0.0, posinf=limit, neginf=-limit),
                      -limit, limit)
    out: NDArray[np.int64] = np.floor((clipped + offset) / width).astype(np.int64)
    return out


def cubes(points: NDArray[np.float64], r: float) -> NDArray[np.int64]:
    """The hypercube of half-width r of each end point (eq. 5.6): cube
    ``floor((e + r) / 2r)``, whose centre ``2 r index`` is within r of every member in
    the max norm."""
    return grid_keys(points, 2.0 * r, r)


def row_values(keys: NDArray[np.int64]) -> NDArray[np.void]:
    """One opaque value per row of integer keys whose byte order is the rows'
    lexicographic order: each int64 has its sign bit flipped (an offset of 2^63, so the
    order of signed integers becomes that of unsigned ones) and is written big-endian, so
    comparing the bytes compares the integers, column by column."""
    k = np.ascontiguousarray(keys, dtype=np.int64)
    ordered = (k.view(np.uint64) ^ np.uint64(1 << 63)).astype(">u8")
    out: NDArray[np.void] = ordered.view(np.dtype((np.void, 8 * k.shape[1]))).reshape(-1)
    return out


def unique_rows(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """``np.unique(keys, axis=0, return_inverse=True)`` (the same rows in the same,
    lexicographic, order), a few times faster: one stable sort of one integer per row
    (the row in mixed radix, first column most significant) when the columns' ranges
    allow it, else of :func:`row_values`."""
    if keys.shape[0] == 0:
        return keys, np.zeros(0, dtype=np.intp)
    low, high = keys.min(axis=0), keys.max(axis=0)
    spans = [int(h) - int(lo) + 1 for lo, h in zip(low.tolist(), high.tolist(), strict=True)]
    if math.prod(spans) < 2**62:
        strides = [math.prod(spans[j + 1:]) for j in range(len(spans))]
        code: NDArray[Any] = (keys - low) @ np.array(strides, dtype=np.int64)  # below 2^62
    else:
        code = row_values(keys)
    order = np.argsort(code, kind="stable")
    ranked = code[order]
    first = np.empty(ranked.size, dtype=bool)  # the first row of each distinct value
    first[0] = True
    first[1:] = ranked[1:] != ranked[:-1]
    inverse = np.empty(ranked.size, dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return keys[order[first]], inverse


def knn_labels(Q: NDArray[np.float64], P: NDArray[np.float64], labels: NDArray[np.int64],
               k: int, n_classes: int) -> NDArray[np.int64]:
    """The majority label (an index below ``n_classes``) of each query's k nearest
    points of P (Euclidean; ties to the smaller index), in blocks of 2048 queries."""
    k = min(k, P.shape[0])
    out = np.empty(Q.shape[0], dtype=np.int64)
    pp = (P * P).sum(1)
    for start in range(0, Q.shape[0], 2048):
        q = Q[start:start + 2048]
        dist = pp[None, :] - 2.0 * q @ P.T
        near = np.argpartition(dist, k - 1, axis=1)[:, :k] if k < P.shape[0] else \
            np.tile(np.arange(P.shape[0]), (q.shape[0], 1))
        rows = np.repeat(np.arange(q.shape[0]) * n_classes, near.shape[1])
        votes = np.bincount(rows + labels[near].ravel(), minlength=q.shape[0] * n_classes)
        out[start:start + 2048] = np.argmax(votes.reshape(-1, n_classes), axis=1)
    return out
