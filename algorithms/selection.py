"""Private hyperparameter selection with one honest total (Liu, Talwar 2019).

Tuning a private estimator with scikit-learn's ``GridSearchCV`` trains it once per
setting and fold and publishes the best: every one of those fits spends budget, and the
reported epsilon is that of one fit. (Each privkit estimator accepts ``budget_filter=``
in ``fit``, so ``GridSearchCV(...).fit(X, y, budget_filter=f)`` spends every fit on the
filter and is refused once the filter's limit would be exceeded.)

:class:`PrivateGridSearch` is the random-stopping selection of Liu and Talwar,
"Private selection from private candidates" (STOC 2019), Theorem 3.1: repeat
{draw a setting uniformly from the grid; run an epsilon_c-DP candidate that returns a
model and its noisy validation score}; after each run stop with probability gamma;
publish the best candidate seen. If every candidate is epsilon_c-DP, the whole procedure
is ``3 epsilon_c``-DP, whatever gamma and however many runs happen. privkit accounts for
it as a :class:`~privkit.Claimed` ``PureDP(3 epsilon_c)`` block with that citation, so it
composes with anything else the user runs.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   ``classes`` (passed to every candidate) and ``delta`` (a label set released privately
   once for the whole search); X and y of different lengths are refused (the search
   used to train on 59 labels for 60 rows, pairing row i with label i and dropping the
   last row); candidates are checked against the budget before any data is touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import Laplace
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed

from ._audit_case import TranscriptCase
from ._bounds import finite_rows
from ._labels import LabelSet, declared_classes, label_release, release_label_set, total_claim
from ._linear import private_fit_inputs, transcript_fixture
from ._spend import charge

__all__ = ["PrivateGridSearch"]

R = Neighbouring.REPLACE_ONE

#: Parameters the search sets on every candidate, so a grid may not hold them.
_SET_BY_SEARCH = ("epsilon", "delta", "classes", "random_state")


def _theorem(epsilon: float) -> Claimed:
    """Liu-Talwar's theorem for candidates at ``epsilon / 3``."""
    return Claimed(PureDP(epsilon=epsilon), relation=R,
                   label="Liu-Talwar 2019 Thm 3.1: random stopping over "
                         f"{epsilon / 3:.6g}-DP candidates")


