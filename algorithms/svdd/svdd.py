"""Support vector data description (SVDD) on random features, and private SVDD.

Source: J. Park, "Differentially private multi-class classification using kernel supports
and equilibrium points" (SNU master's thesis, 2022), section 4 (eq. 4.1-4.6, Algorithm 1,
Corollary 4.2, Theorem 4.3); SVDD is Tax and Duin, "Support vector data description"
(Machine Learning 54, 2004).

The dual (4.2) with the explicit map phi of eq. 4.5 is::

    max_beta  sum_j beta_j ||phi_j||^2 - ||sum_j beta_j phi_j||^2
    s.t.      0 <= beta_j <= nu,  sum_j beta_j = 1           (nu = C/n, Table 7.1's "C/n")

and the centre is ``a = sum_j beta_j phi(x_j)``. With random Fourier features
``||phi(x)|| = 1`` for every x, so the linear term is the constant 1 and the centre is the
minimum-norm point of the *reduced convex hull* ``{sum_j beta_j phi_j : beta feasible}``.
:func:`svdd_centre` solves that problem in time linear in n for a fixed number of
features (a working set of the lowest-scoring points, solved exactly on it by Lawson and
Hanson's non-negative least squares inside an active set on the cap), and certifies its
answer by the Frank-Wolfe duality gap:
``||a - a*||_2 <= sqrt(2 gap)``.

Every n, including ``n nu < 1``. The constraints can be met only when ``n nu >= 1``;
refusing the other datasets would reveal n, which is private under ADD_REMOVE. privkit
solves, for every n, ``min ||sum_j beta_j phi_j||`` over ``0 <= beta_j <= nu,
sum_j beta_j = min(1, n nu)``: the same problem when ``n nu >= 1``, and otherwise the
single point ``beta = nu``, the centre ``nu sum_j phi_j`` (0 for no rows). It is the dual
of the primal (4.1) with ``R^2 >= 0`` when ``C < 1/n``, where the radius shrinks to 0,
with the mass ``1 - n nu`` that the rows cannot carry put at the origin.

Sensitivity of the centre (privkit's proof; the thesis' Corollary 4.2 states the same L2
bound). For either relation, with ``nu`` a public constant and any n on either dataset,
``||a_D - a_D'||_2 <= 2 nu``. Proof: ``a_D`` minimises the 2-strongly convex
``H_D(a) = ||a||^2 - 2 min_{p in S(D)} p . a`` (by the minimax theorem its minimiser is
the minimum-norm point of the feasible set ``S(D)`` of centres); the difference
``H_D - H_D'`` has (sub)gradient ``-2 (p_D(a) - p_D'(a))`` where ``p_D(a)`` fills weight nu
greedily on the lowest scores ``phi_i . a`` until the mass ``min(1, n nu)`` is placed. One
added row takes a weight ``w <= nu`` and the others' weights only fall, by
``w - (mass_D' - mass_D) <= nu`` in all; a replacement is that and a removal's mirror
image: the weights change by a signed combination whose coefficients sum in absolute
value to at most ``2 nu``, so ``||p_D(a) - p_D'(a)|| <= 2 nu`` (rows have norm 1) and
``H_D - H_D'`` is ``4 nu``-Lipschitz. Adding the two strong convexity inequalities at the
two minimisers gives ``2 ||a_D - a_D'||^2 <= 4 nu ||a_D - a_D'||``. The bound is
attained: with ``n = 1/nu`` every weight is nu and replacing a row by its negative moves
the centre by exactly ``2 nu``.

The thesis derives the bound from Zhang's leave-one-out lemma (its Lemma 4.1), which is
stated for duals with separable constraints (of the form 4.7) and does not cover the
coupling constraint ``sum beta = 1``; the conclusion nevertheless holds, by the argument
above. Its proof replaces the n-th row of a dataset of n rows: REPLACE_ONE. The same bound
holds under ADD_REMOVE when nu is fixed (not ``C/n`` with n changing), so a record
removed by a public rule (a row where the feature map is not defined) leaves a replace-one
pair within the bound as well. privkit declares
the L2 bound ``2 nu + 2 sqrt(2 tol)`` (the second term covers the solver's certified
distance from the exact optimum, ``tol`` being the duality-gap tolerance) and the L1 bound
``sqrt(F)`` times it, as the thesis does (Corollary 4.2: ``2 C kappa sqrt(F) / n``).

Both bounds are attained with ``F = 2`` (:func:`worst_case_rows`); the audit row
``privkit audit private_svdd`` (:mod:`privkit.algorithms.svdd.audit_cases`) uses that pair
and the Laplace likelihood ratio (:func:`laplace_loss`), and certifies about 0.99 of the
claim at epsilon 1 and 4.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   ``audit_case`` moved to the row ``private_svdd`` of
   :mod:`privkit.algorithms.svdd.audit_cases`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, PostProcess

from .._audit_case import TranscriptCase
from .._certified import certified
from .._private_rows import private_rows
from .._queries import query_rows
from .._spend import charge
from ..kernels.random_features import RandomFourierFeatures
from ._svdd_dual import SVDDSolution, check_nu, svdd_centre

__all__ = [
    "PrivateSVDD",
    "SVDDSolution",
    "centre_mechanism",
    "centre_sensitivity",
    "laplace_loss",
    "svdd_centre",
    "worst_case_rows",
]

_NOISES = ("laplace", "l2_laplace", "gaussian")


# -- sensitivity and mechanisms ------------------------------------------------------------


def centre_sensitivity(nu: float, *, norm: Norm | str = Norm.L2,
                       relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
                       n_components: int = 400, tol: float = 1e-8,
                       paper: bool = False) -> Sensitivity:
    """The sensitivity of the SVDD centre on random Fourier features.

    L2: ``2 nu + 2 sqrt(2 tol)`` under either relation (see the module docstring; the
    thesis' Corollary 4.2 gives ``2 C kappa / n = 2 nu`` with kappa = 1, REPLACE_ONE).
    L1: ``sqrt(F)`` times the L2 bound (Corollary 4.2's last step). With ``paper=True`` the
    thesis' figure exactly, ``2 nu`` (L2) or ``2 nu sqrt(F)`` (L1), without the solver term.
    """
    owner = "centre_sensitivity"
    v = check_nu(nu, owner)
    n_norm = Norm.parse(norm, owner=owner)
    rel = Neighbouring.parse(relation, owner=owner)
    f = check.positive_int("n_components", n_components, owner)
    l2 = 2.0 * v * RandomFourierFeatures.norm_bound
    if not paper:
        l2 += 2.0 * math.sqrt(2.0 * check.positive_finite("tol", tol, owner))
    if n_norm is Norm.L2:
        value = l2
    elif n_norm is Norm.L1:
        value = math.sqrt(f) * l2
    else:
        value = l2
    return Sensitivity(value=value, norm=n_norm, relation=rel)


def centre_mechanism(noise: str, *, epsilon: float, delta: float, sensitivity_l2: Sensitivity,
                     n_components: int) -> Block:
    """The additive mechanism on the centre for a (epsilon, delta) target.

    ``"laplace"``: coordinate-wise Laplace with L1 sensitivity ``sqrt(F) Delta_2`` (the
    thesis' Algorithm 1); ``"l2_laplace"``: density ``exp(-eps ||z|| / Delta_2)``, pure
    (Chaudhuri et al. 2011); ``"gaussian"``: the analytic Gaussian (Balle, Wang 2018) for
    ``(epsilon, delta)``. The last two use the L2 bound directly and avoid the ``sqrt(F)``.
    """
    from privkit.mechanisms import Gaussian, L2Laplace, Laplace

    owner = "centre_mechanism"
    if noise not in _NOISES:
        raise check.fail("noise", noise, f"one of {_NOISES}", owner)
    if noise == "laplace":
        l1 = Sensitivity(value=math.sqrt(n_components) * sensitivity_l2.value, norm=Norm.L1,
                         relation=sensitivity_l2.relation)
        return Laplace.for_epsilon(epsilon, sensitivity=l1)
    if noise == "l2_laplace":
        return L2Laplace.for_epsilon(epsilon, sensitivity=sensitivity_l2)
    if not 0.0 < delta < 1.0:
        raise check.fail("delta", delta, "a number in (0, 1) for noise='gaussian'", owner)
    return Gaussian.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=sensitivity_l2)


def noise_scale(block: Any) -> float:
    """A mechanism's absolute noise scale under the old (``scale``/``sigma``) or the new
    (``noise_scale``) field names; isolated so the core rename touches one line."""
    for name in ("noise_scale", "scale", "sigma"):
        if hasattr(block, name):
            return float(getattr(block, name))
    raise AttributeError(f"{block!r} has no noise scale")


def clip_to_ball(v: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Project onto the L2 ball of the public radius (post-processing, Theorem 4.3)."""
    norm = float(np.linalg.norm(v))
    out: NDArray[np.float64] = v if norm <= radius else v * (radius / norm)
    return out


# -- the estimator ---------------------------------------------------------------------------


class PrivateSVDD(BaseEstimator):  # type: ignore[misc]
    """Private SVDD: Laplace (or L2) noise on the centre in feature space (Algorithm 1).

    Parameters
    ----------
    epsilon, delta : float
        The budget; ``delta`` is used only by ``noise="gaussian"``.
    nu : float
        The cap on each dual weight, Table 7.1's ``C/n``; a public constant. Any n fits,
        ``n nu < 1`` included (module docstring).
    gamma : float
        RBF parameter.
    n_components : int
        F, the number of random features (400 in the thesis; at most
        :attr:`RandomFourierFeatures.max_components`).
    noise : {"laplace", "l2_laplace", "gaussian"}
        ``"laplace"`` is the thesis' (L1, pays ``sqrt(F)``); the other two calibrate to the
        L2 bound directly.
    relation : {"replace_one", "add_remove"}
        The thesis' proof is REPLACE_ONE; the same L2 bound holds under ADD_REMOVE.
    clip_centre : bool
        Project the released centre onto the unit ball (Theorem 4.3; post-processing).
    tol : float
        The solver's duality-gap tolerance, charged in the sensitivity.
    random_state : int, Generator or None

    Attributes
    ----------
    centre_ : ndarray (F,)
        The released, noisy (and clipped) centre.
    features_ : RandomFourierFeatures
        The public feature map.
    plan_, ledger_, guarantee_, paper_claim_, sensitivity_, n_features_in_

    Public and private
    ------------------
    Public: every constructor parameter, the number of features (the schema), and under
    ``relation="replace_one"`` the number of rows passed (an empty X is refused there,
    and fits under ``"add_remove"``). Private: the rows' values, and their number under
    ADD_REMOVE: nothing published depends on n (the plan, the sensitivity and every
    attribute are fixed by the parameters; the solver handles every n). A row where the
    feature map is not defined (a non-finite entry, or entries so large that a product
    ``<w_j, x>`` overflows) is removed, silently: a per-record public rule, and the
    centre's bound holds for a removal under either relation (module docstring). The
    queries of :meth:`score_samples` are not private: they are validated strictly.

    Notes
    -----
    ``paper_claim_`` is Theorem 4.3's ``PureDP(epsilon)`` (REPLACE_ONE) with the L1
    sensitivity ``2 nu sqrt(F)``; privkit's own proof gives the same L2 bound (module
    docstring), so the claim holds for ``noise="laplace"``, up to the solver term that
    privkit adds. The L2 mechanisms reach the same guarantee with less noise: the expected
    noise norm is about ``sqrt(2) F Delta_2 / eps`` for coordinate Laplace, ``F Delta_2 / eps``
    for L2-Laplace and ``sqrt(F) sigma`` for the Gaussian.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 0.0, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400, noise: str = "laplace",
                 relation: str = "replace_one", clip_centre: bool = True, tol: float = 1e-8,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.nu = nu
        self.gamma = gamma
        self.n_components = n_components
        self.noise = noise
        self.relation = relation
        self.clip_centre = clip_centre
        self.tol = tol
        self.random_state = random_state

    def _validate(self, n_features: int | None) -> Block:
        """Every public parameter, before any data is touched; the centre's block."""
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check_nu(self.nu, owner)
        RandomFourierFeatures.check_parameters(self.n_components, self.gamma, n_features,
                                               owner)
        check.instance("clip_centre", self.clip_centre, bool, owner)
        return centre_mechanism(self.noise, epsilon=self.epsilon, delta=self.delta,
                                sensitivity_l2=self.sensitivity(),
                                n_components=self.n_components)

    def sensitivity(self) -> Sensitivity:
        """The declared L2 sensitivity of the centre under ``relation``."""
        return centre_sensitivity(self.nu, norm=Norm.L2, relation=self.relation,
                                  n_components=self.n_components, tol=self.tol)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """One additive block on the centre; the map is public, the clipping free. The
        block depends on no ``n_samples`` (accepted for the common signature)."""
        check.positive_int("n_features", n_features, "plan")
        return self._validate(n_features)

    def fit(self, X: Any, y: Any = None, *, budget_filter: Any = None) -> PrivateSVDD:
        """Release the noisy centre of X's rows (``y`` is ignored); ``budget_filter``
        (a :class:`~privkit.BudgetFilter`) is charged the plan before any noise."""
        self._validate(None)
        relation = Neighbouring.parse(self.relation, owner=type(self).__name__)
        A = private_rows(X, owner=type(self).__name__, estimator=self,
                         min_rows=0 if relation is Neighbouring.ADD_REMOVE else 1)
        block = self._validate(A.shape[1])
        charge(self, block, budget_filter,
               delta=self.delta if self.noise == "gaussian" else None)
        rng = np.random.default_rng(self.random_state)
        self.features_ = RandomFourierFeatures(self.n_components, self.gamma,
                                               int(rng.integers(2**63))).fit(A)
        Phi, _ = self.features_.transform_defined(A)
        solution = svdd_centre(Phi, self.nu, tol=self.tol)
        with Ledger() as ledger:
            noisy = block.release(solution.centre, rng=rng)  # type: ignore[union-attr]
        radius = RandomFourierFeatures.norm_bound
        self.centre_ = clip_to_ball(noisy, radius) if self.clip_centre else noisy
        self.plan_ = PostProcess(block, "clip the centre to the unit ball (Theorem 4.3)")
        self.ledger_ = ledger
        self.sensitivity_ = self.sensitivity()
        delta = self.delta if self.noise == "gaussian" else 0.0
        self.guarantee_ = certified(block, delta=delta)
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def score_samples(self, X: Any) -> NDArray[np.float64]:
        """The private support function ``||phi(x) - a_hat||^2`` (eq. 4.6) at the query
        rows X (not private: a row with a non-finite entry, or where the map is not
        defined, is refused)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "centre_")
        Z = self.features_.transform_queries(query_rows(self, X, "score_samples"))
        out: NDArray[np.float64] = 1.0 - 2.0 * Z @ self.centre_ + self.centre_ @ self.centre_
        return out

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """A fit of a few hundred microseconds: 24 rows of 2 features, F = 4, nu = 1/8,
        Laplace noise at epsilon 1, under ADD_REMOVE (so that the auditor's added and
        removed records test that nothing depends on n). There is no data bound (the map
        sends every row to the unit sphere): ``at_bound`` and ``beyond_bound`` are rows
        far out, the second so far that its products ``<w_j, x>`` may overflow (then it
        is removed, by the stated rule). Unsupervised: ``declare_classes`` is ignored."""
        rng = np.random.default_rng(0)
        X = rng.normal(size=(24, 2))
        estimator = cls(epsilon=1.0, nu=0.125, gamma=0.5, n_components=4,
                        relation="add_remove", random_state=0)
        return TranscriptCase(
            estimator=estimator, X=X, y=None, relation=Neighbouring.ADD_REMOVE,
            epsilon=1.0, delta=0.0, record=np.array([0.5, -0.5]),
            at_bound=np.array([1e6, -1e6]), beyond_bound=np.array([1e300, -1e300]),
            probes=np.array([[0.0, 0.0], [1.0, 1.0], [-2.0, 0.5], [3.0, -3.0]]),
            worst_case=None)


# -- the worst-case pair and its optimal statistic -----------------------------------------


def laplace_loss(outputs: NDArray[np.float64], centre_first: NDArray[np.float64],
                 centre_second: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """The privacy loss ``log p_D(y) / p_D'(y)`` of coordinate-wise Laplace noise of scale
    ``scale`` around two centres: ``(||y - c_D'||_1 - ||y - c_D||_1) / scale`` (the
    Neyman-Pearson optimal statistic for the pair). Rounded to 9 digits, so that the
    plateau at ``+-||c_D - c_D'||_1 / scale`` (every coordinate beyond both centres) is one
    value whatever the rounding errors of the two inputs' arithmetic."""
    y = np.asarray(outputs, dtype=np.float64)
    loss = (np.abs(y - centre_second).sum(axis=-1)
            - np.abs(y - centre_first).sum(axis=-1)) / scale
    out: NDArray[np.float64] = np.round(loss, 9)
    return out


def worst_case_rows(features: RandomFourierFeatures) -> tuple[NDArray[np.float64],
                                                            NDArray[np.float64]]:
    """A REPLACE_ONE pair attaining Corollary 4.2's L1 bound for two features (F = 2).

    With one frequency w (1-D data) the map is ``phi(x) = (cos wx, sin wx)``. Take
    ``x = pi / (4 w)`` and ``x' = x + pi / w``, so ``phi(x') = -phi(x)`` and both
    coordinates have magnitude ``1/sqrt 2``. With ``nu = 1/2`` and two rows
    ``D = (x, x)``, ``D' = (x, x')`` the centres are ``phi(x)`` and 0: their L2 distance
    is ``2 nu = 1`` (the L2 bound) and their L1 distance ``sqrt 2 = sqrt(F) 2 nu`` (the
    L1 bound): the Laplace mechanism's privacy loss reaches its epsilon (up to the
    solver term ``2 sqrt(2 tol)`` in the declared sensitivity).
    """
    w = float(features.frequencies_[0, 0])
    x = math.pi / (4.0 * w)
    first = np.array([[x], [x]])
    second = np.array([[x], [x + math.pi / w]])
    return first, second
