"""The SVDD dual on unit-norm feature rows: the minimum-norm point of the reduced convex
hull, solved exactly on working sets and certified by its duality gap.

Source: J. Park, "Differentially private multi-class classification using kernel supports
and equilibrium points" (SNU master's thesis, 2022), eq. 4.2-4.4; Tax and Duin, "Support
vector data description" (Machine Learning 54, 2004). :mod:`privkit.algorithms.svdd.svdd`
releases the centre this module computes; its docstring states the problem and the
centre's sensitivity.

.. versionadded:: 0.3.0
   (moved out of :mod:`privkit.algorithms.svdd.svdd`, where it was added in 0.2.0)
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from .._accelerators import hull as _hull

__all__ = ["SVDDSolution", "check_nu", "svdd_centre"]


def check_nu(nu: float, owner: str) -> float:
    """nu, the cap on each dual weight: a number in (0, 1]."""
    v = check.positive_finite("nu", nu, owner)
    if v > 1.0:
        raise check.fail("nu", nu, "a number in (0, 1] (the cap C/n on each dual weight)",
                         owner)
    return v


@attrs.frozen
class SVDDSolution:
    """The dual weights, the centre ``a = Phi^T beta``, and the certified duality gap."""

    beta: NDArray[np.float64] = attrs.field(eq=False)
    centre: NDArray[np.float64] = attrs.field(eq=False)
    gap: float
    iterations: int


def _lmo(scores: NDArray[np.float64], nu: float) -> NDArray[np.float64]:
    """argmin of ``beta . scores`` over the capped simplex: nu on the lowest scores."""
    n = scores.size
    full = min(math.floor(1.0 / nu + 1e-12), n)
    w = np.zeros(n)
    if full == n:
        w[:] = nu
        return w
    # the full lowest scores, then the next lowest at position full (ties: any choice
    # gives the same minimum)
    order = np.argpartition(scores, full)
    w[order[:full]] = nu
    rest = 1.0 - nu * full
    if rest > 1e-15:
        w[order[full]] = rest
    return w


def _fw_gap(centre: NDArray[np.float64], scores: NDArray[np.float64], nu: float) -> float:
    """``a . a - min_{p in RCH} p . a`` (>= ||a||^2 - ||a*||^2 / 2 >= ||a - a*||^2 / 2)."""
    w = _lmo(scores, nu)
    return float(centre @ centre - w @ scores)


def _project_capped_simplex(v: NDArray[np.float64], nu: float) -> NDArray[np.float64]:
    """Euclidean projection onto ``{0 <= b <= nu, sum b = 1}``: ``clip(v - tau, 0, nu)``
    with tau found exactly from the sorted breakpoints of the piecewise-linear sum."""
    x = np.sort(v)
    cums = np.concatenate([[0.0], np.cumsum(x)])
    taus = np.sort(np.concatenate([x, x - nu]))
    full = x.size - np.searchsorted(x, taus + nu, side="left")  # rows at the cap
    lo = np.searchsorted(x, taus, side="right")  # rows above tau start here
    hi = x.size - full
    s = nu * full + (cums[hi] - cums[lo]) - taus * (hi - lo)  # decreasing in tau
    j = int(np.searchsorted(-s, -1.0, side="left"))  # first breakpoint with s <= 1
    if j == 0:
        tau = float(taus[0])
    elif j >= taus.size:
        tau = float(taus[-1])
    else:
        t0, t1, s0, s1 = float(taus[j - 1]), float(taus[j]), float(s[j - 1]), float(s[j])
        tau = t1 if s0 == s1 else t0 + (s0 - 1.0) * (t1 - t0) / (s0 - s1)
    b: NDArray[np.float64] = np.clip(v - tau, 0.0, nu)
    return b


def _fista(G: NDArray[np.float64], beta: NDArray[np.float64], nu: float, iters: int,
           target: float = 0.0) -> NDArray[np.float64]:
    """Accelerated projected gradient with adaptive restart on ``b^T G b``; stops early
    (checked every 10 steps) once the Frank-Wolfe gap on this working set is ``<= target``."""
    L = 2.0 * float(np.linalg.eigvalsh(G)[-1]) + 1e-12
    x = beta.copy()
    y = x.copy()
    t = 1.0
    fx = float(x @ G @ x)
    for it in range(iters):
        if target > 0.0 and it % 10 == 9:
            gx = G @ x
            if float(x @ gx - _lmo(gx, nu) @ gx) <= target:
                break
        x_new = _project_capped_simplex(y - (2.0 / L) * (G @ y), nu)
        f_new = float(x_new @ G @ x_new)
        if f_new > fx:  # adaptive restart (O'Donoghue, Candes 2015)
            t = 1.0
            y = x.copy()
            continue
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = x_new + ((t - 1.0) / t_new) * (x_new - x)
        x, t, fx = x_new, t_new, f_new
    return x


def _kkt_solve(K: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Solve the KKT system by LU (several times faster than the SVD behind ``lstsq`` for
    the few-hundred-row systems of large ``nu``); least squares when K is singular or
    the LU answer's residual is poor (duplicate feature rows make ``G`` singular)."""
    try:
        x = np.asarray(np.linalg.solve(K, rhs), dtype=np.float64)
        if np.all(np.isfinite(x)) and np.linalg.norm(K @ x - rhs) <= 1e-9 * max(
                1.0, float(np.linalg.norm(rhs))):
            return x
    except np.linalg.LinAlgError:
        pass
    from scipy.linalg import lstsq

    # minimum-norm least squares by complete orthogonal factorisation (LAPACK gelsy,
    # QR with pivoting): the answer of numpy's SVD-based lstsq, several times faster
    return np.asarray(lstsq(K, rhs, lapack_driver="gelsy", check_finite=False)[0],
                      dtype=np.float64)


