"""The LP-SVM trained by private dense multiplicative weights (van der Reijden 2019).

P. van der Reijden, "Solving linear programs to train SVMs under differential privacy",
Erasmus University Rotterdam master's thesis, 2019: the linear-programming SVM (eq. 4-5,
after Mangasarian 1998) solved by the constraint-private dense multiplicative weights of
Hsu, Roth, Roughgarden, Ullman 2014 ("Privately solving linear programs", ICALP 2014),
thesis Algorithm 3, and its alternative quality score (section 3.5, eq. 13-14). The
solver itself is :mod:`privkit.algorithms.private_lp`.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from privkit import _validation as check
from privkit.guarantees import ZCDP, ApproxDP, BoundedRange, Guarantee
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed, Repeat, Sequential

from ._losses import MarginLoss
from .erm import LinearModel, ObjectivePerturbationClassifier, clipped_rows, solve_erm
from .private_lp import (
    calibrate_step_epsilon,
    dense_multiplicative_weights,
    dmw_iterations,
    score_sensitivity,
    step_mechanism,
)

__all__ = ["LPSVMClassifier", "audit_case", "hard_margin_lp", "paper_step_epsilon",
           "soft_margin_lp", "solve_lp_svm"]

R = Neighbouring.REPLACE_ONE


def soft_margin_lp(X: NDArray[np.float64], y: NDArray[np.float64], C: float
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(A, b, c)`` of the soft-margin LP-SVM in standard form (thesis eq. 4-5).

    Variables ``x = [w+, w-, xi]`` (all >= 0); minimise ``sum(w+ + w-) + C sum(xi)``
    subject to ``y_i x_i.(w+ - w-) >= 1 - xi_i``, written ``A x <= b`` with
    ``A = -[diag(y) X, -diag(y) X, I_n]`` and ``b = -1``.
    """
    n, p = X.shape
    YX = y[:, None] * X
    A = -np.hstack([YX, -YX, np.eye(n)])
    c = np.concatenate([np.ones(2 * p), np.full(n, C)])
    return A, -np.ones(n), c


