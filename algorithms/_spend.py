"""How an estimator spends its budget: on a caller's ``BudgetFilter`` before any noise is
drawn, and with a word when it is fitted where spending is easy to lose count of.

Every private estimator's ``fit`` calls :func:`charge` once, with the block it is about to
run (its plan, or for a classifier with a private label set the whole
``(epsilon, delta)`` as a claimed block), before it draws anything.

Fits that scikit-learn repeats. A search (``GridSearchCV``, ``RandomizedSearchCV``, the
halving searches) or a cross-validation (``cross_val_score``, ``cross_validate``,
``cross_val_predict``) fits a clone of the estimator once per candidate and split, plus
once more to refit: every fit spends the estimator's whole budget on (part of) the same
data, and every fitted model's ``guarantee_`` reports one fit. With a filter,
``search.fit(X, y, budget_filter=budget)`` (scikit-learn routes it to every fit; with
``n_jobs > 1`` pass ``budget.shared()``), every fit is charged. Without one, :func:`charge`
warns (:class:`~privkit.UnaccountedSpendWarning`) with each fit's cost, the number of
fits and their total by basic composition (Dwork, Roth 2014, "The algorithmic
foundations of differential privacy", Theorem 3.16).

How a search is recognised. scikit-learn calls an estimator's ``fit`` from its
model-selection functions that fit and score (``_fit_and_score`` and its kin, which also
receive the split and candidate counts and the search) and, for the final refit, from the
search's own ``fit``; :func:`charge` looks for those callers on the call stack, so a fit
anywhere else never warns, nor does a fit that another privkit estimator makes of its own
candidates (which that estimator accounts for). The count is read from what scikit-learn
passes those callers; where it is not there, the message says the count is unknown rather
than guess. Whether the warning fires depends on the call stack only, never on the data,
and its numbers are the estimator's ``epsilon`` and ``delta`` and the search's own size,
which the search already publishes to the same caller (``n_splits_``, one ``cv_results_``
column per split; a splitter such as ``LeaveOneOut`` makes that size the row count).

Where the warning appears. scikit-learn 1.9 hands the parent's warning filters to its
joblib workers but does not send the workers' warnings back, so with ``n_jobs > 1`` a fit
in a worker process warns in that worker: the message is printed on the worker's standard
error, which loky workers share with the parent (a terminal or notebook shows it), but the
parent's ``warnings`` machinery (``catch_warnings``, ``pytest.warns``, logging of
warnings) never sees it. A search's refit runs in the parent, and it knows the exact
count, so ``GridSearchCV`` and ``RandomizedSearchCV`` (``refit=True``, the default) warn in
the parent with the true total whatever ``n_jobs``. ``cross_val_score`` and
``cross_validate`` with ``n_jobs > 1``, and searches with ``refit=False``, run no privkit
code in the parent; only a filter (``budget.shared()``) counts them there.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from types import FrameType
from typing import Any

from privkit import _validation as check
from privkit.errors import UnaccountedSpendWarning
from privkit.filter import BudgetFilter
from privkit.plan import Block
from privkit.shared_filter import SharedBudgetFilter

__all__ = ["charge"]

#: scikit-learn's cross-validation functions that fit once per split (their frames give
#: the number of splits), and others that fit through ``_fit_and_*`` more often than that
#: (named, their count left unknown).
_ONCE_PER_SPLIT = ("cross_validate", "cross_val_predict", "cross_val_score")
_CV_FUNCTIONS = (*_ONCE_PER_SPLIT, "learning_curve", "validation_curve",
                 "permutation_test_score")


def charge(estimator: Any, block: Block, budget_filter: Any, *,
           delta: float | None = None) -> None:
    """Spend ``block`` on ``budget_filter`` (if given) before any noise is drawn; a block
    that does not fit raises :class:`~privkit.errors.BudgetExceededError` with nothing run.

    ``budget_filter`` is a :class:`~privkit.BudgetFilter` or a
    :class:`~privkit.SharedBudgetFilter`. ``delta`` is the estimator's delta, for a block
    that is not pure: a basic-composition filter charges such a block its epsilon at that
    delta (it asks every approximate block for one); the other filters compose the block's
    own guarantee and take none. Without a filter, a fit
    made by a scikit-learn search or cross-validation warns with the total it spends (see
    the module docstring).
    """
    if budget_filter is None:
        _warn_if_repeated(estimator)
        return
    check.instance("budget_filter", budget_filter, (BudgetFilter, SharedBudgetFilter),
                   type(estimator).__name__)
    if delta and budget_filter.accountant == "basic":
        budget_filter.spend(block, delta=delta)
    else:
        budget_filter.spend(block)


class _Level:
    """One scikit-learn loop that fits the estimator repeatedly: a search or a
    cross-validation, with what is known of its size."""

    def __init__(self, *, owner: Any, name: str | None, candidates: int | None,
                 splits: int | None, refit: bool, varies_budget: bool) -> None:
        self.owner = owner
        self.name = name
        self.candidates = candidates
        self.splits = splits
        self.refit = refit
        self.varies_budget = varies_budget

    @property
    def fits(self) -> int | None:
        if self.splits is None:
            return None
        return (self.candidates or 1) * self.splits + int(self.refit)

    def describe(self) -> str:
        name = f"scikit-learn's {self.name}" if self.name else "a scikit-learn cross-validation"
        if self.fits is None:
            return f"{name} (its number of fits is not known where this fit runs)"
        parts = [f"{self.splits} split{'s' * (self.splits != 1)}"]
        if self.candidates is not None:
            parts.insert(0, f"{self.candidates} candidate{'s' * (self.candidates != 1)}")
        count = " x ".join(parts) + (" + 1 refit" if self.refit else "")
        return f"{name} ({count} = {self.fits} fits)"


def _warn_if_repeated(estimator: Any) -> None:
    frame = inspect.currentframe()
    try:
        # skip this function and charge: start from the estimator's fit
        start = frame.f_back.f_back if frame is not None and frame.f_back else None
        levels = _repeating_levels(start, estimator)
    finally:
        del frame
    if levels:
        warnings.warn(_message(estimator, levels), UnaccountedSpendWarning, stacklevel=4)


def _repeating_levels(frame: FrameType | None, estimator: Any) -> list[_Level]:
    """The scikit-learn loops, innermost first, that this fit is part of (empty: none, or
    the fit is made by another privkit estimator, which accounts for it)."""
    levels: list[_Level] = []
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        name = frame.f_code.co_name
        if not levels and name == "fit" and _fitted_by_privkit(frame, module, estimator):
            return []  # a candidate fitted by a privkit meta-estimator
        if module.startswith("sklearn.model_selection"):
            _read_frame(frame, name, levels)
        frame = frame.f_back
    return levels


def _fitted_by_privkit(frame: FrameType, module: str, estimator: Any) -> bool:
    """Whether ``frame`` is the ``fit`` of a privkit estimator other than ``estimator``."""
    owner = frame.f_locals.get("self")
    return owner is not None and owner is not estimator and (
        module.startswith("privkit.") or type(owner).__module__.startswith("privkit."))


def _read_frame(frame: FrameType, name: str, levels: list[_Level]) -> None:
    """Add the loop that ``frame`` (a scikit-learn model-selection frame) runs, or fill in
    what it knows of the loop found below it."""
    local = frame.f_locals
    if name.startswith("_fit_and_"):
        caller = local.get("caller")
        splits, candidates = local.get("split_progress"), local.get("candidate_progress")
        parameters = local.get("parameters") or {}
        levels.append(_Level(
            owner=caller, name=None if caller is None else type(caller).__name__,
            candidates=_count(candidates), splits=_count(splits),
            refit=caller is not None and bool(getattr(caller, "refit", False)),
            varies_budget=_sets_budget(parameters)))
        if caller is not None and "Halving" in type(caller).__name__:
            levels[-1].splits = None  # one round of several: the total is only known at refit
    elif name == "fit" and _is_search(owner := local.get("self")):
        if levels and levels[-1].owner is owner:
            return  # the search whose fits were counted below
        results = local.get("results")
        params = results.get("params") if isinstance(results, dict) else None
        if not isinstance(params, list):
            params = None
        levels.append(_Level(
            owner=owner, name=type(owner).__name__,
            candidates=None if params is None else len(params),
            splits=None if params is None else _positive_int(getattr(owner, "n_splits_", None)),
            refit=True, varies_budget=params is not None and any(map(_sets_budget, params))))
    elif name in _CV_FUNCTIONS and levels and levels[-1].name is None:
        level = levels[-1]
        level.name = name
        level.splits = _splits_of(local) if name in _ONCE_PER_SPLIT else None
    elif name in _CV_FUNCTIONS and levels and levels[-1].name in _CV_FUNCTIONS:
        levels[-1].name = name  # cross_val_score calls cross_validate: name the outer


def _splits_of(local: dict[str, Any]) -> int | None:
    """The number of splits of a cross-validation function, from its frame (its ``cv``
    splitter after ``check_cv``, or its materialised list of splits)."""
    for key in ("splits", "indices"):
        if isinstance(local.get(key), list):
            return _positive_int(len(local[key]))
    cv: Any = local.get("cv")
    try:
        return _positive_int(cv.get_n_splits(local.get("X"), local.get("y"),
                                             local.get("groups")))
    except Exception:
        return None


def _is_search(obj: Any) -> bool:
    return obj is not None and hasattr(obj, "n_splits_") and hasattr(obj, "refit") \
        and hasattr(obj, "cv")


def _count(progress: Any) -> int | None:
    """The total of scikit-learn's ``(index, total)`` progress pair."""
    if isinstance(progress, tuple | list) and len(progress) == 2:
        return _positive_int(progress[1])
    return None