def _active_set(G: NDArray[np.float64], beta: NDArray[np.float64], nu: float,
                max_iter: int = 3000) -> NDArray[np.float64]:
    """Primal active-set method (Nocedal, Wright 2006, Algorithm 16.3) for ``min b^T G b``
    on the capped simplex, from a feasible start; exact up to linear-algebra rounding."""
    b = beta.copy()
    tiny = 1e-12 * nu
    state = np.where(b <= tiny, 0, np.where(b >= nu - tiny, 2, 1))  # lower / free / upper
    b[state == 0] = 0.0
    b[state == 2] = nu
    if (state == 1).any():
        b[state == 1] += (1.0 - b.sum()) / (state == 1).sum()
    for _ in range(max_iter):
        S = np.flatnonzero(state == 1)
        U = np.flatnonzero(state == 2)
        if S.size:
            k = S.size
            K = np.zeros((k + 1, k + 1))
            K[:k, :k] = 2.0 * G[np.ix_(S, S)]
            K[:k, k] = K[k, :k] = 1.0
            rhs = np.concatenate([-2.0 * nu * G[np.ix_(S, U)].sum(axis=1),
                                  [1.0 - nu * U.size]])
            target = _kkt_solve(K, rhs)[:k]
            d = target - b[S]
            if np.abs(d).max() > 1e-15:
                with np.errstate(divide="ignore", invalid="ignore"):
                    lim = np.where(d < 0, b[S] / -d,
                                   np.where(d > 0, (nu - b[S]) / d, np.inf))
                j = int(np.argmin(lim))
                alpha = min(1.0, float(lim[j]))
                b[S] += alpha * d
                if alpha < 1.0:
                    state[S[j]] = 0 if d[j] < 0 else 2
                    b[S[j]] = 0.0 if d[j] < 0 else nu
                    continue
        g = 2.0 * G @ b
        lower = np.flatnonzero(state == 0)
        scale = 1e-12 * max(1.0, float(np.abs(g).max()))
        if S.size:
            lam = float(np.mean(g[S]))
            v_low = lam - g[lower] if lower.size else np.zeros(1)
            v_up = g[U] - lam if U.size else np.zeros(1)
            if max(float(v_low.max()), float(v_up.max())) <= scale:
                return b
            if float(v_low.max()) >= float(v_up.max()):
                state[lower[int(np.argmax(v_low))]] = 1
            else:
                state[U[int(np.argmax(v_up))]] = 1
        else:
            lo_g = float(g[lower].min()) if lower.size else np.inf
            up_g = float(g[U].max()) if U.size else -np.inf
            if up_g <= lo_g + scale:
                return b
            state[lower[int(np.argmin(g[lower]))]] = 1
            state[U[int(np.argmax(g[U]))]] = 1
    return b


