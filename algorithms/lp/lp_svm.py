"""The LP-SVM trained by private dense multiplicative weights (van der Reijden 2019).

P. van der Reijden, "Solving linear programs to train SVMs under differential privacy",
Erasmus University Rotterdam master's thesis, 2019: the linear-programming SVM (eq. 4-5,
after Mangasarian 1998) solved by the constraint-private dense multiplicative weights of
Hsu, Roth, Roughgarden, Ullman 2014 ("Privately solving linear programs", ICALP 2014),
thesis Algorithm 3, and its alternative quality score (section 3.5, eq. 13-14). The
solver itself is :mod:`privkit.algorithms.lp.private_lp`.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.guarantees import ZCDP, ApproxDP, BoundedRange, Guarantee
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed, Repeat, Sequential

from .._audit_case import TranscriptCase
from .._bounds import clipped_rows
from .._labels import (
    LabelSet,
    declared_classes,
    label_counts,
    label_release,
    release_label_set,
    total_claim,
)
from .._private_rows import private_labels, private_rows
from .._spend import charge
from ..linear._linear import LinearModel, transcript_fixture
from ..linear._losses import MarginLoss
from ..linear._solvers import solve_erm
from ..linear.erm import ObjectivePerturbationClassifier
from ._lp_svm_forms import hard_margin_lp as hard_margin_lp
from ._lp_svm_forms import soft_margin_lp as soft_margin_lp
from ._lp_svm_forms import solve_lp_svm as solve_lp_svm
from .private_lp import (
    calibrate_step_epsilon,
    dense_multiplicative_weights,
    dmw_iterations,
    score_sensitivity,
    step_mechanism,
)

__all__ = ["LPSVMClassifier", "hard_margin_lp", "paper_score_sensitivity",
           "paper_step_epsilon", "soft_margin_lp", "solve_lp_svm"]

R = Neighbouring.REPLACE_ONE


#: Fitted attributes that describe the input (set by scikit-learn's checks), kept on refit.
_SCHEMA = ("n_features_in_", "feature_names_in_")


@functools.lru_cache(maxsize=256)
def _tightest_epsilon(plan: Block, delta: float) -> float:
    """privkit's tightest epsilon for a plan at delta, memoised: plans are frozen values,
    and a public T and score sensitivity make refits repeat the same plan."""
    from privkit import tightest

    return float(tightest(plan, delta=delta).epsilon)


def paper_step_epsilon(*, epsilon: float, n_iterations: int, delta: float) -> float:
    """The thesis's per-step budget, Algorithm 3 with its Theorem 1:
    ``eps' = eps / sqrt(8 T log(1/delta))`` (the inverse of
    :func:`privkit.composition.reijden_composition_epsilon`)."""
    owner = "paper_step_epsilon"
    eps = check.positive_finite("epsilon", epsilon, owner)
    steps = check.positive_int("n_iterations", n_iterations, owner)
    d = check.open_unit("delta", delta, owner)
    return eps / math.sqrt(8.0 * steps * math.log(1.0 / d))


def paper_score_sensitivity(score: str, *, density: float, optimum: float) -> float:
    """The thesis's sensitivities of the DMW scores for the SVM (``a = c_j = 1``): eq. 12,
    ``3 OPT / s`` (slack), and eq. 14, ``2 / s`` (count). They hold but are loose by 3/2
    and 2 (:func:`~privkit.algorithms.lp.private_lp.score_sensitivity` proves the tight
    ones); ``accounting="paper"`` calibrates its noise by them, as the thesis ran it."""
    tight = score_sensitivity(score, density=density, optimum=optimum)
    return tight * (2.0 if score == "count" else 1.5)


class LPSVMClassifier(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Linear SVM from the LP formulation, solved by private dense multiplicative weights.

    Thesis Algorithm 3: OPT ``= ||w_obj||_1`` from objective perturbation (Algorithm 2);
    the hard-margin LP (:func:`hard_margin_lp`) with width ``rho = OPT + 1`` (eq. 11);
    ``T = 36 rho^2 log(n) / alpha^2`` iterations, ``eta = sqrt(log(n) / T)``, weights
    initialised to ``s / n``, density ``s``; at each iteration the exponential mechanism
    picks a vertex ``OPT e_j`` (``j < 2p``) by its score, whose sensitivity is
    ``2 OPT / s`` or, for ``quality="count"``, ``1 / s`` (tighter than the thesis's eq. 12
    and 14, ``3 OPT / s`` and ``2 / s``: see Notes); the output is
    ``w = x_bar[:p] - x_bar[p:]`` for the average ``x_bar`` of the chosen vertices.

    Parameters
    ----------
    epsilon : float or None, default 1.0
        The TOTAL budget, Algorithm 2 included. ``None``: the non-private reference
        (non-private OPT from the same Huber objective, argmax instead of the exponential
        mechanism, thesis section 3.3); no guarantee.
    delta : float or None, default None
        ``None`` means ``1 / n`` (the thesis's choice; section 2.2 itself notes that
        ``delta < 1/n`` is the usual requirement; n is public here).
    classes : array-like of 2 labels or None, default None
        The public label set (the LP-SVM is binary), or ``None`` to release it privately
        (see "Public and private").
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
        A public bound on the rows' L2 norm; rows are divided by it and clipped onto it,
        silently, so that ``||x||_2 <= 1`` and ``|x_j| <= 1``, as the thesis's analysis
        (section 2.1) requires.
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
        What ran (``Sequential(ObjectivePerturbation, Repeat(Exponential, T))``, after
        the label release when ``classes`` is not declared), the ledger (matching
        ``plan_``), privkit's guarantee for it, and the thesis's claim
        ``ApproxDP(epsilon, delta)``.

    Public and private
    ------------------
    Neighbours differ in one record (one constraint) replaced: n is public, and so are
    ``delta``'s default ``1 / n``, the density ``s``, the schema and every parameter.

    * Labels: ``classes`` declared (two labels), or released by a stability histogram
      (:mod:`privkit.algorithms._labels`) at ``LABEL_SHARE`` of epsilon and of delta,
      the LP-SVM then running at the rest; ``guarantee_`` is their basic composition.
      With fewer than 2 labels released no model is learnt (``predict`` returns the one
      label, or raises when there is none); with more than 2, ``fit`` raises after the
      release, naming the released labels (a function of the release alone) and asking
      for ``classes``.
    * A record whose label is outside ``classes_`` becomes the zero row: in Algorithm 2
      its loss is the constant ``loss(0)`` (it moves no gradient); in the DMW stage its
      constraint row is zero, so it adds nothing to any vertex's score (it holds weight
      in the dense projection, as any constraint does, and n stays the same).
    * Rows beyond ``row_norm_bound`` are clipped onto it and a row with a NaN or an
      infinity becomes the zero row (its label kept), silently (no warning, no error).
    * ``opt_``, ``n_iterations_``, ``learning_rate_``, ``score_sensitivity_`` are
      functions of the public parameters and of OPT, the L1 norm of Algorithm 2's private
      output (post-processing); ``choices_`` are the exponential mechanism's outputs.
    * Queries (``predict``, ``decision_function``) are checked strictly.

    Notes
    -----
    **Neighbouring.** REPLACE_ONE: each row is one constraint, and ``n`` is public.
    The scores' sensitivities are :func:`~privkit.algorithms.private_lp.score_sensitivity`'s
    (proof there).

    **What the thesis claims, and what privkit finds.** The thesis sets
    ``eps' = eps / sqrt(8 T log(1/delta))`` (its Theorem 1, a simplification of Dwork,
    Rothblum, Vadhan 2010; :func:`privkit.composition.reijden_composition_epsilon`) and claims
    (eps, delta) for Algorithm 3; but OPT comes from Algorithm 2, run at its own epsilon,
    which the claim leaves out. With ``accounting="paper"`` privkit runs exactly that
    (Algorithm 2 at ``epsilon``, the T steps at the thesis's eps', their noise calibrated
    to the thesis's eq. 12 or 14: :func:`paper_score_sensitivity`) and ``guarantee_`` is
    what it really spends: more than ``epsilon`` (Algorithm 2's ``epsilon`` plus what the
    T steps cost, which privkit certifies at well under ``epsilon`` because every step is
    an exponential mechanism, whose bounded-range profile composes far better than pure
    epsilon). ``paper_claim_`` keeps the thesis's figure, which does not hold.

    With ``accounting="privkit"`` the total is split: Algorithm 2 gets
    ``opt_share * epsilon`` (pure DP), and the per-step epsilon is the largest for which
    privkit's tightest accountant certifies the T steps within the rest at ``delta``
    (:func:`~privkit.algorithms.lp.private_lp.calibrate_step_epsilon`). Because T is a
    function of OPT, Algorithm 2's *output*, the steps that follow are chosen adaptively;
    privkit therefore adds the two stages' epsilons (basic composition, valid for
    adaptively chosen mechanisms: Dwork, Roth 2014, Theorem 3.16) rather than composing
    the realised plan as if T had been fixed in advance. With a public ``n_iterations``
    nothing is adaptive, and the calibration runs against the tightest accountant on the
    whole plan, Algorithm 2 included. Either way ``guarantee_`` is (epsilon, delta).

    **Tighter than eq. 12 and 14.** Replacing one row moves the other rows' projected
    weights all in one direction (the projection's ``zeta`` is monotone), which bounds the
    slack score's change by ``2 OPT / s`` and the count's by ``1 / s``, both attained;
    privkit declares these (until 0.3.0 it kept the thesis's ``3 OPT / s`` and ``2 / s``),
    so each step's noise is 2/3 (slack) or 1/2 (count) of what it was at the same epsilon.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.lp.lp_svm import LPSVMClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> svm = LPSVMClassifier(epsilon=2.0, delta=1e-5, random_state=0).fit(X, y)
    >>> svm.ledger_.compare(svm.plan_).matches, round(svm.guarantee_.epsilon, 6)
    (True, 2.0)
    """

    def __init__(self, *, epsilon: float | None = 1.0, delta: float | None = None,
                 classes: Any = None, density: float = 0.75, accuracy: float = 200.0,
                 quality: str = "slack", margin: float = 0.0, accounting: str = "privkit",
                 opt_share: float = 0.5, regularization: float = 1e-3, huber_h: float = 0.5,
                 row_norm_bound: float = 1.0, n_iterations: int | None = None,
                 max_iterations: int | None = None, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.density = density
        self.accuracy = accuracy
        self.quality = quality
        self.margin = margin
        self.accounting = accounting
        self.opt_share = opt_share
        self.regularization = regularization
        self.huber_h = huber_h
        self.row_norm_bound = row_norm_bound
        self.n_iterations = n_iterations
        self.max_iterations = max_iterations
        self.random_state = random_state

    # -- parameters and plan ----------------------------------------------------------------

    def _validated(self, n_samples: int) -> dict[str, Any]:
        """Every public parameter, checked, and the budgets: ``labels`` is the planned
        label release (``None`` when ``classes`` is declared or ``epsilon`` is None), and
        ``stage_epsilon`` / ``stage_delta`` what the LP-SVM itself gets."""
        owner = type(self).__name__
        n = check.positive_int("n_samples", n_samples, owner)
        eps = None if self.epsilon is None else check.positive_finite("epsilon", self.epsilon,
                                                                       owner)
        if self.delta is None and n < 2:
            raise check.fail("delta", None, "given when X has 1 sample (the default "
                             "1 / n would be 1)", owner)
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
        if self.n_iterations is not None:
            check.positive_int("n_iterations", self.n_iterations, owner)
        if self.max_iterations is not None:
            check.positive_int("max_iterations", self.max_iterations, owner)
        declared = declared_classes(self.classes, owner)
        if declared is not None and declared.size != 2:
            raise check.fail("classes", self.classes, "None or exactly 2 labels (the "
                             "LP-SVM is binary)", owner)
        labels = None
        stage_eps, stage_delta, opt_eps = eps, delta, None
        if eps is not None:
            if declared is None:
                labels = label_release(eps, delta, relation=R, stage_uses_delta=True,
                                       owner=owner)
                stage_eps, stage_delta = labels.rest(eps, delta)
            assert stage_eps is not None
            opt_eps = stage_eps if self.accounting == "paper" else opt_share * stage_eps
        return {"n": n, "epsilon": eps, "delta": delta, "s": share * n, "declared": declared,
                "labels": labels, "stage_epsilon": stage_eps, "stage_delta": stage_delta,
                "opt_epsilon": opt_eps}

    def _opt_model(self, opt_epsilon: float) -> ObjectivePerturbationClassifier:
        return ObjectivePerturbationClassifier(
            epsilon=opt_epsilon, classes=[-1.0, 1.0], loss="huber", huber_h=self.huber_h,
            regularization=self.regularization, row_norm_bound=1.0, fit_intercept=False)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The blocks ``fit`` will run, before any data is seen.

        The label release, if ``classes`` is not declared; Algorithm 2's block, then the
        DMW stage. T and the step's sensitivity depend on OPT, which is only known after
        Algorithm 2 has run, so the DMW stage appears as a :class:`~privkit.Claimed`
        block holding the guarantee that privkit certifies for every T:
        ``ApproxDP(epsilon - opt_epsilon, delta)`` (``accounting="privkit"``), or
        ``ZCDP(epsilon^2 / (64 log(1/delta)))`` (``accounting="paper"``: T steps of an
        eps'-bounded-range mechanism are ``T eps'^2 / 8``-zCDP, Cesar, Rogers 2021,
        whatever T is), at the epsilon and delta the LP-SVM gets. With a public
        ``n_iterations`` (privkit accounting) the stage is
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
        eps, delta = v["stage_epsilon"], v["stage_delta"]
        if self.accounting == "paper":
            rho = eps * eps / (64.0 * math.log(1.0 / delta))
            stage: Block = Sequential(first, Claimed(ZCDP(rho=rho), relation=R, label=label))
        elif self.n_iterations is not None:
            step = calibrate_step_epsilon(epsilon=eps, delta=delta,
                                          n_iterations=self.n_iterations, prefix=first)
            steps = Claimed(BoundedRange(eta=step), relation=R, label="DMW step")
            stage = Sequential(first, Repeat(steps, self.n_iterations))
        else:
            rest = ApproxDP(epsilon=eps - v["opt_epsilon"], delta=delta)
            stage = Sequential(first, Claimed(rest, relation=R, label=label))
        planned = stage if v["labels"] is None else v["labels"].plan(stage)
        assert planned is not None
        return planned

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> LPSVMClassifier:
        """Fit; afterwards ``classes_``, ``plan_``, ``ledger_``, ``guarantee_``,
        ``paper_claim_`` and (when two labels are known) ``coef_`` and the run's figures.

        ``budget_filter``: a :class:`~privkit.BudgetFilter`, charged before anything is
        drawn: the plan when ``classes`` is declared, the whole ``(epsilon, delta)``
        otherwise. A charge that does not fit is refused with nothing run.
        """
        owner = type(self).__name__
        X = private_rows(X, owner=owner, estimator=self, min_rows=1)
        y = private_labels(y, X.shape[0], owner=owner)
        n = X.shape[0]
        v = self._validated(n)
        eps = v["epsilon"]
        if eps is not None and budget_filter is not None:
            charge(self, self.plan(n_samples=n, n_features=X.shape[1])
                   if v["labels"] is None else total_claim(
                       eps, v["delta"], R, f"{owner}: private label set, then the LP-SVM"),
                   budget_filter, delta=v["delta"])
        for name in [k for k in vars(self) if k.endswith("_") and k not in _SCHEMA]:
            delattr(self, name)  # a refit that learns no model must not keep the last one
        rng = np.random.default_rng(self.random_state)
        with Ledger() as ledger:
            if eps is None:  # the non-private reference: labels read off the data
                labels = LabelSet(classes=v["declared"] if v["declared"] is not None
                                  else label_counts(y)[0])
            else:
                labels = release_label_set(y, classes=v["declared"], epsilon=eps,
                                           delta=v["delta"], relation=R, rng=rng,
                                           stage_uses_delta=True, owner=owner)
            if labels.classes.size > 2:
                raise check.fail("classes", None, "the 2 labels to learn", owner,
                                 "Only binary classification is supported: the label set "
                                 f"is {labels.classes.tolist()}; records with other labels "
                                 "are then neutral")
            stage = None
            if labels.classes.size == 2:
                codes = labels.codes(y)
                Z = clipped_rows(X, self.row_norm_bound, owner=owner)
                Z[codes < 0] = 0.0  # neutral records: the zero row (see the docstring)
                stage = self._fit_stage(Z, np.where(codes == 1, 1.0, -1.0), v, rng)
        self.classes_ = labels.classes
        self.ledger_ = ledger
        self.paper_claim_: Guarantee | None = (None if eps is None else
                                               ApproxDP(epsilon=eps, delta=v["delta"]))
        if eps is None:
            self.plan_ = self.guarantee_ = None
            return self
        self.plan_ = labels.plan(stage)
        stage_guarantee = None if stage is None else self._guarantee(
            stage.steps[0], stage.steps[1], v["stage_delta"])
        self.guarantee_ = labels.guarantee(stage_guarantee, v["stage_delta"])
        return self

    def _fit_stage(self, Z: NDArray[np.float64], signs: NDArray[np.float64],
                   v: dict[str, Any], rng: np.random.Generator) -> Sequential | None:
        """Algorithm 3 on the scaled rows; sets the model and the run's figures and returns
        ``Sequential(Algorithm 2's plan, Repeat(step, T))`` (``None`` if non-private)."""
        n, p = Z.shape
        eps, delta, s = v["stage_epsilon"], v["stage_delta"], v["s"]
        if eps is None:
            w_obj = solve_erm(Z, signs, MarginLoss("huber", self.huber_h), self.regularization)
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
        sensitivity = (paper_score_sensitivity if self.accounting == "paper"
                       else score_sensitivity)
        sens = sensitivity(self.quality, density=s, optimum=opt)
        mechanism = None
        step = math.inf
        if first is not None:
            if self.accounting == "paper":
                step = paper_step_epsilon(epsilon=eps, n_iterations=steps, delta=delta)
            elif self.n_iterations is not None:
                step = calibrate_step_epsilon(epsilon=eps, delta=delta, n_iterations=steps,
                                              sensitivity=sens,
                                              prefix=first)
            else:
                step = calibrate_step_epsilon(epsilon=eps - v["opt_epsilon"], delta=delta,
                                              n_iterations=steps,
                                              sensitivity=sens)
            mechanism = step_mechanism(step, sens)
        result = dense_multiplicative_weights(
            A, b, c, optimum=opt, density=s, n_iterations=steps, learning_rate=eta,
            width=width, mechanism=mechanism, rng=rng, score=self.quality,
            margin=self.margin)
        self.coef_ = ((result.x[:p] - result.x[p:]) / self.row_norm_bound)[None, :]
        self.intercept_ = np.zeros(1)
        self.opt_, self.n_iterations_, self.learning_rate_ = opt, steps, eta
        self.density_, self.delta_, self.score_sensitivity_ = s, v["delta"], sens
        self.opt_epsilon_ = v["opt_epsilon"]
        self.choices_ = result.choices
        self.step_epsilon_ = step
        self.paper_step_epsilon_ = (math.inf if first is None
                                    else paper_step_epsilon(epsilon=eps, n_iterations=steps,
                                                            delta=delta))
        if first is None or mechanism is None:
            return None
        return Sequential(first, Repeat(mechanism, steps))

    def _guarantee(self, first: Block, steps: Block, delta: float) -> Guarantee:
        """privkit's guarantee for what ran: the tightest accountant on the whole plan when
        T was public; otherwise Algorithm 2's epsilon plus the tightest epsilon of the T
        steps (basic composition across the adaptive choice of T)."""
        from privkit import BasicAccountant

        if self.n_iterations is not None:
            return ApproxDP(epsilon=_tightest_epsilon(Sequential(first, steps), delta),
                            delta=delta)
        stage = ApproxDP(epsilon=_tightest_epsilon(steps, delta), delta=delta)
        plan = Sequential(first, Claimed(stage, relation=R, label="DMW steps"))
        return ApproxDP(epsilon=BasicAccountant().epsilon(plan, delta=delta), delta=delta)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The end-to-end transcript audit's fixture (:func:`~privkit.algorithms.linear._linear.
        transcript_fixture`) with a public T = 2 and the count score (whose sensitivity
        ``1 / s`` is public), so a fit takes milliseconds. Declared: ``classes=[0, 1]``
        at (1, 1e-3); D holds both, so ``new_label`` 2 is outside them (the LP-SVM is
        binary) and its record is neutral. Private: (8, 1e-3)."""
        params: dict[str, Any] = {"delta": 1e-3, "quality": "count", "n_iterations": 2,
                                  "regularization": 0.1}
        if declare_classes:
            return transcript_fixture(cls(epsilon=1.0, classes=[0, 1], **params),
                                      epsilon=1.0, delta=1e-3)
        return transcript_fixture(cls(epsilon=8.0, **params), epsilon=8.0, delta=1e-3)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.classifier_tags.multi_class = False
        return tags