class PrivateGridSearch(MetaEstimatorMixin, BaseEstimator):  # type: ignore[misc]
    """Liu-Talwar random-stopping selection over a grid of settings of a pure-DP privkit
    classifier (REPLACE_ONE), with one total guarantee.

    Parameters
    ----------
    estimator : a privkit classifier with ``epsilon`` and ``classes`` parameters whose
        plan is pure DP with declared classes
        (:class:`~privkit.algorithms.OutputPerturbationClassifier`,
        :class:`~privkit.algorithms.ObjectivePerturbationClassifier`).
    param_grid : dict or list of dicts
        As for ``GridSearchCV``; ``epsilon``, ``delta``, ``classes`` and
        ``random_state`` may not be in it (the search sets them).
    epsilon : float
        The total budget: the label release (if any) takes its share, and each
        candidate runs at ``epsilon_c`` = a third of the rest.
    delta : float, default 0
        Used only without ``classes``: the label release's delta; must then be > 0.
    classes : array-like or None, default None
        The public label set, passed to every candidate; ``None`` releases it privately,
        once, for the whole search.
    stop_probability : float, optional
        gamma; by default ``1 / (2 * number of settings)`` (2 runs per setting expected).
    validation_fraction : float, default 0.25
        The share of rows (a split by a public random permutation of the indices) on
        which candidates are scored; the rest train them.
    random_state : int, Generator or None

    Public and private
    ------------------
    REPLACE_ONE: n, the schema and every parameter are public, and so is the split (a
    permutation drawn from ``random_state``, independent of the data). Labels: declared,
    or released once by a stability histogram at ``LABEL_SHARE`` of epsilon and all of
    ``delta`` (:mod:`privkit.algorithms._labels`), then passed to every candidate as its
    declared ``classes``; ``guarantee_`` is the release and the selection by basic
    composition. With fewer than 2 labels released no candidate runs (``predict``
    returns the one label, or raises when there is none). Each candidate applies its own
    public rules to its training rows (neutral records, clipping); a validation row with
    a non-finite entry, or a label outside ``classes_``, counts as misclassified (a
    per-record rule, so the accuracy still moves by at most ``1 / n_val``). The number
    of runs depends on ``random_state`` alone. Queries are checked strictly by the
    chosen candidate.

    Notes
    -----
    Each candidate trains on the training rows at epsilon_c and releases its validation
    accuracy plus Laplace noise of scale ``1 / (n_val epsilon_c)`` (one replaced row moves
    the accuracy by at most ``1 / n_val``). The two parts touch disjoint rows, so a
    replaced row affects only one of them: the candidate is epsilon_c-DP (parallel
    composition). Liu, Talwar 2019, Theorem 3.1, then gives ``3 epsilon_c`` for the
    selection with an unbounded geometric number of runs; privkit never truncates it.

    Attributes
    ----------
    classes_, best_params_, best_estimator_, best_score_ (noisy), n_runs_, plan_,
    guarantee_, ledger_ (every block that ran, for the record: the guarantee is the
    theorem's), paper_claim_. ``best_*`` are ``None`` when no candidate ran.
    """

    def __init__(self, estimator: Any, param_grid: Any, *, epsilon: float = 1.0,
                 delta: float = 0.0, classes: Any = None,
                 stop_probability: float | None = None, validation_fraction: float = 0.25,
                 random_state: Any = None) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.stop_probability = stop_probability
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def _validated(self) -> dict[str, Any]:
        """The public parameters, checked before any data is touched."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        delta = check.delta("delta", self.delta, owner)
        frac = check.open_unit("validation_fraction", self.validation_fraction, owner)
        settings = list(ParameterGrid(self.param_grid))
        taken = sorted({name for s in settings for name in s if name in _SET_BY_SEARCH})
        if taken:
            raise check.fail("param_grid", self.param_grid,
                             f"a grid without {', '.join(repr(n) for n in taken)}", owner,
                             "the search sets each candidate's epsilon, delta, classes and "
                             "random_state")
        params = self.estimator.get_params() if hasattr(self.estimator, "get_params") else {}
        if "epsilon" not in params or "classes" not in params:
            raise check.fail("estimator", type(self.estimator).__name__, "a privkit "
                             "classifier with `epsilon` and `classes` parameters", owner)
        gamma = (1.0 / (2 * len(settings)) if self.stop_probability is None
                 else check.open_unit("stop_probability", self.stop_probability, owner))
        declared = declared_classes(self.classes, owner)
        labels = (LabelSet(classes=declared) if declared is not None else
                  label_release(eps, delta, relation=R, stage_uses_delta=False, owner=owner))
        return {"epsilon": eps, "delta": delta, "fraction": frac, "settings": settings,
                "gamma": gamma, "declared": declared, "labels": labels,
                "stage_epsilon": labels.rest(eps, delta)[0],
                "candidate_epsilon": labels.rest(eps, delta)[0] / 3.0}

    def plan(self, *, n_samples: int, n_features: int, n_classes: int | None = None) -> Block:
        """The label release (without ``classes``), then ``Claimed(PureDP(...))``:
        Liu-Talwar's theorem for candidates at a third of what is left (the shape does
        not change it)."""
        v = self._validated()
        check.positive_int("n_samples", n_samples, "plan")
        check.positive_int("n_features", n_features, "plan")
        planned: Block | None = v["labels"].plan(_theorem(v["stage_epsilon"]))
        assert planned is not None
        return planned

    def _check_candidates(self, v: dict[str, Any], n_train: int, d: int) -> None:
        """Every setting's candidate, with the declared (or a stand-in) label set, is
        pure DP within epsilon_c on data of this shape: checked on its plan, before any
        data is touched."""
        owner = type(self).__name__
        classes = v["declared"] if v["declared"] is not None else np.arange(2)
        for setting in v["settings"]:
            model = clone(self.estimator).set_params(**setting, epsilon=v["candidate_epsilon"],
                                                     classes=classes)
            spent = tightest(model.plan(n_samples=n_train, n_features=d), delta=0.0).epsilon
            if spent > v["candidate_epsilon"] * (1 + 1e-9):
                raise check.fail("estimator", type(model).__name__, "an estimator whose "
                                 "fit is epsilon-DP (pure) with declared classes", owner)

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateGridSearch:
        """Run the search; ``budget_filter`` is charged before anything is drawn (the
        plan with ``classes`` declared, the whole ``(epsilon, delta)`` otherwise)."""
        owner = type(self).__name__
        v = self._validated()
        X, y = private_fit_inputs(self, X, y, accept_sparse=True)
        n = X.shape[0]
        n_val = max(1, round(v["fraction"] * n))
        if n_val >= n:
            raise check.fail("validation_fraction", self.validation_fraction,
                             f"a share that leaves training rows (X has {n} sample(s))",
                             owner)
        self._check_candidates(v, n - n_val, X.shape[1])
        eps, eps_c = v["epsilon"], v["candidate_epsilon"]
        charge(self, self.plan(n_samples=n, n_features=X.shape[1])
               if v["declared"] is not None else total_claim(
                   eps, v["delta"], R, f"{owner}: private label set, then the search"),
               budget_filter, delta=v["delta"] or None)
        rng = np.random.default_rng(self.random_state)
        best: tuple[float, Any, dict[str, Any]] | None = None
        runs = 0
        with Ledger() as ledger:
            labels = release_label_set(y, classes=v["declared"], epsilon=eps,
                                       delta=v["delta"], relation=R, rng=rng,
                                       stage_uses_delta=False, owner=owner)
            if labels.classes.size >= 2:
                order = rng.permutation(n)
                val, train = order[:n_val], order[n_val:]
                score_noise = Laplace.for_epsilon(eps_c, sensitivity=1.0 / n_val, relation=R)
                settings = v["settings"]
                while True:
                    setting = settings[int(rng.integers(len(settings)))]
                    model = clone(self.estimator).set_params(
                        **setting, epsilon=eps_c, classes=labels.classes,
                        random_state=rng.spawn(1)[0])
                    model.fit(X[train], y[train])
                    accuracy = _accuracy(model, X[val], y[val])
                    score = float(score_noise.release(accuracy, rng=rng))
                    runs += 1
                    if best is None or score > best[0]:
                        best = (score, model, setting)
                    if rng.random() < v["gamma"]:
                        break
        self.best_score_: float | None = None if best is None else best[0]
        self.best_estimator_: Any = None if best is None else best[1]
        self.best_params_: dict[str, Any] | None = None if best is None else best[2]
        self.classes_ = labels.classes
        self.n_runs_ = runs
        stage = None if best is None else _theorem(v["stage_epsilon"])
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

    def predict(self, X: Any) -> Any:
        check_is_fitted(self)
        if self.best_estimator_ is not None:
            return self.best_estimator_.predict(X)
        X = validate_data(self, X, reset=False, accept_sparse="csr")
        if self.classes_.size == 1:
            return np.full(X.shape[0], self.classes_[0], dtype=self.classes_.dtype)
        raise NotFittedError(f"{type(self).__name__} has no model: the private label "
                             "release kept no label, so no candidate ran; declare the "
                             "labels (classes=[...]) or give the release more records")

    def score(self, X: Any, y: Any) -> float:
        check_is_fitted(self)
        correct: NDArray[np.bool_] = np.asarray(self.predict(X)) == np.asarray(y)
        return float(correct.mean())

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = True
        return tags

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The linear classifiers' fixture (:func:`~privkit.algorithms._linear.
        transcript_fixture`), over two regularisations of output perturbation (logistic
        loss, tolerance 1e-6), stopping with probability 1/2 after each run. Declared:
        ``classes=[0, 1, 2]`` at epsilon 1; private: epsilon 8, delta 1e-3."""
        from .erm import OutputPerturbationClassifier

        candidate = OutputPerturbationClassifier(loss="logistic", tol=1e-6)
        grid = {"regularization": [0.1, 1.0]}
        if declare_classes:
            return transcript_fixture(cls(candidate, grid, epsilon=1.0, classes=[0, 1, 2],
                                          stop_probability=0.5), epsilon=1.0, delta=0.0)
        return transcript_fixture(cls(candidate, grid, epsilon=8.0, delta=1e-3,
                                      stop_probability=0.5), epsilon=8.0, delta=1e-3)


def _accuracy(model: Any, X: Any, y: NDArray[Any]) -> float:
    """The share of validation rows ``model`` classifies right; a row with a non-finite
    entry counts as wrong (a per-record public rule: the query check of ``predict``
    would otherwise refuse a private row)."""
    finite = finite_rows(X)
    correct = 0
    if finite.any():
        correct = int(np.sum(model.predict(X[finite]) == y[finite]))
    return correct / int(X.shape[0])