@attrs.define
class _Warm:
    """Where the exact solve on a working set starts: the rows at the cap, and the
    passive set of the Lawson-Hanson solve (positions ``order[:k]`` in the working set,
    in factor order) with its values ``u`` and the upper Cholesky factor ``R`` of the
    shifted Gram on its first ``factored`` rows (valid for this ``capped``)."""

    capped: NDArray[np.bool_]
    u: NDArray[np.float64]
    order: NDArray[np.intc]
    R: NDArray[np.float64]
    k: int = 0
    factored: int = 0

    @classmethod
    def cold(cls, m: int, R: NDArray[np.float64]) -> _Warm:
        """No capped or passive row; ``R`` is a work buffer of ``F + 2`` squared (the
        passive set never exceeds the rank of ``[Phi^T; 1]``, at most ``F + 1``)."""
        return cls(np.zeros(m, dtype=bool), np.zeros(m), np.zeros(m, dtype=np.intc), R)

    def restrict(self, keep: NDArray[np.intp], m: int) -> _Warm:
        """This state on a new working set of m rows whose first rows are ``keep``
        (positions in this one); the factor stays valid if every passive row is kept."""
        where = np.full(self.u.size, -1, dtype=np.intc)
        where[keep] = np.arange(keep.size, dtype=np.intc)
        passive = where[self.order[:self.k]]
        kept = passive >= 0
        out = _Warm.cold(m, self.R)
        out.capped[:keep.size] = self.capped[keep]
        out.u[:keep.size] = self.u[keep]
        out.k = int(kept.sum())
        out.order[:out.k] = passive[kept]
        out.factored = min(self.factored, out.k) if kept.all() else 0
        return out


def _shifted_gram(G: NDArray[np.float64], capped: NDArray[np.bool_],
                  nu: float) -> tuple[NDArray[np.float64], float]:
    """The Gram matrix of the columns ``(q_i; 1)``, ``q_i = p_i + nu sum_C p_c / mass``,
    from ``G = P P^T``, and the mass ``1 - nu |C|`` left to the rows below the cap."""
    count = int(np.count_nonzero(capped))
    mass = 1.0 - nu * count
    if count == 0:
        return G + 1.0, mass
    c = (nu / mass) * (G @ capped.astype(np.float64))
    H: NDArray[np.float64] = G + ((nu / mass) * float(c[capped].sum()) + 1.0)
    H += c[:, None]
    H += c
    return H, mass


def _capped_min_norm(G: NDArray[np.float64], nu: float, warm: _Warm,
                     max_outer: int = 50) -> NDArray[np.float64] | None:
    """The exact minimiser of ``beta^T G beta`` over ``0 <= beta <= nu, sum beta = 1``
    (``G = P P^T``), started from ``warm``, which is left as a later solve's start.

    An active set on the upper bounds: with the rows C at the cap fixed at nu, the rest
    carry mass ``1 - nu |C|`` and the problem is the minimum-norm point of the hull of
    the rows shifted by ``nu sum_C p / mass``. That is least distance programming (Lawson,
    Hanson, "Solving least squares problems", 1974, ch. 23): with ``u = s lambda``
    (``s = sum u``, ``lambda`` on the simplex), ``||Q^T u||^2 + (1 - sum u)^2`` is
    minimised over s at ``s = 1 / (1 + r^2)`` with value ``r^2 / (1 + r^2)``,
    ``r = ||Q^T lambda||``, increasing in r: the non-negative least squares solution,
    normalised, is the minimum-norm weights. privkit's Lawson-Hanson solver
    (``_hull.nnls_gram``, compiled or its numpy path:
    :mod:`privkit.algorithms._accelerators`) works on the Gram matrix of the columns
    ``(q_i; 1)`` (:func:`_shifted_gram`) and starts from ``warm``.

    Rows whose weight exceeds nu join C; rows of C whose score ``p . a`` exceeds the free
    rows' common level leave it. When neither happens every KKT condition holds: free
    rows share the lowest level among uncapped rows, zero rows score at least that,
    capped rows at most. None if the solver or the sets do not settle (``warm`` is then
    spent)."""
    m = G.shape[0]
    for _ in range(max_outer):
        beta = np.where(warm.capped, nu, 0.0)
        if 1.0 - nu * int(np.count_nonzero(warm.capped)) <= 1e-12:
            # n nu = 1: every weight is at the cap
            warm.u[:] = 0.0
            warm.k = warm.factored = 0
        else:
            H, mass = _shifted_gram(G, warm.capped, nu)
            k, _, converged = _hull.nnls_gram(H, warm.u, warm.order, warm.R,
                                              warm.capped.view(np.uint8), warm.k,
                                              warm.factored, 10 * m + 100, 1e-13, 1e-12)
            warm.k = warm.factored = k
            total = float(warm.u.sum())
            if not converged or not total > 0.0:
                return None
            beta += (mass / total) * warm.u
        scores = G @ beta
        over = beta > nu * (1.0 + 1e-12)
        free = (beta > 0.0) & ~warm.capped
        rest = ~warm.capped
        level = float(scores[free].max()) if free.any() else (
            float(scores[rest].min()) if rest.any() else math.inf)
        release = warm.capped & (scores > level + 1e-12)
        if not over.any() and not release.any():
            return beta
        warm.capped |= over
        warm.capped &= ~release
        warm.u[warm.capped] = 0.0
        passive = warm.order[:warm.k]
        passive = passive[~warm.capped[passive]]
        warm.k = passive.size
        warm.order[:warm.k] = passive
        warm.factored = 0  # the shift changed: the factor is rebuilt from the values
    return None