def hard_margin_lp(X: NDArray[np.float64], y: NDArray[np.float64]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(A, b, c)`` of the hard-margin LP the thesis hands to DMW after OPT (section 2.5):
    ``A = -[diag(y) X, -diag(y) X]``, ``b = -1``, ``c = 1`` (variables ``[w+, w-]``)."""
    p = X.shape[1]
    YX = y[:, None] * X
    return -np.hstack([YX, -YX]), -np.ones(X.shape[0]), np.ones(2 * p)


def solve_lp_svm(X: NDArray[np.float64], y: NDArray[np.float64], C: float = 1.0
                 ) -> tuple[NDArray[np.float64], float]:
    """The non-private soft-margin LP-SVM (thesis eq. 4) solved by HiGHS: ``(w, OPT)``.

    The reference against which the LP formulation is checked; uses
    ``scipy.optimize.linprog(method="highs")`` on :func:`soft_margin_lp` (sparse ``A``).
    """
    from scipy import optimize, sparse

    n, p = X.shape
    YX = y[:, None] * X
    A = -sparse.hstack([sparse.csr_matrix(YX), sparse.csr_matrix(-YX),
                        sparse.identity(n, format="csr")], format="csr")
    c = np.concatenate([np.ones(2 * p), np.full(n, C)])
    result = optimize.linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the LP-SVM: {result.message}")
    x: NDArray[np.float64] = result.x
    return x[:p] - x[p:2 * p], float(result.fun)


def paper_step_epsilon(epsilon: float, n_iterations: int, delta: float) -> float:
    """The thesis's per-step budget, Algorithm 3 with its Theorem 1:
    ``eps' = eps / sqrt(8 T log(1/delta))`` (the inverse of
    :func:`privkit.composition.reijden_composition_epsilon`)."""
    owner = "paper_step_epsilon"
    eps = check.positive_finite("epsilon", epsilon, owner)
    steps = check.positive_int("n_iterations", n_iterations, owner)
    d = check.open_unit("delta", delta, owner)
    return eps / math.sqrt(8.0 * steps * math.log(1.0 / d))


class LPSVMClassifier(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Linear SVM from the LP formulation, solved by private dense multiplicative weights.

    Thesis Algorithm 3: OPT ``= ||w_obj||_1`` from objective perturbation (Algorithm 2);
    the hard-margin LP (:func:`hard_margin_lp`) with width ``rho = OPT + 1`` (eq. 11);
    ``T = 36 rho^2 log(n) / alpha^2`` iterations, ``eta = sqrt(log(n) / T)``, weights
    initialised to ``s / n``, density ``s``; at each iteration the exponential mechanism
    picks a vertex ``OPT e_j`` (``j < 2p``) by its score, whose sensitivity is
    ``3 OPT / s`` (eq. 12) or, for ``quality="count"``, ``2 / s`` (eq. 14); the output is
    ``w = x_bar[:p] - x_bar[p:]`` for the average ``x_bar`` of the chosen vertices.

    Parameters
    ----------
    epsilon : float or None, default 1.0
        The TOTAL budget, Algorithm 2 included. ``None``: the non-private reference
        (non-private OPT from the same Huber objective, argmax instead of the exponential
        mechanism, thesis section 3.3); no guarantee.
    delta : float or None, default None
        ``None`` means ``1 / n`` (the thesis's choice; section 2.2 itself notes that
        ``delta < 1/n`` is the usual requirement).
    density : float, default 0.75
        ``s / n``, in (0, 1]; the thesis uses ``s = 3n/4``.
    accuracy : float, default 200
        alpha (thesis section 3.2).
    quality : {"slack", "count"}, default "slack"
        The quality score: Hsu et al.'s weighted slack, or the thesis's weighted count
        of constraints within ``margin`` (phi) of satisfied (section 3.5, eq. 13).
    margin : float, default 0.0
        phi, for ``quality="count"``.
    accounting : {"privkit", "paper"}, default "privkit"
        How the budget is split and the per-step epsilon set (see Notes).
    opt_share : float, default 0.5
        With ``accounting="privkit"``: the fraction of ``epsilon`` given to Algorithm 2.
    regularization, huber_h : float
        Lambda and h of Algorithm 2 (Huber-loss SVM).
    row_norm_bound : float, default 1.0
        A public bound on the rows' L2 norm; rows are divided by it and clipped onto it
        (``clip=True``) or refused, so that ``||x||_2 <= 1`` and ``|x_j| <= 1``, as the
        thesis's analysis (section 2.1) requires.
    n_iterations : int or None
        A public T instead of the formula (which depends on the private OPT).
    max_iterations : int or None
        A public cap on the formula's T. Not in the thesis, but at small epsilon OPT (an
        L1 norm of a noisy model) is large and ``T ~ OPT^2`` runs into the millions.
    random_state : int, Generator or None

    Attributes
    ----------
    coef_, intercept_, classes_
        The linear model (no intercept: the LP has none).
    opt_, n_iterations_, learning_rate_, density_, delta_, score_sensitivity_
        OPT, T, eta, s, delta and the score's sensitivity, as used.
    step_epsilon_, paper_step_epsilon_
        The per-step epsilon used, and the thesis's ``eps / sqrt(8 T log(1/delta))`` at the
        same T and total (for comparison).
    opt_epsilon_
        Algorithm 2's budget.
    plan_, ledger_, guarantee_, paper_claim_
        What ran (``Sequential(ObjectivePerturbation, Repeat(Exponential, T))``), the
        ledger (matching ``plan_``), privkit's guarantee for it, and the thesis's claim
        ``ApproxDP(epsilon, delta)``.

    Notes
    -----
    **Neighbouring.** REPLACE_ONE: each row is one constraint, and ``n`` is public.
    Eq. 12's bound ``3 OPT / s`` holds for a replaced row: the dense projections of the two
    weight vectors, which differ in that row only, are within ``2/s`` in L1 (Hsu et al.,
    Lemma 3.5) and the row's own weight is at most ``1/s``.

    **What the thesis claims, and what privkit finds.** The thesis sets
    ``eps' = eps / sqrt(8 T log(1/delta))`` (its Theorem 1, a simplification of Dwork,
    Rothblum, Vadhan 2010; :func:`privkit.composition.reijden_composition_epsilon`) and claims
    (eps, delta) for Algorithm 3; but OPT comes from Algorithm 2, run at its own epsilon,
    which the claim leaves out. With ``accounting="paper"`` privkit runs exactly that
    (Algorithm 2 at ``epsilon``, the T steps at the thesis's eps') and ``guarantee_`` is
    what it really spends: more than ``epsilon`` (Algorithm 2's ``epsilon`` plus what the
    T steps cost, which privkit certifies at well under ``epsilon`` because every step is
    an exponential mechanism, whose bounded-range profile composes far better than pure
    epsilon). ``paper_claim_`` keeps the thesis's figure, which does not hold.

    With ``accounting="privkit"`` the total is split: Algorithm 2 gets
    ``opt_share * epsilon`` (pure DP), and the per-step epsilon is the largest for which
    privkit's tightest accountant certifies the T steps within the rest at ``delta``
    (:func:`~privkit.algorithms.private_lp.calibrate_step_epsilon`). Because T is a
    function of OPT, Algorithm 2's *output*, the steps that follow are chosen adaptively;
    privkit therefore adds the two stages' epsilons (basic composition, valid for
    adaptively chosen mechanisms: Dwork, Roth 2014, Theorem 3.16) rather than composing
    the realised plan as if T had been fixed in advance. With a public ``n_iterations``
    nothing is adaptive, and the calibration runs against the tightest accountant on the
    whole plan, Algorithm 2 included. Either way ``guarantee_`` is (epsilon, delta).

    **Tighter than eq. 12.** Replacing one row moves the other rows' projected weights all
    in one direction (the projection's ``zeta`` is monotone), which bounds the slack
    score's change by ``2 OPT / s``; privkit keeps the thesis's ``3 OPT / s``.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.lp_svm import LPSVMClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> svm = LPSVMClassifier(epsilon=2.0, delta=1e-5, random_state=0).fit(X, y)
    >>> svm.ledger_.compare(svm.plan_).matches, round(svm.guarantee_.epsilon, 6)
    (True, 2.0)
    """

    def __init__(self, *, epsilon: float | None = 1.0, delta: float | None = None,
                 density: float = 0.75, accuracy: float = 200.0, quality: str = "slack",
                 margin: float = 0.0, accounting: str = "privkit", opt_share: float = 0.5,
                 regularization: float = 1e-3, huber_h: float = 0.5,
                 row_norm_bound: float = 1.0, clip: bool = True,
                 n_iterations: int | None = None, max_iterations: int | None = None,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.density = density
        self.accuracy = accuracy
        self.quality = quality
        self.margin = margin
        self.accounting = accounting
        self.opt_share = opt_share
        self.regularization = regularization
        self.huber_h = huber_h
        self.row_norm_bound = row_norm_bound
        self.clip = clip
        self.n_iterations = n_iterations
        self.max_iterations = max_iterations
        self.random_state = random_state

    # -- parameters and plan ----------------------------------------------------------------

    def _validated(self, n_samples: int) -> dict[str, Any]:
        owner = type(self).__name__
        n = check.positive_int("n_samples", n_samples, owner)
        eps = None if self.epsilon is None else check.positive_finite("epsilon", self.epsilon,
                                                                       owner)
        delta = 1.0 / n if self.delta is None else check.open_unit("delta", self.delta, owner)
        share = check.positive_finite("density", self.density, owner)
        if share > 1.0:
            raise check.fail("density", self.density, "a fraction s/n in (0, 1]", owner)
        if self.quality not in ("slack", "count"):
            raise check.fail("quality", self.quality, "'slack' or 'count'", owner)
        if self.accounting not in ("privkit", "paper"):
            raise check.fail("accounting", self.accounting, "'privkit' or 'paper'", owner)
        opt_share = check.open_unit("opt_share", self.opt_share, owner)
        check.positive_finite("accuracy", self.accuracy, owner)
        check.nonnegative_finite("margin", self.margin, owner)
        check.positive_finite("regularization", self.regularization, owner)
        check.positive_finite("huber_h", self.huber_h, owner)
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        check.instance("clip", self.clip, bool, owner)
        if self.n_iterations is not None:
            check.positive_int("n_iterations", self.n_iterations, owner)
        if self.max_iterations is not None:
            check.positive_int("max_iterations", self.max_iterations, owner)
        opt_eps = None
        if eps is not None:
            opt_eps = eps if self.accounting == "paper" else opt_share * eps
        return {"n": n, "epsilon": eps, "delta": delta, "s": share * n, "opt_epsilon": opt_eps}

    def _opt_model(self, opt_epsilon: float) -> ObjectivePerturbationClassifier:
        return ObjectivePerturbationClassifier(
            epsilon=opt_epsilon, loss="huber", huber_h=self.huber_h,
            regularization=self.regularization, row_norm_bound=1.0, fit_intercept=False)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The blocks ``fit`` will run, before any data is seen.

        Algorithm 2's block, then the DMW stage. T and the step's sensitivity depend on
        OPT, which is only known after Algorithm 2 has run, so the DMW stage appears as a
        :class:`~privkit.Claimed` block holding the guarantee that privkit certifies for
        every T: ``ApproxDP(epsilon - opt_epsilon, delta)`` (``accounting="privkit"``), or
        ``ZCDP(epsilon^2 / (64 log(1/delta)))`` (``accounting="paper"``: T steps of an
        eps'-bounded-range mechanism are ``T eps'^2 / 8``-zCDP, Cesar, Rogers 2021,
        whatever T is). With a public ``n_iterations`` (privkit accounting) the stage is
        ``Repeat(Claimed(BoundedRange(eps')), T)``.
        """
        owner = "plan"
        v = self._validated(n_samples)
        check.positive_int("n_features", n_features, owner)
        if check.positive_int("n_classes", n_classes, owner) != 2:
            raise check.fail("n_classes", n_classes, "2 (the LP-SVM is binary)", owner)
        if v["epsilon"] is None:
            raise check.fail("epsilon", None, "a positive budget (epsilon=None is the "
                             "non-private reference, which has no plan)", owner)
        first = self._opt_model(v["opt_epsilon"]).plan(n_samples=v["n"], n_features=n_features)
        label = "dense multiplicative weights (T exponential-mechanism steps, T set by OPT)"
        eps, delta = v["epsilon"], v["delta"]
        if self.accounting == "paper":
            rho = eps * eps / (64.0 * math.log(1.0 / delta))
            return Sequential(first, Claimed(ZCDP(rho=rho), relation=R, label=label))
        if self.n_iterations is not None:
            step = calibrate_step_epsilon(eps, delta, self.n_iterations, prefix=first)
            stage = Claimed(BoundedRange(eta=step), relation=R, label="DMW step")
            return Sequential(first, Repeat(stage, self.n_iterations))
        rest = ApproxDP(epsilon=eps - v["opt_epsilon"], delta=delta)
        return Sequential(first, Claimed(rest, relation=R, label=label))

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> LPSVMClassifier:
        """Fit; afterwards ``coef_``, ``plan_``, ``ledger_``, ``guarantee_``, ``paper_claim_``."""
        owner = type(self).__name__
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise check.fail("y", f"{self.classes_.size} classes", "exactly 2 classes "
                             "(the LP-SVM is binary)", owner)
        n, p = X.shape
        v = self._validated(n)
        Z = clipped_rows(X, self.row_norm_bound, clip=self.clip, owner=owner)
        signs = np.where(y == self.classes_[1], 1.0, -1.0)
        rng = np.random.default_rng(self.random_state)
        eps, delta, s = v["epsilon"], v["delta"], v["s"]
        with Ledger() as ledger:
            if eps is None:
                w_obj = solve_erm(Z, signs, MarginLoss("huber", self.huber_h),
                                  self.regularization)
                first: Block | None = None
            else:
                opt_model = self._opt_model(v["opt_epsilon"]).set_params(random_state=rng)
                w_obj = opt_model.fit(Z, signs).coef_[0]
                first = opt_model.plan_
            opt = max(float(np.abs(w_obj).sum()), 1e-12)
            A, b, c = hard_margin_lp(Z, signs)
            width = opt + 1.0  # eq. 11
            steps, eta = dmw_iterations(n, width=width, accuracy=self.accuracy)
            if self.max_iterations is not None:
                steps = min(steps, self.max_iterations)
            if self.n_iterations is not None:
                steps = self.n_iterations
            eta = math.sqrt(math.log(max(n, 2)) / steps)
            sens = score_sensitivity(self.quality, density=s, optimum=opt)
            mechanism = None
            if eps is not None:
                assert first is not None
                if self.accounting == "paper":
                    step = paper_step_epsilon(eps, steps, delta)
                elif self.n_iterations is not None:
                    step = calibrate_step_epsilon(eps, delta, steps, sensitivity=sens,
                                                  prefix=first)
                else:
                    step = calibrate_step_epsilon(eps - v["opt_epsilon"], delta, steps,
                                                  sensitivity=sens)
                mechanism = step_mechanism(step, sens)
            result = dense_multiplicative_weights(
                A, b, c, optimum=opt, density=s, n_iterations=steps, learning_rate=eta,
                width=width, mechanism=mechanism, rng=rng, score=self.quality,
                margin=self.margin)
        self.coef_ = ((result.x[:p] - result.x[p:]) / self.row_norm_bound)[None, :]
        self.intercept_ = np.zeros(1)
        self.opt_, self.n_iterations_, self.learning_rate_ = opt, steps, eta
        self.density_, self.delta_, self.score_sensitivity_ = s, delta, sens
        self.opt_epsilon_ = v["opt_epsilon"]
        self.ledger_ = ledger
        self.choices_ = result.choices
        if eps is None or mechanism is None or first is None:
            self.step_epsilon_ = self.paper_step_epsilon_ = math.inf
            self.plan_ = self.guarantee_ = self.paper_claim_ = None
            return self
        self.step_epsilon_ = step
        self.paper_step_epsilon_ = paper_step_epsilon(eps, steps, delta)
        self.plan_ = Sequential(first, Repeat(mechanism, steps))
        self.guarantee_ = self._guarantee(first, Repeat(mechanism, steps), delta)
        self.paper_claim_ = ApproxDP(epsilon=eps, delta=delta)
        return self

    def _guarantee(self, first: Block, steps: Block, delta: float) -> Guarantee:
        """privkit's guarantee for what ran: the tightest accountant on the whole plan when
        T was public; otherwise Algorithm 2's epsilon plus the tightest epsilon of the T
        steps (basic composition across the adaptive choice of T)."""
        from privkit import BasicAccountant, tightest

        if self.n_iterations is not None:
            total = tightest(Sequential(first, steps), delta=delta).epsilon
            return ApproxDP(epsilon=total, delta=delta)
        stage = ApproxDP(epsilon=tightest(steps, delta=delta).epsilon, delta=delta)
        plan = Sequential(first, Claimed(stage, relation=R, label="DMW steps"))
        return ApproxDP(epsilon=BasicAccountant().epsilon(plan, delta=delta), delta=delta)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.classifier_tags.multi_class = False
        return tags


#: Threat model of :func:`audit_case`, printed by ``privkit audit``.
LP_SVM_THREAT = (
    "white box, score insertion (the exponential-mechanism analogue of gradient insertion, "
    "Nasr et al. 2023): every step's chosen vertex is observed; on D' the adversary's "
    "record moves that step's vertex scores by the declared L-infinity sensitivity "
    "3 OPT/s, up for the vertex least likely on D and down for the others; the other "
    "rows' scores and the multiplicative weights are the DMW run's on D (computed once "
    "per history). A real row with its label flipped moves the first step's scores by "
    "2 OPT p_0 = 1/3 of the declared bound here (p uniform over 6 rows); that black-box "
    "pair certified 0.17 of the claim")


def audit_case(epsilon: float, delta: float = 1e-5) -> Any:
    """The DMW iterations of the LP-SVM under score insertion, for ``privkit audit``.

    Hsu, Roth, Roughgarden, Ullman 2014 ("Privately solving linear programs"), Algorithm
    DenseMultiplicativeWeights: each iteration picks a vertex ``x_j = OPT e_j`` of the
    cost polytope by the exponential mechanism on the scores ``-(p . A_j) OPT`` of the
    current dense distribution ``p`` over constraints, then updates the weights of the
    constraints by their losses. The privacy analysis (privkit's accountant on
    ``Repeat(Exponential, T)``) only assumes that one row moves each step's scores by at
    most the declared sensitivity ``3 OPT / s`` in L-infinity (:func:`score_sensitivity`),
    whatever the history. So, as gradient insertion audits DP-SGD's accounting (Nasr,
    Hayes, Steinke, Balle, Tramer, Jagielski, Carlini, Terzis 2023), the pair here is
    the DMW run on a data set D against the same run with each step's scores moved by
    exactly that bound: up for the vertex least likely on D (vertex ``w-_0``, whose score
    is lowest), down for the others, which maximises that vertex's likelihood ratio
    (McSherry, Talwar 2007). Every step of D' is then an exponential mechanism at the
    declared sensitivity from D's, so the bound must stay below the claim.

    Six rows ``y x = (1, 0)``, two features (four vertices), OPT = 1, T = 2, density
    s = 3, slack score. The weights depend only on the history of choices (and on D), so
    they are computed once per history and the draws of many runs are made at once. The
    output is the history of chosen vertices (16 outcomes, audited by a histogram of
    likelihood ratios). Claim: privkit's tightest epsilon for ``Repeat(Exponential, 2)``
    at ``delta``, calibrated to ``epsilon``.
    """
    from privkit import tightest
    from privkit.audits.pairs import NeighbouringPair
    from privkit.audits.registry import AuditCase

    from .private_lp import dense_projection

    n, steps, s, opt = 6, 2, 3.0, 1.0
    sens = score_sensitivity("slack", density=s, optimum=opt)
    step = calibrate_step_epsilon(epsilon, delta, steps, sensitivity=sens)
    mechanism = step_mechanism(step, sens)
    eta = math.sqrt(math.log(n) / steps)
    rows = np.tile([1.0, 0.0], (n, 1))  # rows y_i x_i
    A, b, _ = hard_margin_lp(rows, np.ones(n))
    m = A.shape[1]

    def scores(log_weights: NDArray[np.float64], inserted: bool) -> NDArray[np.float64]:
        p = dense_projection(np.exp(log_weights - log_weights.max()), s)
        u: NDArray[np.float64] = -(p @ A) * opt
        if inserted:  # the record at the bound: the rarest vertex up, the others down
            target = int(np.argmin(u))
            u = u - sens
            u[target] += 2.0 * sens
        return u

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        inserted = bool(data["inserted"])
        weights: dict[int, NDArray[np.float64]] = {0: np.zeros(n)}
        code = np.zeros(size, dtype=np.int64)
        for _ in range(steps):
            choice = np.empty(size, dtype=np.int64)
            for key in np.unique(code):
                here = code == key
                choice[here] = mechanism.simulate(scores(weights[int(key)], inserted),
                                                  rng=rng, size=int(here.sum()))
            code = code * m + choice
            grown = {}
            for key in np.unique(code):
                parent, j = divmod(int(key), m)
                slack = b - A[:, j] * opt
                loss = np.clip(slack / (2.0 * (opt + 1.0)) + 0.5, 0.0, 1.0)
                grown[int(key)] = weights[parent] - eta * loss
            weights = grown
        return code

    claim = tightest(Repeat(mechanism, steps), delta=delta).epsilon
    pair = NeighbouringPair(first={"inserted": False}, second={"inserted": True},
                            relation=R, description="score insertion at the declared "
                            "sensitivity, every step")
    return AuditCase(system, pair, claim, delta, threat_model=LP_SVM_THREAT)