def _positive_int(value: Any) -> int | None:
    return int(value) if isinstance(value, numbers.Integral) and int(value) >= 1 else None


def _sets_budget(parameters: Any) -> bool:
    return isinstance(parameters, dict) and bool({"epsilon", "delta"} & set(parameters))


def _cost(estimator: Any) -> tuple[float, float] | None:
    """One fit's cost: the estimator's ``epsilon`` and ``delta`` (privkit estimators take
    their total budget there and calibrate each fit to spend exactly that)."""
    try:
        params = estimator.get_params(deep=False)
    except Exception:
        return None
    epsilon, delta = params.get("epsilon"), params.get("delta", 0.0)
    if isinstance(epsilon, numbers.Real) and isinstance(delta, numbers.Real):
        return float(epsilon), float(delta)
    return None


def _message(estimator: Any, levels: list[_Level]) -> str:
    owner = type(estimator).__name__
    where = " inside ".join(level.describe() for level in levels)
    cost = _cost(estimator)
    this = ("its whole budget" if cost is None
            else f"epsilon={cost[0]:.6g}, delta={cost[1]:.3g}")
    counts = [level.fits for level in levels]
    if any(level.varies_budget for level in levels):
        spent = (f"This fit spends {this}, and the candidates set epsilon or delta: "
                 "together the fits spend the sum of their costs")
    elif None in counts:
        spent = f"Each fit spends {this}: together they spend that times the number of fits"
    else:
        fits = 1
        for count in counts:
            fits *= count or 1
        total = (f"{fits} times that" if cost is None
                 else f"up to epsilon={fits * cost[0]:.6g}, delta={fits * cost[1]:.3g}")
        spent = f"Each fit spends {this}: together the {fits} fits spend {total}"
    return (
        f"{owner}.fit ran without a budget_filter in {where}. {spent} on the same data "
        "by basic composition (Dwork and Roth 2014, Theorem 3.16), while each fitted "
        "model's guarantee_ reports one fit. Count and cap the total with a filter: "
        "search.fit(X, y, budget_filter=budget) with budget = privkit.BudgetFilter("
        "epsilon=..., delta=...); scikit-learn passes it to every fit (with n_jobs > 1 "
        "pass budget.shared())"
    )
