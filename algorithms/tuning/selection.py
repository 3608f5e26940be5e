"""Private hyperparameter selection that pays at small budgets (Papernot, Steinke 2022).

Tuning a private estimator with scikit-learn's ``GridSearchCV`` trains it once per
setting and fold and publishes the best: every one of those fits spends budget, and the
reported epsilon is that of one fit. (Each privkit estimator accepts ``budget_filter=``
in ``fit``, so ``GridSearchCV(...).fit(X, y, budget_filter=f)`` spends every fit on the
filter and is refused once the filter's limit would be exceeded.)

:class:`PrivateGridSearch` is the selection of Papernot and Steinke, "Hyperparameter
tuning with Renyi differential privacy" (ICLR 2022, arXiv:2110.03620v2): draw a number of
runs K from the truncated negative binomial distribution ``D_(eta, gamma)`` (their
Definition 1; :mod:`privkit.algorithms.tuning._repeat_select`), K times {draw a setting uniformly
from the grid; run an epsilon_c-DP candidate that returns a model and its noisy score},
publish the best candidate and nothing else. By their Theorem 2 (in the limit of large
orders, :func:`~privkit.algorithms.tuning._repeat_select.repeat_and_select_pure`) the selection
is ``(2 + eta) epsilon_c``-DP whatever K turns out, for any expected number of runs: the
default ``shape`` eta = 0 (the logarithmic distribution) costs ``2 epsilon_c`` where Liu
and Talwar's random stopping (STOC 2019, Theorem 3.1, eta = 1) cost ``3 epsilon_c``, and
``expected_runs`` can grow with the grid at no privacy cost. privkit accounts for it as a
:class:`~privkit.Claimed` ``PureDP`` block with that citation, so it composes with
anything else the user runs.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   ``classes`` (passed to every candidate) and ``delta`` (a label set released privately
   once for the whole search); X and y of different lengths are refused; candidates are
   checked against the budget before any data is touched. Issue 27: Papernot and
   Steinke's truncated negative binomial number of runs (``shape``, ``expected_runs``)
   replaces Liu and Talwar's random stopping (``stop_probability``); candidates train
   on every row and score on them (``score_share``; ``validation_fraction`` is gone);
   Pipelines as candidates; ``predict_proba``, ``decision_function``; the number of runs
   is no longer published (``n_runs_`` is gone: the proof covers the best run only).
"""

from __future__ import annotations

import contextvars
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.errors import PrivacyLeakWarning
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger, record
from privkit.mechanisms import Laplace
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed

from .._audit_case import TranscriptCase
from .._bounds import finite_rows, upstream_fitted_steps
from .._labels import LabelSet, declared_classes, label_release, release_label_set, total_claim
from .._private_rows import private_labels, private_rows
from .._spend import charge
from ..linear._linear import transcript_fixture
from ._repeat_select import draw_runs, repeat_and_select_pure, runs_gamma

__all__ = ["PrivateGridSearch"]

R = Neighbouring.REPLACE_ONE

#: Parameters the search sets on every candidate, so a grid may not hold them.
_SET_BY_SEARCH = ("epsilon", "delta", "classes", "random_state")


def _theorem(epsilon: float, shape: float) -> Claimed:
    """Papernot and Steinke's theorem for candidates at ``epsilon / (2 + shape)``."""
    return Claimed(PureDP(epsilon=epsilon), relation=R,
                   label="Papernot-Steinke 2022 Thm 2 (orders -> inf): best of K ~ "
                         f"TNB(eta={shape:g}) runs of "
                         f"{epsilon / (2.0 + shape):.6g}-DP candidates")


def _final(estimator: Any) -> tuple[Any, str]:
    """The private classifier of a candidate and the prefix of its parameters (its step
    name and ``__`` in a Pipeline)."""
    if isinstance(estimator, Pipeline):
        name, last = estimator.steps[-1]
        inner, prefix = _final(last)
        return inner, f"{name}__{prefix}"
    return estimator, ""


def _delegates(method: str) -> Any:
    """``available_if`` test: the candidate (fitted or not) has ``method``."""
    def check_method(search: Any) -> bool:
        model = getattr(search, "best_estimator_", None)
        return hasattr(model if model is not None else search.estimator, method)
    return check_method


