"""Deliberately leaky toy estimators, one per channel of issue 22, and a correct one.

The transcript auditor's own test suite, as :mod:`privkit.audits.broken` is the
mechanism auditor's: :class:`PrivateCentroids` is a nearest-centroid classifier whose
whole transcript is private, and each class of :data:`LEAKY` is the same estimator with
one classic mistake that no accountant sees. Every mistake makes some part of the
transcript differ *with certainty* on the pair of its channel, so its true epsilon on
that pair is infinite; a sound transcript auditor flags each one on its channel and never
flags :class:`PrivateCentroids`.

======================  ==============  ===============================================
class                   channel         the mistake
======================  ==============  ===============================================
``UniqueLabels``        new_label       ``classes_ = np.unique(y)``
``CountsRows``          record          ``n_samples_ = len(X)`` under add-remove
``RefusesSmallData``    record          refuses to fit when n < ``min_samples``
``EchoesObjective``     record          an exception message echoes a noiseless value
``WarnsOnClipping``     beyond_bound    warns only when some row was clipped
``RefusesNonFinite``    non_finite      refuses a row with a NaN
``LogsRowCount``        record          logs the number of rows under add-remove
======================  ==============  ===============================================

Importing this module imports :mod:`privkit.algorithms` (scikit-learn).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.algorithms._audit_case import TranscriptCase
from privkit.algorithms._labels import (
    LabelSet,
    declared_classes,
    release_label_set,
    total_claim,
)
from privkit.algorithms._spend import charge
from privkit.errors import InvalidParameterError, PrivkitError
from privkit.guarantees import Guarantee, PureDP
from privkit.mechanisms import Laplace
from privkit.neighbouring import Neighbouring

__all__ = ["LEAKY", "CountsRows", "EchoesObjective", "LogsRowCount", "PrivateCentroids",
           "RefusesNonFinite", "RefusesSmallData", "UniqueLabels", "WarnsOnClipping"]


class ClippedRowsWarning(UserWarning):
    """The warning of the clipping toy below: a count of clipped rows (privkit's own
    clipping is silent since 0.3.0, so the toy keeps the old warning to itself)."""


_PARAMS = ("epsilon", "delta", "bound", "classes", "relation", "expected_size", "random_state")


class PrivateCentroids:
    """Nearest noisy class centroids, private end to end (the correct toy).

    Each class's sum of rows is released with Laplace noise; ``centroids_`` divides the
    noisy sums by the public size per class, and ``predict`` returns the class of the
    nearest centroid.

    Parameters
    ----------
    epsilon, delta : float
        The total budget. ``delta`` is spent only on releasing a label set that is not
        declared.
    bound : float
        Every entry is clipped onto ``[-bound, bound]``, silently.
    classes : array-like or None
        The public label set; None: released privately
        (:func:`~privkit.algorithms._labels.release_label_set`).
    relation : {"replace_one", "add_remove"}
    expected_size : int
        The declared size of the data under add-remove (n is private there).
    random_state : int, Generator or None

    Notes
    -----
    Public and private: public are ``epsilon``, ``delta``, ``bound``, ``classes`` when
    given, the number of features, and n under replace-one only. A row with a non-finite
    entry, and a record whose label is not in ``classes_``, adds nothing to any sum: under
    add-remove it is removed; under replace-one it is a zero row, which moves nothing.
    The sums of rows clipped to the box move by at most ``2 d bound`` in L1 when a record
    is replaced (it leaves one class and joins another) and ``d bound`` when one is added,
    so Laplace noise of scale ``sensitivity / epsilon_stage`` makes them
    ``epsilon_stage``-DP (Dwork, McSherry, Nissim, Smith 2006, "Calibrating noise to
    sensitivity in private data analysis", Proposition 1).
    """

    #: The channel that catches the leak (None for the correct estimator).
    channel: ClassVar[str | None] = None
    #: The mistake, in words.
    leak: ClassVar[str] = ""

    def __init__(self, *, epsilon: float = 2.0, delta: float = 1e-2, bound: float = 1.0,
                 classes: Any = None, relation: str = "replace_one",
                 expected_size: int = 200, random_state: Any = None) -> None:
        self.epsilon, self.delta, self.bound, self.classes = epsilon, delta, bound, classes
        self.relation, self.expected_size, self.random_state = (relation, expected_size,
                                                                random_state)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    @classmethod
    def _param_names(cls) -> tuple[str, ...]:
        return _PARAMS

    def set_params(self, **params: Any) -> PrivateCentroids:
        for name, value in params.items():
            if name not in self._param_names():
                raise check.fail(name, value, f"one of {', '.join(self._param_names())}",
                                 type(self).__name__)
            setattr(self, name, value)
        return self

    # -- the hooks each leaky variant overrides ------------------------------------------

    def _label_set(self, y: NDArray[Any], declared: NDArray[Any] | None,
                   rng: np.random.Generator) -> LabelSet:
        return release_label_set(y, classes=declared, epsilon=self.epsilon, delta=self.delta,
                                 relation=self._relation(), rng=rng, stage_uses_delta=False,
                                 owner=type(self).__name__)

    def _rows(self, X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Rows clipped onto the box, and which rows are finite (the others are neutral)."""
        finite = np.all(np.isfinite(X), axis=1)
        rows = np.where(finite[:, None], np.clip(np.nan_to_num(X), -self.bound, self.bound),
                        0.0)
        return rows, finite

    def _check_size(self, n: int) -> None:
        """Refusals that depend on n (none: n may be private)."""

    def _publish(self, n: int) -> None:
        """Attributes beyond the centroids (none)."""

    # -- fit and predict -------------------------------------------------------------------

    def _relation(self) -> Neighbouring:
        return Neighbouring.parse(self.relation, owner=type(self).__name__)

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateCentroids:
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        check.delta("delta", self.delta, owner)
        check.positive_finite("bound", self.bound, owner)
        check.positive_int("expected_size", self.expected_size, owner)
        relation = self._relation()
        declared = declared_classes(self.classes, owner)
        X = np.asarray(X, dtype=float)
        labels_in = np.asarray(y)
        if X.ndim != 2 or labels_in.shape != X.shape[:1]:
            raise check.fail("X", "data of another shape", "a 2-D array with one label in y "
                             "per row", owner)
        rng = np.random.default_rng(self.random_state)
        if declared is None:
            charge(self, total_claim(eps, self.delta, relation, owner), budget_filter)
        labels = self._label_set(labels_in, declared, rng)
        rows, keep = self._rows(X)
        n, d = X.shape
        self._check_size(n)
        codes = labels.codes(labels_in)
        keep &= codes >= 0
        k = labels.classes.size
        stage: Guarantee | None = None
        centroids = np.zeros((k, d))
        if k >= 2:
            factor = 2.0 if relation is Neighbouring.REPLACE_ONE else 1.0
            block = Laplace.for_epsilon(eps - labels.epsilon, relation=relation,
                                        sensitivity=factor * d * float(self.bound))
            if declared is not None:
                charge(self, block, budget_filter)
            sums = np.zeros((k, d))
            np.add.at(sums, codes[keep], rows[keep])
            size = n if relation is Neighbouring.REPLACE_ONE else int(self.expected_size)
            centroids = block.release(sums, rng=rng) / max(1.0, size / k)
            stage = PureDP(epsilon=eps - labels.epsilon)
        self.classes_ = labels.classes
        self.centroids_ = centroids
        self.n_features_in_ = d
        self.guarantee_ = labels.guarantee(stage, 0.0)
        self._publish(n)
        return self

    def predict(self, X: Any) -> NDArray[Any]:
        """The class of the nearest centroid; the one released label if only one was."""
        owner = f"{type(self).__name__}.predict"
        if not hasattr(self, "classes_"):
            raise check.fail("self", type(self).__name__, "a fitted estimator", owner)
        queries = np.asarray(X, dtype=float)
        if queries.ndim != 2 or queries.shape[1] != self.n_features_in_:
            raise check.fail("X", f"an array of shape {queries.shape}", f"a 2-D array with "
                             f"{self.n_features_in_} columns", owner)
        if not np.all(np.isfinite(queries)):
            raise check.fail("X", "query points with NaN or infinity", "finite query points",
                             owner)
        if self.classes_.size == 0:
            raise check.fail("self", "an estimator whose label release published no label",
                             "a fitted estimator with at least one label", owner,
                             "declare classes, or fit with a larger epsilon")
        if self.classes_.size == 1:
            return np.full(len(queries), self.classes_[0])
        distances = ((queries[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        predicted: NDArray[Any] = self.classes_[np.argmin(distances, axis=1)]
        return predicted

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """200 rows in two classes around (-0.5, 0) and (0.5, 0) inside the unit box;
        the new label is 2; the worst case replaces a class-0 row at one corner of the
        box by a class-1 row at the opposite corner (replace-one)."""
        fixture = np.random.default_rng(20260)
        X = np.clip(fixture.normal(0.0, 0.3, (200, 2)), -0.9, 0.9)
        y = np.repeat([0, 1], 100)
        X[:, 0] += np.where(y == 0, -0.05, 0.05)
        estimator = cls(classes=[0, 1, 2] if declare_classes else None, **cls._case_params())
        X = cls._case_data(X)
        y = y[:len(X)]
        relation = estimator._relation()
        worst = None
        if relation is Neighbouring.REPLACE_ONE:
            first, second = X.copy(), X.copy()
            first[0], second[0] = [1.0, 1.0], [-1.0, -1.0]
            worst = ((first, y.copy()), (second, np.concatenate([[1], y[1:]])))
        probes = np.array([[x, z] for x in (-0.8, -0.3, 0.3, 0.8) for z in (-0.5, 0.5)])
        return TranscriptCase(estimator=estimator, X=X, y=y, relation=relation,
                              epsilon=float(estimator.epsilon), delta=float(estimator.delta),
                              record=np.array([0.2, 0.1]), label=0, new_label=2,
                              at_bound=np.array([1.0, 1.0]), beyond_bound=np.array([3.0, -3.0]),
                              probes=probes, worst_case=worst)

    @classmethod
    def _case_params(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def _case_data(cls, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return X


class UniqueLabels(PrivateCentroids):
    """Publishes ``classes_ = np.unique(y)``, whatever ``classes`` says, at no cost."""

    channel = "new_label"
    leak = "classes_ = np.unique(y)"

    def _label_set(self, y: NDArray[Any], declared: NDArray[Any] | None,
                   rng: np.random.Generator) -> LabelSet:
        return LabelSet(classes=np.unique(y))


class CountsRows(PrivateCentroids):
    """Declares add-remove (n private) and publishes ``n_samples_``."""

    channel = "record"
    leak = "n_samples_ = len(X) under add-remove"

    def _publish(self, n: int) -> None:
        self.n_samples_ = n

    @classmethod
    def _case_params(cls) -> dict[str, Any]:
        return {"relation": "add_remove"}


class RefusesSmallData(PrivateCentroids):
    """Declares add-remove and refuses to fit fewer than ``min_samples`` rows: whether
    ``fit`` succeeds reveals n (its message names no value)."""

    channel = "record"
    leak = "fit refuses n < min_samples under add-remove"

    def __init__(self, *, min_samples: int = 1, **params: Any) -> None:
        super().__init__(**params)
        self.min_samples = min_samples

    @classmethod
    def _param_names(cls) -> tuple[str, ...]:
        return (*_PARAMS, "min_samples")

    def _check_size(self, n: int) -> None:
        if n < self.min_samples:
            raise InvalidParameterError("too few records to fit: raise the data size or "
                                        "lower min_samples")

    @classmethod
    def _case_params(cls) -> dict[str, Any]:
        return {"relation": "add_remove", "min_samples": 200}

    @classmethod
    def _case_data(cls, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return X[:199]  # one short of min_samples: the added record makes fit succeed


class ObjectiveNotConvergedError(PrivkitError):
    """The toy solver of :class:`EchoesObjective` stopped early."""


class EchoesObjective(PrivateCentroids):
    """Runs a toy solver that never converges in one iteration, and says so with the
    noiseless objective (the mean squared norm of the clipped rows) in the message."""

    channel = "record"
    leak = "an exception message echoes a noiseless function of the data"

    def _check_size(self, n: int) -> None:
        rows, keep = self._rows(self._last_X)
        objective = float(np.mean(np.sum(rows[keep] ** 2, axis=1)))
        raise ObjectiveNotConvergedError(f"did not converge in 1 iteration (objective "
                                    f"{objective:.9f})")

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateCentroids:
        self._last_X = np.asarray(X, dtype=float)
        return super().fit(X, y, budget_filter)


class WarnsOnClipping(PrivateCentroids):
    """Clips rows onto the box, and warns how many only when some row was clipped."""

    channel = "beyond_bound"
    leak = "a warning that fires only when a row is clipped"

    def _rows(self, X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        rows, finite = super()._rows(X)
        clipped = int(np.sum(np.any(np.abs(np.nan_to_num(X)) > self.bound, axis=1)))
        if clipped:
            warnings.warn(ClippedRowsWarning(f"{clipped} rows were clipped onto the bound"),
                          stacklevel=3)
        return rows, finite


class RefusesNonFinite(PrivateCentroids):
    """Refuses data with a NaN or an infinity instead of mapping the row to a neutral one."""

    channel = "non_finite"
    leak = "fit refuses a row with a NaN"

    def _rows(self, X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        if not np.all(np.isfinite(X)):
            raise check.fail("X", "data with NaN or infinity", "finite data",
                             type(self).__name__)
        return super()._rows(X)


class LogsRowCount(PrivateCentroids):
    """Declares add-remove (n private) and logs how many rows it fitted on."""

    channel = "record"
    leak = "a log line with n under add-remove"

    def _publish(self, n: int) -> None:
        logging.getLogger(__name__).warning("fitted on %d rows", n)

    @classmethod
    def _case_params(cls) -> dict[str, Any]:
        return {"relation": "add_remove"}


#: Every leaky toy by name; ``cls.channel`` is the channel that catches it.
LEAKY: dict[str, type[PrivateCentroids]] = {cls.__name__: cls for cls in (
    UniqueLabels, CountsRows, RefusesSmallData, EchoesObjective, WarnsOnClipping,
    RefusesNonFinite, LogsRowCount)}
