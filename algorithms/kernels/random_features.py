"""Random Fourier features for the RBF kernel (Rahimi, Recht 2007), with public randomness.

The map is J. Park, "Differentially private multi-class classification using kernel
supports and equilibrium points" (SNU master's thesis, 2022), eq. 4.5, which is Rahimi and
Recht's "Random features for large-scale kernel machines" (NIPS 2007) with paired
cosines and sines::

    phi(x) = sqrt(2 / F) [cos(<w_1, x>), ..., cos(<w_{F/2}, x>),
                          sin(<w_1, x>), ..., sin(<w_{F/2}, x>)],   w_j ~ N(0, 2 gamma I_d)

so that ``E[phi(x) . phi(y)] = exp(-gamma ||x - y||^2)``. privkit stores the cosines first
and the sines after them; eq. 4.5 interleaves them. The two differ by a fixed permutation
of coordinates, which changes no norm, inner product or sensitivity.

Privacy-relevant facts, used by the private algorithms built on this map:

* the frequencies are drawn from ``random_state`` only, never from the data, so they are
  public and may be released with a model;
* ``||phi(x)||_2 = 1`` for every x (``cos^2 + sin^2 = 1``; :meth:`transform` divides each
  row by its computed norm, so this holds to float64 rounding): the public norm bound
  :attr:`RandomFourierFeatures.norm_bound` is 1, with no clipping needed, and
  ``||phi(x) - phi(y)||_2 <= 2``;
* consequently ``||phi(x)||_1 <= sqrt(F)`` and ``||phi(x)||_inf <= sqrt(2 / F)``.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from .._accelerators import rff as _rff

__all__ = ["RandomFourierFeatures"]


class RandomFourierFeatures:
    """The random Fourier feature map of the RBF kernel ``exp(-gamma ||x - y||^2)``.

    Parameters
    ----------
    n_components : int
        F, the number of features; must be even (F/2 frequencies, each giving a cosine
        and a sine), at most :attr:`max_components` (2^20), and with
        ``F/2 x n_features`` at most :attr:`max_frequency_entries` (2^27 float64, 1 GiB):
        :meth:`check_parameters` refuses a larger map before anything is allocated.
    gamma : float
        The RBF kernel's parameter, > 0.
    random_state : int, Generator or None
        The only source of the frequencies. ``fit`` uses the data's number of columns and
        nothing else of the data.

    Attributes
    ----------
    frequencies_ : ndarray of shape (F/2, n_features)
        The frequencies ``w_j``, i.i.d. ``N(0, 2 gamma I)``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.kernels.random_features import RandomFourierFeatures
    >>> rff = RandomFourierFeatures(n_components=400, gamma=0.5, random_state=0)
    >>> Z = rff.fit_transform(np.zeros((3, 2)))
    >>> Z.shape, bool(np.allclose(np.linalg.norm(Z, axis=1), 1.0))
    ((3, 400), True)
    """

    #: ``sup_x ||phi(x)||_2``: exactly 1 for this map (eq. 4.5; kappa = 1 in Park 2022).
    norm_bound: float = 1.0
    #: The largest ``n_components`` (2^20: a row of features is 8 MiB).
    max_components: int = 2**20
    #: The most float64 entries of the frequencies (2^27: 1 GiB).
    max_frequency_entries: int = 2**27

    def __init__(self, n_components: int = 400, gamma: float = 1.0,
                 random_state: Any = None) -> None:
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    @classmethod
    def check_parameters(cls, n_components: Any, gamma: Any, n_features: int | None,
                         owner: str) -> None:
        """Validate the public parameters, before any data is touched: ``n_components``
        even and at most :attr:`max_components`, ``gamma`` positive and finite, and (when
        ``n_features`` is known) the frequencies, ``n_components / 2`` rows of
        ``n_features`` float64, at most :attr:`max_frequency_entries` (1 GiB). A map too
        large for memory is refused by its parameters, never by a ``MemoryError`` half
        way through a fit."""
        f = check.positive_int("n_components", n_components, owner)
        if f % 2:
            raise check.fail("n_components", n_components, "an even integer >= 2", owner,
                             "each frequency gives a cosine and a sine (Park 2022, eq. 4.5)")
        if f > cls.max_components:
            raise check.fail("n_components", n_components,
                             f"at most {cls.max_components} (a row of features is then "
                             "8 MiB)", owner)
        check.positive_finite("gamma", gamma, owner)
        if n_features is not None and (f // 2) * n_features > cls.max_frequency_entries:
            most = 2 * (cls.max_frequency_entries // n_features)
            raise check.fail("n_components", n_components,
                             f"at most {most} for {n_features} features (the frequencies, "
                             "n_components / 2 x n_features float64, in at most 1 GiB)",
                             owner)

    def fit(self, X: Any, y: Any = None) -> RandomFourierFeatures:
        """Draw the frequencies for data with ``X.shape[1]`` columns (public randomness)."""
        owner = type(self).__name__
        d = int(np.shape(X)[1]) if np.ndim(X) == 2 else None
        self.check_parameters(self.n_components, self.gamma, d, owner)
        if d is None or d < 1:
            raise check.fail("X", f"a {np.ndim(X)}-D array" if d is None else
                             "an array with no columns",
                             "a 2-D array with at least one column", owner)
        rng = np.random.default_rng(self.random_state)
        self.frequencies_: NDArray[np.float64] = rng.normal(
            0.0, math.sqrt(2.0 * self.gamma), size=(self.n_components // 2, d))
        self.n_features_in_ = d
        return self

    def _check_fitted(self, X: Any) -> NDArray[np.float64]:
        if not hasattr(self, "frequencies_"):
            from privkit.errors import InvalidParameterError

            raise InvalidParameterError(
                f"{type(self).__name__} is not fitted: call fit(X) first")
        A = check.withheld(lambda: np.asarray(X, dtype=np.float64), "X", "an array of "
                           "real numbers", type(self).__name__)
        if A.ndim != 2 or A.shape[1] != self.n_features_in_:
            got = f"{A.shape[1]} columns" if A.ndim == 2 else f"a {A.ndim}-D array"
            raise check.fail("X", got, f"a 2-D array with {self.n_features_in_} columns",
                             type(self).__name__)
        return A

    def projections(self, X: Any) -> NDArray[np.float64]:
        """``X W^T``: the arguments ``<w_j, x>`` of the cosines and sines, shape (n, F/2)."""
        A = self._check_fitted(X)
        with np.errstate(all="ignore"):
            P: NDArray[np.float64] = A @ self.frequencies_.T
        return P

    def _features(self, P: NDArray[np.float64]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.empty((P.shape[0], self.n_components))
        _rff.features(np.ascontiguousarray(P), out)
        return out

    def transform(self, X: Any) -> NDArray[np.float64]:
        """``phi(X)``, shape (n, F); every row has L2 norm 1 to float64 rounding.

        The arguments ``<w_j, x>`` are computed and reduced to ``[-pi, pi]`` in float64;
        the cosines and sines are then evaluated in float32 by privkit's compiled kernel
        (``_rff.features``: Cephes' minimax polynomials, vectorised), so each feature is
        within about ``1e-7 sqrt(2/F)`` of eq. 4.5's. Each row is finally divided by its
        own float64 norm. That is a per-row function of public objects, so every privacy
        argument built on the map holds for it unchanged, and the norm bound
        (:attr:`norm_bound` = 1) holds to rounding rather than to float32 accuracy.

        A row where the map is not defined (a non-finite entry, or entries so large that
        some ``<w_j, x>`` overflows float64) comes out as NaN, with no warning; for
        private training rows :meth:`transform_defined` marks such rows instead, and
        :meth:`transform_queries` refuses them.
        """
        return self._features(self.projections(X))

    def transform_queries(self, X: Any) -> NDArray[np.float64]:
        """:meth:`transform` for public query rows (privkit's rule R7): a row where the
        map is not defined is refused with an error that names no value, instead of
        giving NaN features.

        Raises
        ------
        InvalidParameterError
            If a row has a non-finite entry, or a product ``<w_j, x>`` overflows.
        """
        P = self.projections(X)
        if not np.isfinite(P).all():
            raise check.fail("X", "a row where the map is not defined", "rows of finite "
                             "numbers whose products <w_j, x> with the frequencies are "
                             "finite", type(self).__name__)
        return self._features(P)

    def transform_defined(self, X: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """``(phi(X[defined]), defined)``: the features of the rows where the map is
        defined (every ``<w_j, x>`` finite, so every entry of x finite) and the mask of
        those rows. For private training rows: a row is marked by a public rule of that
        row and the public frequencies, and nothing is raised or warned about its values.
        """
        P = self.projections(X)
        defined: NDArray[np.bool_] = np.asarray(np.isfinite(P).all(axis=1), dtype=bool)
        return self._features(P if defined.all() else P[defined]), defined

    def fit_transform(self, X: Any, y: Any = None) -> NDArray[np.float64]:
        return self.fit(X).transform(X)

    def inner_gradient(self, X: Any, weights: NDArray[np.float64]) -> NDArray[np.float64]:
        """The gradient in x of ``phi(x) . weights`` at every row of X, shape (n, d).

        ``d/dx [cos(<w, x>) c + sin(<w, x>) s] = (-sin(<w, x>) c + cos(<w, x>) s) w``;
        vectorised over rows. Used by the equilibrium-point dynamics (Park 2022, eq. 5.2).
        """
        P = self.projections(X)
        half = self.n_components // 2
        c, s = weights[:half], weights[half:]
        coef = np.cos(P) * s - np.sin(P) * c
        grad: NDArray[np.float64] = (coef @ self.frequencies_) * math.sqrt(
            2.0 / self.n_components)
        return grad

    def kernel(self, X: Any, Y: Any) -> NDArray[np.float64]:
        """The exact RBF kernel ``exp(-gamma ||x - y||^2)`` that the features approximate."""
        A = np.asarray(X, dtype=np.float64)
        B = np.asarray(Y, dtype=np.float64)
        sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        out: NDArray[np.float64] = np.exp(-self.gamma * np.maximum(sq, 0.0))
        return out