def _first_order(PW: NDArray[np.float64], start: NDArray[np.float64], nu: float,
                 tol: float, whole: bool) -> NDArray[np.float64]:
    """The fallback solve on a working set: accelerated projected gradient and the exact
    active-set polish (used when :func:`_capped_min_norm` does not settle)."""
    G = PW @ PW.T
    bW = _fista(G, _project_capped_simplex(start, nu), nu, iters=200,
                target=max(0.1 * tol, 1e-4))
    n_free = int(np.count_nonzero((bW > 0) & (bW < nu)))
    if _fw_gap(PW.T @ bW, G @ bW, nu) > 0.1 * tol and n_free <= 300:
        polished = _active_set(G, bW, nu, max_iter=100)
        if polished @ G @ polished <= bW @ G @ bW:
            bW = polished
    if _fw_gap(PW.T @ bW, G @ bW, nu) > 0.1 * tol:
        bW = _fista(G, bW, nu, iters=20000 if whole else 2000, target=0.1 * tol)
    return bW


def _scored(A: NDArray[np.float64], W: NDArray[np.intp], bW: NDArray[np.float64],
            warm: _Warm, nu: float) -> tuple[NDArray[np.intp], NDArray[np.float64],
                                              NDArray[np.float64], NDArray[np.float64],
                                              float]:
    """The rows of the working set a next round keeps (the support, and the solver's
    capped and passive rows, so its factor carries over) and their features; the centre
    of the working-set weights, every row's score against it, and the Frank-Wolfe gap
    over all rows."""
    keep_mask = bW > 0
    keep_mask |= warm.capped
    keep_mask[warm.order[:warm.k]] = True
    keep = np.flatnonzero(keep_mask)
    PK = A[W[keep]]
    centre = PK.T @ bW[keep]
    scores = A @ centre
    return keep, PK, centre, scores, _fw_gap(centre, scores, nu)


