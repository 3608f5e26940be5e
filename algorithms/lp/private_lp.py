"""Linear programs whose constraints are private records, solved by dense multiplicative
weights (Hsu, Roth, Roughgarden, Ullman 2014, "Privately solving linear programs",
ICALP 2014, arXiv:1402.3631v2, Section 3: constraint-private LPs).

The LP is ``minimise c.x subject to A x <= b, x >= 0`` where each row ``(A_i, b_i)`` is
one person's record; neighbouring LPs differ in one whole constraint (REPLACE_ONE: the
number of constraints ``n`` is public). Given a public target value ``OPT`` of the
objective, the solver looks for a point of ``K = {x >= 0 : c.x = OPT}`` that satisfies
all but about ``s`` constraints up to an additive ``alpha``:

1. weights ``z_i = s / n`` on the constraints;
2. at each of ``T`` iterations, the Bregman (KL) projection of ``z`` onto the
   ``1/s``-dense distributions (:func:`dense_projection`); the candidate solutions of the
   weighted feasibility problem ``min sum_i p_i A_i x`` over ``K`` are its vertices
   ``(OPT / c_j) e_j``; the exponential mechanism picks one by its quality score;
3. the multiplicative update ``z_i <- z_i exp(-eta l_i)`` with the loss
   ``l_i = (b_i - A_i x_t) / (2 rho) + 1/2`` in [0, 1] (small for violated constraints,
   whose weight therefore grows relative to the others);
4. the average of the ``T`` chosen vertices is the output.

van der Reijden 2019 ("Solving linear programs to train SVMs under differential privacy",
Erasmus University master's thesis), Algorithm 3, is this solver applied to the hard-margin
LP-SVM with ``T = 36 rho^2 log(n) / alpha^2`` and ``eta = sqrt(log(n) / T)``; its
section 3.5 (eq. 13) adds the *count* quality score used here as ``score="count"``.

Every selection is a :class:`~privkit.mechanisms.Exponential` release, so a ledger records
each of the ``T`` steps and the plan is ``Repeat(Exponential, T)``. With
``epsilon=None`` the solver is the non-private reference: the argmax replaces the
exponential mechanism (thesis section 3.3).

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   A constraint beyond the public bounds is clipped onto them and a non-finite one made
   neutral, silently (they were refused, with the offending value in the message);
   :func:`calibrate_step_epsilon` is memoised. :func:`score_sensitivity` declares the
   tight sensitivities ``2 OPT a / (s c_min)`` and ``1 / s`` (the thesis's eq. 12 and 14,
   ``3 OPT a / (s c_min)`` and ``2 / s``, are loose): less noise for the same epsilon.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.ledger import Ledger
from privkit.mechanisms import Exponential
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, Repeat

__all__ = [
    "DMWResult",
    "calibrate_step_epsilon",
    "dense_multiplicative_weights",
    "dense_projection",
    "dmw_iterations",
    "score_sensitivity",
    "solve_private_lp",
]

R = Neighbouring.REPLACE_ONE
SCORES = ("slack", "count")


def dense_projection(weights: ArrayLike, density: float) -> NDArray[np.float64]:
    """The Bregman (KL) projection of positive weights onto the ``1/s``-dense distributions.

    Notes
    -----
    Hsu et al. 2014, Section 3.1 (after Herbster, Warmuth 2001); thesis Definition 2.4:
    ``Gamma_s z_i = min(1, zeta z_i) / s`` with ``zeta >= 0`` such that
    ``sum_i min(1, zeta z_i) = s``. The result is a probability vector with every entry at
    most ``1/s``; it is invariant to rescaling ``z``. Computed exactly by sorting: with
    the ``k`` largest entries capped, ``zeta = (s - k) / (sum of the others)``, for the
    smallest ``k`` at which the largest uncapped entry stays below 1.

    Requires ``0 < s <= n``.
    """
    owner = "dense_projection"
    allowed = "a non-empty 1-D array of positive finite weights"
    z = check.withheld(lambda: np.asarray(weights, dtype=np.float64), "weights", allowed,
                       owner)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)) or np.any(z <= 0):
        raise check.private_fail("weights", allowed, owner)
    n = z.size
    s = check.positive_finite("density", density, owner)
    if s > n:
        raise check.fail("density", density, f"at most the number of weights ({n})", owner)
    v = np.sort(z)[::-1] / z.max()
    tail = np.cumsum(v[::-1])[::-1]  # tail[k] = sum of v[k:]
    k = np.arange(n)
    zeta = (s - k) / tail
    # capped prefix k is consistent when the largest uncapped entry is at most 1
    ok = zeta * v <= 1.0 + 1e-12
    first = int(np.argmax(ok))
    factor = zeta[first] / z.max()
    p: NDArray[np.float64] = np.minimum(1.0, factor * z) / s
    return p


def dmw_iterations(n_constraints: int, *, width: float, accuracy: float) -> tuple[int, float]:
    """``T = ceil(36 rho^2 log(n) / alpha^2)`` and ``eta = sqrt(log(n) / T)``.

    Notes
    -----
    Hsu et al. 2014, Section 3.1 (dense multiplicative weights with width ``rho`` reaches
    additive accuracy ``alpha`` after this many rounds); thesis Algorithm 3. ``T`` is
    rounded up to a whole number of iterations, and is at least 1.
    """
    owner = "dmw_iterations"
    n = check.positive_int("n_constraints", n_constraints, owner)
    rho = check.positive_finite("width", width, owner)
    alpha = check.positive_finite("accuracy", accuracy, owner)
    log_n = math.log(max(n, 2))
    steps = max(1, math.ceil(36.0 * rho * rho * log_n / (alpha * alpha)))
    return steps, math.sqrt(log_n / steps)


def score_sensitivity(score: str, *, density: float, optimum: float = 1.0,
                      entry_bound: float = 1.0, min_cost: float = 1.0) -> float:
    """The L-infinity sensitivity of the quality scores under REPLACE_ONE (tight).

    Notes
    -----
    ``"slack"``: the score of vertex ``x_j = (OPT / c_j) e_j`` is ``-(OPT / c_j) p . A_j``
    (the weighted slack ``p . (b - A x_j)`` less ``p . b``, which is the same for every
    candidate and so does not change the exponential mechanism's choice); its change is
    at most ``2 OPT a / (s c_min)``, with ``a`` the public bound on ``|A_ij|``; for the
    SVM (``a = c_j = 1``) ``2 OPT / s``.

    ``"count"``: the score ``sum_k p_k 1(A_k x_j <= b_k + phi)`` (thesis eq. 13) moves by
    at most ``1 / s``.

    Proof. Neighbours replace row ``i``; given the same history of choices, every other
    row's loss, hence its raw weight ``z_k``, is the same, and only ``z_i`` differs. The
    dense projection is ``p_k = min(1, zeta z_k) / s`` with ``zeta`` set by
    ``sum_k min(1, zeta z_k) = s`` (:func:`dense_projection`), so ``zeta`` moves against
    ``z_i`` and every ``p_k - p'_k`` (``k != i``) has the same sign; they sum to
    ``-(p_i - p'_i)``, hence ``sum_{k != i} |p_k - p'_k| = |p_i - p'_i|``. For the count,
    with ``delta = p_i - p'_i >= 0`` (the other case is symmetric), the other rows add
    a change in ``[-delta, 0]`` and row ``i`` one in ``[-p'_i, p_i]``: the total lies in
    ``[-p_i, p_i]``, and ``p_i <= 1/s``. For the slack, the other rows add at most
    ``a |delta|`` and row ``i`` at most ``a (p_i + p'_i)``: in all ``2 a max(p_i, p'_i)
    <= 2 a / s``, times ``OPT / c_j``. Both bounds are attained: with ``s = n`` the
    projection is uniform (``p_i = p'_i = 1/s``), and a row whose indicator flips at a
    vertex (count), or whose entry ``A_ij`` moves from ``-a`` to ``a`` (slack), moves that
    vertex's score by exactly the bound (``tests/algorithms/test_score_sensitivity.py``
    enumerates small instances). Thesis eq. 12 and 14 (van der Reijden 2019, after Hsu,
    Roth, Roughgarden, Ullman 2014, Lemma 3.5: ``||p - p'||_1 <= 2/s``, plus the row's own
    weight) give ``3 OPT a / (s c_min)`` and ``2 / s``: they ignore that the other rows'
    weights all move one way, and are loose by 3/2 and 2.
    """
    owner = "score_sensitivity"
    s = check.positive_finite("density", density, owner)
    if score == "count":
        return 1.0 / s
    if score != "slack":
        raise check.fail("score", score, "'slack' or 'count'", owner)
    opt = check.positive_finite("optimum", optimum, owner)
    a = check.positive_finite("entry_bound", entry_bound, owner)
    c = check.positive_finite("min_cost", min_cost, owner)
    return 2.0 * opt * a / (s * c)


def step_mechanism(step_epsilon: float, sensitivity: float) -> Exponential:
    """The exponential mechanism of one DMW iteration (REPLACE_ONE)."""
    sens = Sensitivity(value=sensitivity, norm=Norm.LINF, relation=R)
    mechanism: Exponential = Exponential.for_epsilon(step_epsilon, sensitivity=sens)
    return mechanism


def calibrate_step_epsilon(*, epsilon: float, delta: float, n_iterations: int,
                           sensitivity: float = 1.0, prefix: Block | None = None,
                           rtol: float = 1e-7) -> float:
    """The largest per-step epsilon whose ``T`` exponential-mechanism steps (after
    ``prefix``, if given) privkit's tightest accountant certifies within (epsilon, delta).

    A bracketing root search (Illinois regula falsi, which falls back on bisection) on the
    per-step epsilon against :func:`privkit.tightest` of
    ``Sequential(prefix, Repeat(Exponential(eps_step), T))``. The value returned is always
    the lower end of the bracket, whose plan is certified within the budget, and it
    spends the budget to a relative ``rtol``: ``epsilon (1 - rtol) <= spent <= epsilon``.
    The exponential mechanism is eta-bounded-range (Durfee, Rogers 2019), so the
    accountants compose its exact profile (PLD), its RDP or its zCDP ``eta^2 / 8``
    (Cesar, Rogers 2021) rather than pure epsilon.

    The result is a pure function of its arguments (plans are frozen values), memoised:
    a fit with a public T and a public score sensitivity repeats the same search.

    Raises
    ------
    InvalidParameterError
        If ``prefix`` alone already spends the budget.
    """
    owner = "calibrate_step_epsilon"
    eps = check.positive_finite("epsilon", epsilon, owner)
    d = check.delta("delta", delta, owner)
    steps = check.positive_int("n_iterations", n_iterations, owner)
    sens = check.positive_finite("sensitivity", sensitivity, owner)
    try:
        hash(prefix)
    except TypeError:  # a plan holding something unhashable: search without the memo
        return _calibrated.__wrapped__(eps, d, steps, sens, prefix, rtol)
    return _calibrated(eps, d, steps, sens, prefix, rtol)


@functools.lru_cache(maxsize=512)
def _calibrated(eps: float, d: float, steps: int, sensitivity: float, prefix: Block | None,
                rtol: float) -> float:
    """:func:`calibrate_step_epsilon` on validated arguments."""
    from privkit import Sequential, available_accountants, tightest

    owner = "calibrate_step_epsilon"
    # The optimal (Kairouz-Oh-Viswanath) accountant sees only each step's pure epsilon,
    # whose composition is never tighter than the bounded-range profile the others use,
    # and costs ~50 ms a call: it is left out of the search.
    pool = [a for a in available_accountants() if a.name != "optimal"]

    def excess(step: float) -> float:
        block: Block = Repeat(step_mechanism(step, sensitivity), steps)
        if prefix is not None:
            block = Sequential(prefix, block)
        return float(tightest(block, delta=d, accountants=pool).epsilon) - eps

    # first guess: T steps of zCDP eps'^2/8 within the largest rho whose CKS/Bun-Steinke
    # conversion fits, rho + 2 sqrt(rho log(1/delta)) = eps
    log_d = math.log(1.0 / d) if d > 0 else 0.0
    rho = (math.sqrt(log_d + eps) - math.sqrt(log_d)) ** 2 if d > 0 else eps * eps / 2.0
    lo = hi = math.sqrt(8.0 * rho / steps)
    f_lo = f_hi = excess(lo)
    while f_lo > 0.0:  # shrink until certified
        hi, f_hi = lo, f_lo
        lo /= 1.5
        if lo < eps * 1e-12:
            raise check.fail("epsilon", eps, "more than the prefix alone spends", owner)
        f_lo = excess(lo)
    while f_hi <= 0.0:  # grow until over budget
        lo, f_lo = hi, f_hi
        hi *= 1.5
        f_hi = excess(hi)
    side = 0
    while f_lo < -rtol * eps and hi - lo > 1e-15 * hi:
        # Illinois: halve the weight of an end that stays put twice
        w_lo = 0.5 if side == -1 else 1.0
        w_hi = 0.5 if side == 1 else 1.0
        mid = (lo * f_hi * w_hi - hi * f_lo * w_lo) / (f_hi * w_hi - f_lo * w_lo)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
        f_mid = excess(mid)
        if f_mid <= 0.0:
            lo, f_lo = mid, f_mid
            side = 1
        else:
            hi, f_hi = mid, f_mid
            side = -1
    return lo


@attrs.frozen(kw_only=True)
class DMWResult:
    """What :func:`dense_multiplicative_weights` returns.

    Attributes
    ----------
    x : ndarray
        The average of the chosen vertices (``c.x = OPT``).
    choices : ndarray of int
        The index ``j`` of the vertex ``(OPT / c_j) e_j`` chosen at each iteration.
    n_iterations : int
    learning_rate : float
    """

    x: NDArray[np.float64] = attrs.field(eq=False)
    choices: NDArray[np.int64] = attrs.field(eq=False)
    n_iterations: int
    learning_rate: float


def dense_multiplicative_weights(
    A: NDArray[np.float64], b: NDArray[np.float64], c: NDArray[np.float64], *,
    optimum: float, density: float, n_iterations: int, learning_rate: float, width: float,
    mechanism: Exponential | None, rng: np.random.Generator, score: str = "slack",
    margin: float = 0.0,
) -> DMWResult:
    """The DMW loop on validated arrays (see the module docstring).

    ``mechanism`` is the per-step exponential mechanism (its ``release`` is recorded in
    the active ledgers), or ``None`` for the non-private argmax. ``score`` is ``"slack"``
    (Hsu et al.; thesis Algorithm 3) or ``"count"`` (thesis eq. 13, with soft margin
    ``margin`` = phi). Candidate ``j`` is the vertex ``(OPT / c_j) e_j``; the weights are
    kept as logarithms, since the projection is invariant to rescaling them.
    """
    n, d = A.shape
    scale = optimum / c  # x_j = scale[j] e_j
    log_z = np.full(n, math.log(density / n))
    choices = np.empty(n_iterations, dtype=np.int64)
    half = d // 2
    # LPs with paired columns A = [M, -M] (w = w+ - w-, as in the LP-SVM) need p @ M only
    paired = (score == "slack" and d % 2 == 0 and np.array_equal(scale[:half], scale[half:])
              and np.array_equal(A[:, half:], -A[:, :half]))
    M = np.ascontiguousarray(A[:, :half].T) if paired else np.ascontiguousarray(A.T)
    if score == "count":  # whether each constraint is within phi of satisfied, per vertex
        M = np.ascontiguousarray((A * scale[None, :] <= b[:, None] + margin).T,
                                 dtype=np.float32)
    for t in range(n_iterations):
        p = dense_projection(np.exp(log_z - log_z.max()), density)
        if score == "slack":
            g = M @ p
            utility = -np.concatenate([g, -g]) * scale if paired else -g * scale
        else:  # weighted count of constraints within phi of satisfied (0/1 entries)
            utility = (M @ p.astype(np.float32)).astype(np.float64)
        if mechanism is None:
            j = int(np.argmax(utility))
        else:
            j = int(mechanism.release(utility, rng=rng))
        choices[t] = j
        slack = b - A[:, j] * scale[j]
        loss = np.clip(slack / (2.0 * width) + 0.5, 0.0, 1.0)
        log_z -= learning_rate * loss
    x = np.bincount(choices, minlength=d) * scale / n_iterations
    return DMWResult(x=x, choices=choices, n_iterations=n_iterations,
                     learning_rate=learning_rate)


def _as_lp(A: ArrayLike, b: ArrayLike, c: ArrayLike, entry_bound: float, b_bound: float,
           owner: str) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The LP with its private constraints mapped into the declared domain, record by
    record and silently: entries clipped onto ``[-entry_bound, entry_bound]`` and
    ``[-b_bound, b_bound]``, and a constraint with a non-finite entry replaced by the
    neutral ``0 . x <= b_bound`` (satisfied by every x). Only shapes (public: n is public
    under REPLACE_ONE) and the public cost vector are checked."""
    A_ = check.withheld(lambda: np.array(A, dtype=np.float64), "A", "a 2-D array of real "
                        "numbers", owner)
    b_ = check.withheld(lambda: np.array(b, dtype=np.float64), "b", "a 1-D array of real "
                        "numbers", owner)
    c_ = np.asarray(c, dtype=np.float64)
    if A_.ndim != 2 or A_.shape[0] < 2 or A_.shape[1] < 1:
        raise check.fail("A", f"an array of shape {A_.shape}",
                         "a 2-D array with at least 2 rows (constraints)", owner)
    if b_.shape != (A_.shape[0],):
        raise check.fail("b", f"an array of shape {b_.shape}",
                         f"an array of shape ({A_.shape[0]},)", owner)
    if c_.shape != (A_.shape[1],) or not np.all(np.isfinite(c_)) or np.any(c_ <= 0):
        raise check.fail("c", c, f"a positive finite array of shape ({A_.shape[1]},) (K = "
                         "{x >= 0 : c.x = OPT} must be a simplex)", owner)
    broken = ~(np.isfinite(A_).all(axis=1) & np.isfinite(b_))
    A_[broken], b_[broken] = 0.0, b_bound
    np.clip(A_, -entry_bound, entry_bound, out=A_)
    np.clip(b_, -b_bound, b_bound, out=b_)
    return A_, b_, c_


def solve_private_lp(
    A: ArrayLike, b: ArrayLike, c: ArrayLike, *, optimum: float, entry_bound: float,
    b_bound: float, density: float, accuracy: float, epsilon: float | None,
    delta: float = 0.0, n_iterations: int | None = None, width: float | None = None,
    score: str = "slack", margin: float = 0.0, rng: Any = None,
) -> tuple[DMWResult, Block | None, Ledger]:
    """Approximately solve a constraint-private LP by dense multiplicative weights.

    Parameters
    ----------
    A, b : array
        The private constraints ``A x <= b``, one record per row (REPLACE_ONE).
    c : array
        The public, positive cost vector.
    optimum : float
        A public target objective value OPT (> 0); the output satisfies ``c.x = OPT``.
    entry_bound, b_bound : float
        Public bounds on ``|A_ij|`` and ``|b_i|``. Entries beyond them are clipped onto
        them and a constraint with a NaN or an infinity becomes ``0 . x <= b_bound``
        (satisfied by every x), silently: per-record public maps, so neighbouring LPs stay
        neighbouring, and nothing is refused or reported by the value of a constraint.
    density : float
        s, with ``0 < s <= n``: about how many constraints may stay violated.
    accuracy : float
        alpha, the additive violation tolerated; sets ``T`` (:func:`dmw_iterations`).
    epsilon, delta : float
        The budget of the ``T`` steps, spent exactly by privkit's tightest accountant
        (:func:`calibrate_step_epsilon`); ``epsilon=None`` is the non-private argmax.
    n_iterations : int, optional
        A public ``T`` instead of the formula (``eta = sqrt(log(n) / T)`` either way).
    width : float, optional
        rho, a public bound on ``|b_i - A_i x|`` over ``K``; by default
        ``b_bound + OPT entry_bound / min(c)``.
    score : {"slack", "count"}, margin : float
        The quality score (:func:`score_sensitivity`) and, for ``"count"``, phi.
    rng : seed or Generator

    Returns
    -------
    result : DMWResult
    plan : Block or None
        ``Repeat(Exponential, T)``, or ``None`` when non-private.
    ledger : Ledger
        What ran; matches ``plan``.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.lp.private_lp import solve_private_lp
    >>> rng = np.random.default_rng(0)
    >>> A = -np.abs(rng.uniform(size=(500, 3)))          # every constraint: -A_i x <= -1/2
    >>> result, plan, ledger = solve_private_lp(
    ...     A, np.full(500, -0.5), np.ones(3), optimum=3.0, entry_bound=1.0, b_bound=1.0,
    ...     density=250, accuracy=2.0, epsilon=1.0, delta=1e-5, rng=0)
    >>> round(float(result.x.sum()), 6), ledger.compare(plan).matches
    (3.0, True)
    """
    owner = "solve_private_lp"
    a_max = check.positive_finite("entry_bound", entry_bound, owner)
    opt = check.positive_finite("optimum", optimum, owner)
    b_max = check.nonnegative_finite("b_bound", b_bound, owner)
    A_, b_, c_ = _as_lp(A, b, c, a_max, b_max, owner)
    n = A_.shape[0]
    s = check.positive_finite("density", density, owner)
    if s > n:
        raise check.fail("density", density, f"at most the number of constraints ({n})", owner)
    if score not in SCORES:
        raise check.fail("score", score, "'slack' or 'count'", owner)
    phi = check.nonnegative_finite("margin", margin, owner)
    rho = (b_max + opt * a_max / float(c_.min()) if width is None
           else check.positive_finite("width", width, owner))
    steps, eta = dmw_iterations(n, width=rho, accuracy=accuracy)
    if n_iterations is not None:
        steps = check.positive_int("n_iterations", n_iterations, owner)
        eta = math.sqrt(math.log(max(n, 2)) / steps)
    gen = np.random.default_rng(rng)
    mechanism: Exponential | None = None
    plan: Block | None = None
    if epsilon is not None:
        sens = score_sensitivity(score, density=s, optimum=opt, entry_bound=a_max,
                                 min_cost=float(c_.min()))
        step = calibrate_step_epsilon(epsilon=epsilon, delta=delta, n_iterations=steps,
                                      sensitivity=sens)
        mechanism = step_mechanism(step, sens)
        plan = Repeat(mechanism, steps)
    with Ledger() as ledger:
        result = dense_multiplicative_weights(
            A_, b_, c_, optimum=opt, density=s, n_iterations=steps, learning_rate=eta,
            width=rho, mechanism=mechanism, rng=gen, score=score, margin=phi)
    return result, plan, ledger