class PrivateGridSearch(MetaEstimatorMixin, BaseEstimator):  # type: ignore[misc]
    """Papernot-Steinke selection over a grid of settings of a pure-DP privkit classifier,
    or of a Pipeline that ends in one (REPLACE_ONE), with one total guarantee.

    Parameters
    ----------
    estimator : a privkit classifier with ``epsilon`` and ``classes`` parameters whose
        plan is pure DP with declared classes
        (:class:`~privkit.algorithms.OutputPerturbationClassifier`,
        :class:`~privkit.algorithms.ObjectivePerturbationClassifier`), or a scikit-learn
        ``Pipeline`` whose last step is one (its other steps should be public-bound
        transformers: a data-fitted step warns, see :mod:`privkit.algorithms._bounds`).
    param_grid : dict or list of dicts
        As for ``GridSearchCV`` (``step__param`` names for a Pipeline); ``epsilon``,
        ``delta``, ``classes`` and ``random_state`` of the classifier may not be in it
        (the search sets them).
    epsilon : float
        The total budget: the label release (if any) takes its share, and each
        candidate runs at ``epsilon_c`` = the rest over ``2 + shape``.
    delta : float, default 0
        Used only without ``classes``: the label release's delta; must then be > 0.
    classes : array-like or None, default None
        The public label set, passed to every candidate; ``None`` releases it privately,
        once, for the whole search.
    shape : float, default 0
        eta > -1 of the truncated negative binomial number of runs: the selection costs
        ``(2 + eta) epsilon_c``. 0 is the logarithmic distribution, 1 the geometric
        (Liu-Talwar); a smaller eta is cheaper but makes a single run likelier.
    expected_runs : float or None, default None
        ``E[K]`` (> 1); by default twice the number of settings (at least 2). It costs
        no privacy, only time.
    score_share : float, default 0.1
        The share of ``epsilon_c`` each candidate spends on its noisy score (the rest
        trains it).
    random_state : int, Generator or None

    Public and private
    ------------------
    REPLACE_ONE: n, the schema and every parameter are public. Labels: declared, or
    released once by a stability histogram at ``LABEL_SHARE`` of epsilon and all of
    ``delta`` (:mod:`privkit.algorithms._labels`), then passed to every candidate as its
    declared ``classes``; ``guarantee_`` is the release and the selection by basic
    composition. With fewer than 2 labels released no candidate runs (``predict``
    returns the one label, or raises when there is none). Each candidate applies its own
    public rules to its rows (neutral records, clipping); in the score, a row with a
    non-finite entry, or a label outside ``classes_``, counts as misclassified (a
    per-record rule, so the accuracy still moves by at most ``1 / n``). What is
    published is the best run's setting, model and noisy score: the number of runs K and
    the other runs are not (the theorem covers the best run alone), so ``ledger_`` holds
    the selection as one block, the candidates' own releases are recorded in no ledger
    the caller holds, and the candidates' warnings are not passed on (their count would
    tell K). ``fit``'s running time grows with K, and knowing K the best run is worth
    more than the theorem counts (for a fixed K, the best of K runs can cost up to K
    candidates' epsilon): privkit does not pad the time, so run the search where its
    duration is not observed by whoever receives the model. A data-fitted step in a
    Pipeline candidate warns once, before any draw,
    from the pipeline's structure. Queries are checked strictly by the chosen candidate.

    Notes
    -----
    Each candidate trains on all n rows at ``(1 - score_share) epsilon_c`` and releases
    its accuracy on those rows plus Laplace noise of scale ``1 / (n score_share
    epsilon_c)`` (for a fixed model one replaced row moves the accuracy by at most
    ``1 / n``): epsilon_c-DP by sequential composition of the two (Dwork, Roth 2014,
    "The algorithmic foundations of differential privacy", Theorem 3.16; the score is
    chosen after the model, which that theorem allows). Training on every row beats a
    held-out split: the model sees all of them, and the score's noise is small beside
    the differences between settings once n times its epsilon is in the hundreds.
    Papernot, Steinke 2022, Theorem 2, in the limit of large orders, then gives
    ``(2 + eta) epsilon_c`` for the selection
    (:func:`~privkit.algorithms.tuning._repeat_select.repeat_and_select_pure`).

    At small budgets the search pays only if its settings, at a candidate's share of
    epsilon, beat the untuned default at the whole epsilon. A negative ``shape`` (eta in
    (-1, 0)) makes the selection cheaper, ``(2 + eta) epsilon_c``, but then one run, a
    setting drawn at random with nothing selected, has probability at least ``-eta``; a
    small ``score_share`` and a grid placed by the public :meth:`budget_split` (a
    regularisation ``c / (n epsilon_train)``) help too. Where the default is already
    near the data's best setting, no grid pays: on Adult at epsilon 0.5 even the best
    setting picked on the test split must train at about 0.9 epsilon to match the
    default at epsilon (``benchmarks/results/tuning.md``, the break-even overhead), and
    honestly chosen constants lose at epsilon <= 1. A negative eta makes K heavy-tailed
    (rarely, many runs): it costs time, never privacy.

    Attributes
    ----------
    classes_, best_params_, best_estimator_, best_score_ (noisy), plan_, guarantee_,
    ledger_ (the label release, if any, and the selection as one block), paper_claim_.
    ``best_*`` are ``None`` when no candidate ran.
    """

    def __init__(self, estimator: Any, param_grid: Any, *, epsilon: float = 1.0,
                 delta: float = 0.0, classes: Any = None, shape: float = 0.0,
                 expected_runs: float | None = None, score_share: float = 0.1,
                 random_state: Any = None) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.shape = shape
        self.expected_runs = expected_runs
        self.score_share = score_share
        self.random_state = random_state

    def _validated(self) -> dict[str, Any]:
        """The public parameters, checked before any data is touched."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        delta = check.delta("delta", self.delta, owner)
        share = check.open_unit("score_share", self.score_share, owner)
        shape = check.real("shape", self.shape, owner)
        if not -1.0 < shape < np.inf:
            raise check.fail("shape", self.shape, "a finite number > -1", owner)
        settings = list(ParameterGrid(self.param_grid))
        final, prefix = _final(self.estimator)
        params = final.get_params() if hasattr(final, "get_params") else {}
        if "epsilon" not in params or "classes" not in params:
            raise check.fail("estimator", type(self.estimator).__name__, "a privkit "
                             "classifier with `epsilon` and `classes` parameters, or a "
                             "Pipeline that ends in one", owner)
        taken = sorted({name for s in settings for name in s
                        if name in _SET_BY_SEARCH or name.removeprefix(prefix)
                        in _SET_BY_SEARCH})
        if taken:
            raise check.fail("param_grid", self.param_grid,
                             f"a grid without {', '.join(repr(n) for n in taken)}", owner,
                             "the search sets each candidate's epsilon, delta, classes and "
                             "random_state")
        mean = (max(2.0, 2.0 * len(settings)) if self.expected_runs is None
                else check.positive_finite("expected_runs", self.expected_runs, owner))
        if mean <= 1.0:
            raise check.fail("expected_runs", self.expected_runs, "a number > 1", owner)
        declared = declared_classes(self.classes, owner)
        labels = (LabelSet(classes=declared) if declared is not None else
                  label_release(eps, delta, relation=R, stage_uses_delta=False, owner=owner))
        stage = labels.rest(eps, delta)[0]
        candidate = stage / (2.0 + shape)
        while repeat_and_select_pure(candidate, shape) > stage:
            candidate = float(np.nextafter(candidate, 0.0))
        return {"epsilon": eps, "delta": delta, "share": share, "shape": shape,
                "settings": settings, "prefix": prefix, "gamma": runs_gamma(shape, mean),
                "declared": declared, "labels": labels, "stage_epsilon": stage,
                "candidate_epsilon": candidate, "score_epsilon": share * candidate,
                "train_epsilon": candidate - share * candidate}

    def budget_split(self) -> dict[str, float]:
        """The public split of ``epsilon``, before any data is touched: ``candidate``,
        each run's epsilon (what is left after the label release, if any, over ``2 +
        shape``: the selection then costs that rest), of which ``train`` trains the
        candidate and ``score`` prices its noisy score (``score_share``). A grid may
        depend on it, e.g. a regularisation ``c / (n * train)`` (objective
        perturbation's noise in the minimiser scales as ``1 / (n epsilon Lambda)``:
        Chaudhuri, Monteleoni, Sarwate 2011, "Differentially private empirical risk
        minimization", Theorem 9 and Section 7), as ``benchmarks/tuning.py`` does."""
        v = self._validated()
        return {"candidate": v["candidate_epsilon"], "train": v["train_epsilon"],
                "score": v["score_epsilon"]}

    def plan(self, *, n_samples: int, n_features: int, n_classes: int | None = None) -> Block:
        """The label release (without ``classes``), then ``Claimed(PureDP(...))``:
        Papernot and Steinke's theorem for candidates at the rest over ``2 + shape``
        (the shape of the data does not change it)."""
        v = self._validated()
        check.positive_int("n_samples", n_samples, "plan")
        check.positive_int("n_features", n_features, "plan")
        planned: Block | None = v["labels"].plan(_theorem(v["stage_epsilon"], v["shape"]))
        assert planned is not None
        return planned

    def _candidate(self, v: dict[str, Any], setting: dict[str, Any], classes: Any,
                   random_state: Any) -> Any:
        prefix = v["prefix"]
        return clone(self.estimator).set_params(**setting, **{
            f"{prefix}epsilon": v["train_epsilon"], f"{prefix}classes": classes,
            f"{prefix}random_state": random_state})

    def _check_candidates(self, v: dict[str, Any], n: int, d: int) -> None:
        """Every setting's classifier, with the declared (or a stand-in) label set, is
        pure DP within its training epsilon on data of this shape (checked on its plan,
        with the raw number of features: the pure epsilon of privkit's linear
        classifiers does not depend on it); a Pipeline with a data-fitted step before
        it warns once. Public values only, before any data is touched."""
        owner = type(self).__name__
        classes = v["declared"] if v["declared"] is not None else np.arange(2)
        leaks: set[str] = set()
        for setting in v["settings"]:
            model = self._candidate(v, setting, classes, None)
            final, _ = _final(model)
            leaks.update(upstream_fitted_steps(model, final) or [])
            spent = tightest(final.plan(n_samples=n, n_features=d), delta=0.0).epsilon
            if spent > v["train_epsilon"] * (1 + 1e-9):
                raise check.fail("estimator", type(final).__name__, "an estimator whose "
                                 "fit is epsilon-DP (pure) with declared classes", owner)
        if leaks:
            warnings.warn(
                f"{owner}'s candidates are Pipelines whose steps {', '.join(sorted(leaks))} "
                "are fitted on the same rows before the private classifier: what those "
                "steps learn from the private data is not covered by guarantee_. Use "
                "public bounds instead (privkit.algorithms.preprocessing).",
                PrivacyLeakWarning, stacklevel=3)

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateGridSearch:
        """Run the search; ``budget_filter`` is charged before anything is drawn (the
        plan with ``classes`` declared, the whole ``(epsilon, delta)`` otherwise)."""
        owner = type(self).__name__
        v = self._validated()
        X = private_rows(X, owner=owner, estimator=self, min_rows=1, sparse=True)
        y = private_labels(y, X.shape[0], owner=owner)
        n = X.shape[0]
        self._check_candidates(v, n, X.shape[1])
        eps = v["epsilon"]
        charge(self, self.plan(n_samples=n, n_features=X.shape[1])
               if v["declared"] is not None else total_claim(
                   eps, v["delta"], R, f"{owner}: private label set, then the search"),
               budget_filter, delta=v["delta"] or None)
        rng = np.random.default_rng(self.random_state)
        best: tuple[float, Any, dict[str, Any]] | None = None
        with Ledger() as ledger:
            labels = release_label_set(y, classes=v["declared"], epsilon=eps,
                                       delta=v["delta"], relation=R, rng=rng,
                                       stage_uses_delta=False, owner=owner)
            stage = None
            if labels.classes.size >= 2:
                stage = _theorem(v["stage_epsilon"], v["shape"])
                # The runs, in a context with no open ledger (their releases would
                # count K in the caller's ledgers) and with their warnings withheld.
                best = contextvars.Context().run(self._select, v, X, y, labels.classes,
                                                 rng)
                record(stage)
        self.best_score_: float | None = None if best is None else best[0]
        self.best_estimator_: Any = None if best is None else best[1]
        self.best_params_: dict[str, Any] | None = None if best is None else best[2]
        self.classes_ = labels.classes
        plan = labels.plan(stage)
        assert plan is not None
        self.plan_ = plan
        self.ledger_ = ledger
        guarantee = labels.guarantee(
            None if stage is None else PureDP(epsilon=v["stage_epsilon"]), 0.0)
        assert guarantee is not None
        self.guarantee_: Guarantee = (tightest(plan, delta=0.0).guarantee
                                      if v["declared"] is not None else guarantee)
        self.paper_claim_: Guarantee = PureDP(epsilon=eps)
        return self

    def _select(self, v: dict[str, Any], X: Any, y: NDArray[Any], classes: Any,
                rng: np.random.Generator) -> tuple[float, Any, dict[str, Any]]:
        """Best of K ~ TNB(shape, gamma) runs: (noisy score, fitted model, setting)."""
        n = X.shape[0]
        score_noise = Laplace.for_epsilon(v["score_epsilon"], sensitivity=1.0 / n,
                                          relation=R)
        settings = v["settings"]
        best: tuple[float, Any, dict[str, Any]] | None = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(draw_runs(v["gamma"], v["shape"], rng)):
                setting = settings[int(rng.integers(len(settings)))]
                model = self._candidate(v, setting, classes, rng.spawn(1)[0])
                model.fit(X, y)
                score = float(score_noise.release(_accuracy(model, X, y), rng=rng))
                if best is None or score > best[0]:
                    best = (score, model, setting)
        assert best is not None
        return best

    def _model(self) -> Any:
        check_is_fitted(self)
        return self.best_estimator_

    def _without_model(self, X: Any, what: str) -> Any:
        X = validate_data(self, X, reset=False, accept_sparse="csr")
        if self.classes_.size == 1 and what == "predict":
            return np.full(X.shape[0], self.classes_[0], dtype=self.classes_.dtype)
        if self.classes_.size == 1 and what == "predict_proba":
            return np.ones((X.shape[0], 1))
        raise NotFittedError(f"{type(self).__name__} has no model: the private label "
                             f"release kept {self.classes_.size} label(s), so no candidate "
                             "ran; declare the labels (classes=[...]) or give the release "
                             "more records")

    def predict(self, X: Any) -> Any:
        model = self._model()
        return model.predict(X) if model is not None else self._without_model(X, "predict")

    @available_if(_delegates("predict_proba"))  # type: ignore[untyped-decorator]
    def predict_proba(self, X: Any) -> Any:
        """The chosen candidate's class probabilities (probability 1 for the one label of
        a label release that kept one)."""
        model = self._model()
        return (model.predict_proba(X) if model is not None
                else self._without_model(X, "predict_proba"))

    @available_if(_delegates("decision_function"))  # type: ignore[untyped-decorator]
    def decision_function(self, X: Any) -> Any:
        """The chosen candidate's decision scores."""
        model = self._model()
        return (model.decision_function(X) if model is not None
                else self._without_model(X, "decision_function"))

    def score(self, X: Any, y: Any) -> float:
        check_is_fitted(self)
        correct: NDArray[np.bool_] = np.asarray(self.predict(X)) == np.asarray(y)
        return float(correct.mean())

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = True
        # The search is a classifier whenever its candidates are (scikit-learn's own
        # searches delegate the same way): checks and meta-estimators read these tags.
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        return tags

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The linear classifiers' fixture (:func:`~privkit.algorithms.linear._linear.
        transcript_fixture`), over two regularisations of output perturbation (logistic
        loss, tolerance 1e-6), with 2 runs expected. Declared: ``classes=[0, 1, 2]`` at
        epsilon 1; private: epsilon 8, delta 1e-3."""
        from ..linear.erm import OutputPerturbationClassifier

        candidate = OutputPerturbationClassifier(loss="logistic", tol=1e-6)
        grid = {"regularization": [0.1, 1.0]}
        if declare_classes:
            return transcript_fixture(cls(candidate, grid, epsilon=1.0, classes=[0, 1, 2],
                                          expected_runs=2.0), epsilon=1.0, delta=0.0)
        return transcript_fixture(cls(candidate, grid, epsilon=8.0, delta=1e-3,
                                      expected_runs=2.0), epsilon=8.0, delta=1e-3)


def _accuracy(model: Any, X: Any, y: NDArray[Any]) -> float:
    """The share of rows ``model`` classifies right; a row with a non-finite entry counts
    as wrong (a per-record public rule: the query check of ``predict`` would otherwise
    refuse a private row)."""
    finite = finite_rows(X)
    correct = 0
    if finite.any():
        correct = int(np.sum(model.predict(X[finite]) == y[finite]))
    return correct / int(X.shape[0])