def svdd_centre(Phi: NDArray[np.float64], nu: float, *, tol: float = 1e-8,
                max_rounds: int = 30) -> SVDDSolution:
    """The SVDD centre (Park 2022 eq. 4.2-4.4; Tax, Duin 2004) for feature rows ``Phi``.

    Solves ``min ||Phi^T beta||^2`` over ``0 <= beta <= nu, sum beta = min(1, n nu)``
    (the dual 4.2 when every row has the same norm, as for random Fourier features).
    With ``n nu <= 1`` the only feasible weights are ``beta = nu``: the centre is
    ``nu sum_i phi_i`` (0 for no rows), exactly, with gap 0. That is the dual of the
    primal 4.1 with ``R^2 >= 0`` when ``C = nu < 1/n`` (shrinking the radius to 0 costs
    less than it saves), scaled so that the missing mass ``1 - n nu`` sits at the origin;
    it keeps the centre's sensitivity ``2 nu`` for every n (see
    :mod:`privkit.algorithms.svdd.svdd`), so no n is refused. Otherwise each round scores
    every row against the current centre (``O(n F)``), solves the problem restricted to
    a working set of the lowest-scoring rows exactly (:func:`_capped_min_norm`: an active
    set on the cap around Lawson and Hanson's non-negative least squares), and stops when
    the Frank-Wolfe gap over *all* rows is at most ``tol``; then
    ``||centre - a*||_2 <= sqrt(2 tol)``. Rows outside the working set that score below
    its free rows' level (the KKT violators) join it for the next round.

    Raises
    ------
    InvalidParameterError
        If nu is not in (0, 1], tol not positive, or Phi not 2-D (nothing about Phi's
        values or its number of rows).
    RuntimeError
        If the gap is not reached in ``max_rounds`` rounds nor by a first-order solve on
        every row (never seen; the message names no value of the data).
    """
    owner = "svdd_centre"
    A = np.asarray(Phi, dtype=np.float64)
    if A.ndim != 2:
        raise check.fail("Phi", f"a {A.ndim}-D array", "a 2-D array of feature rows", owner)
    nu = check_nu(nu, owner)
    check.positive_finite("tol", tol, owner)
    n = A.shape[0]
    if n * nu <= 1.0:
        beta = np.full(n, nu)
        return SVDDSolution(beta, A.T @ beta, 0.0, 0)
    step = max(64, 2 * math.ceil(1.0 / nu) + 32)  # rows added per round
    # small sets, and sets no larger than one round's rows (a small nu), are solved whole
    # (one exact solve is cheaper than several rounds); else the first working set has
    # the lowest scores against the centre of beta = 1/n
    W = (np.argpartition(A @ A.mean(axis=0), step - 1)[:step] if n > max(448, step)
         else np.arange(n))
    PW = A if W.size == n else A[W]
    G = PW @ PW.T
    warm = _Warm.cold(W.size, np.empty((A.shape[1] + 2, A.shape[1] + 2)))
    gap = math.inf
    for rounds in range(1, max_rounds + 1):
        exact = _capped_min_norm(G, nu, warm)
        if exact is None:
            bW = _first_order(A[W], np.full(W.size, 1.0 / W.size), nu, tol, W.size == n)
            warm = _Warm.cold(W.size, warm.R)
        else:
            bW = exact
        keep, PK, centre, scores, gap = _scored(A, W, bW, warm, nu)
        if gap > tol:
            support = bW > 0
            free = support & (bW < nu)
            level = float(scores[W][free].max() if free.any() else scores[W][support].max())
            outside = np.ones(n, dtype=bool)
            outside[W] = False
            violators = np.flatnonzero(outside & (scores < level))
            if violators.size == 0:  # the working set's own solve was not exact enough
                bW = _first_order(A[W], bW, nu, tol, W.size == n)
                keep, PK, centre, scores, gap = _scored(A, W, bW, warm, nu)
                violators = np.flatnonzero(outside & (scores < level))
        if gap <= tol:
            beta = np.zeros(n)
            beta[W] = bW
            return SVDDSolution(beta, centre, gap, rounds)
        # the next working set: the kept rows and the lowest-scoring violators
        new = violators[np.argsort(scores[violators])[:step]]
        PV = A[new]
        grown = np.empty((keep.size + new.size, keep.size + new.size))
        _hull.gather_gram(G, keep, grown)
        grown[:keep.size, keep.size:] = PK @ PV.T
        grown[keep.size:, :keep.size] = grown[:keep.size, keep.size:].T
        grown[keep.size:, keep.size:] = PV @ PV.T
        G = grown
        W = np.concatenate([W[keep], new])
        warm = warm.restrict(keep, W.size)
    # not certified in max_rounds rounds: the first-order solve on every row
    beta = _first_order(A, np.full(n, 1.0 / n), nu, tol, True)
    centre = A.T @ beta
    gap = _fw_gap(centre, A @ centre, nu)
    if gap <= tol:
        return SVDDSolution(beta, centre, gap, max_rounds + 1)
    raise RuntimeError(f"svdd_centre: the duality gap did not reach tol={tol:g} in "
                       f"{max_rounds} rounds nor by the first-order solve on every row; "
                       "the centre is not certified within sqrt(2 tol) of the optimum, "
                       "which the declared sensitivity needs")
