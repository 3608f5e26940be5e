"""FedDPDR-DPML: federated private PCA and SVMs with weighted averaging (Wang et al. 2024 Alg. 1).

The protocol is written against two small roles, :class:`Participant` (holds its data
and releases only differentially private objects) and :class:`Server` (aggregates what
participants release), so a real deployment can implement them over a network. Here they
run in one process; :mod:`privkit.algorithms.flower` runs the same roles as Flower clients
and a Flower server strategy.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.plan import Block, Parallel

from ._bounds import clipped_rows, warn_if_preprocessed
from .erm import ObjectivePerturbationClassifier, labels_from_scores
from .pca import ReducedDimensionSVM, pca_block, private_subspace, spend

__all__ = ["FedDPDRDPMLClassifier", "Participant", "Server"]


@attrs.define
class Participant:
    """One data holder. Everything it sends is a private release of its own rows."""

    rows: NDArray[np.float64]  # already scaled and clipped to norm <= 1
    labels: NDArray[Any]
    rng: np.random.Generator

    @property
    def size(self) -> int:
        return int(self.rows.shape[0])

    def private_subspace(self, epsilon: float, delta: float, k: int,
                         calibration: str) -> NDArray[np.float64]:
        """DPDR (Algorithm 2) on the local rows: a d x k private subspace."""
        return private_subspace(self.rows, pca_block(epsilon, delta, calibration), k, self.rng)

    def private_model(self, subspace: NDArray[np.float64], classes: NDArray[Any],
                      classifier: ObjectivePerturbationClassifier) -> NDArray[np.float64]:
        """DPDR-DPML (Algorithm 3) on the local rows projected on the global subspace:
        the private ``[coef | intercept]``, one row per binary problem."""
        own = np.unique(self.labels)
        if not np.array_equal(own, classes):
            raise check.fail("labels", f"classes {own.tolist()}",
                             f"every class of the federation ({classes.tolist()})",
                             "Participant.private_model",
                             "each participant needs examples of every class")
        clf = classifier.set_params(random_state=self.rng)
        clf.fit(self.rows @ subspace, self.labels)
        model: NDArray[np.float64] = np.hstack([clf.coef_, clf.intercept_[:, None]])
        return model


class Server:
    """Weighted averaging by data size (Wang et al. 2024, Section 4.1: ``w_i = n_i / sum n``)."""

    @staticmethod
    def average(releases: list[NDArray[np.float64]], sizes: list[int]) -> NDArray[np.float64]:
        weights = np.asarray(sizes, dtype=float) / float(sum(sizes))
        result: NDArray[np.float64] = np.tensordot(weights, np.stack(releases), axes=1)
        return result

    @staticmethod
    def average_subspaces(subspaces: list[NDArray[np.float64]], sizes: list[int]
                          ) -> NDArray[np.float64]:
        """Weighted average of the participants' subspaces, each column's sign aligned to
        the first participant's (eigenvectors are defined up to sign), re-orthonormalised
        by QR. Post-processing of private releases, so free. (The paper averages the
        matrices as they are; without alignment, opposite signs cancel.)"""
        reference = subspaces[0]
        aligned = [u * np.where(np.sum(u * reference, axis=0) < 0, -1.0, 1.0)
                   for u in subspaces]
        q, r = np.linalg.qr(Server.average(aligned, sizes))
        orthonormal: NDArray[np.float64] = q * np.where(np.diag(r) < 0, -1.0, 1.0)
        return orthonormal


@attrs.define
class Federation:
    """The participants of one fit, in the order of their sorted ids, with their budgets
    ``(epsilon1, epsilon2)`` and the number of components k."""

    names: NDArray[Any]
    members: list[Participant]
    budgets: list[tuple[float, float]]
    n_components: int

    @property
    def sizes(self) -> list[int]:
        return [m.size for m in self.members]


class FedDPDRDPMLClassifier(ReducedDimensionSVM):
    """FedDPDR-DPML (Wang et al. 2024, Algorithm 1).

    ``fit(X, y, participant=ids)``: rows with the same id belong to one participant.
    Phase 1: each participant releases a private subspace (epsilon1 = ``pca_share`` x
    epsilon, delta); the server averages them. Phase 2: each participant trains an
    objective-perturbation SVM on its rows projected on the global subspace (epsilon2);
    the server averages the models. Both averages are weighted by data size.

    Accounting: participants hold disjoint rows, so the plan is ``Parallel`` over
    participants of ``Sequential(PCA block, classifier blocks)`` (REPLACE_ONE, parts fixed
    by who holds the data); ``guarantee_`` is the tightest bound at delta, every
    participant's guarantee is ``participant_guarantees_``, and ``paper_claim_`` is
    Theorem 4.3's ``(epsilon1 + epsilon2, delta)``.

    Parameters are those of :class:`~privkit.algorithms.DPDRDPMLClassifier` (Wang et al.'s
    defaults: epsilon 0.1, delta 1e-4, k 20, lambda 0.01).

    .. versionadded:: 0.1.0
    """

    def plan(self, *, n_samples: int | Sequence[int], n_features: int, n_classes: int = 2
             ) -> Block:
        """The federation's plan; ``n_samples`` is the participants' sizes (one int: one
        participant)."""
        participant_sizes = [n_samples] if isinstance(n_samples, int) else list(n_samples)
        check.positive_int("n_features", n_features, "plan")
        parts = [self._part_plan(n, n_classes, *self._budget(n, n_classes))
                 for n in participant_sizes]
        return parts[0] if len(parts) == 1 else Parallel(*parts)

    def fit(self, X: Any, y: Any, participant: Any = None,
            budget_filter: Any = None) -> FedDPDRDPMLClassifier:
        """Fit; ``budget_filter`` is charged the federation's plan before anything runs."""
        federation = self._federation(X, y, participant)
        spend(budget_filter, self.plan_, self.delta)
        with Ledger() as ledger:
            self.components_, averaged = self._run_protocol(federation)
        return self._finish(federation, averaged, ledger)

    def _federation(self, X: Any, y: Any, participant: Any) -> Federation:
        """Validate, split the rows by participant (one child stream each, in the order of
        the sorted ids), and set ``classes_`` and ``plan_``."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        warn_if_preprocessed(self)
        ids = np.zeros(len(y), dtype=int) if participant is None else np.asarray(participant)
        if ids.shape != (len(y),):
            raise check.fail("participant", f"shape {ids.shape}", f"one id per row ({len(y)})",
                             type(self).__name__)
        k = check.positive_int("n_components", self.n_components, type(self).__name__)
        Z = clipped_rows(X, self.row_norm_bound, owner=type(self).__name__)
        check_classification_targets(y)  # as the inner classifier did before classes=
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        names = np.unique(ids)
        streams = np.random.default_rng(self.random_state).spawn(len(names))
        members = [Participant(rows=Z[ids == p], labels=y[ids == p], rng=g)
                   for p, g in zip(names, streams, strict=True)]
        sizes = [m.size for m in members]
        budgets = [self._budget(n, self.classes_.size) for n in sizes]
        self.plan_ = self.plan(n_samples=sizes, n_features=X.shape[1],
                               n_classes=self.classes_.size)
        return Federation(names=names, members=members, budgets=budgets, n_components=k)

    def _run_protocol(self, federation: Federation
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Both phases, in this process: ``(components, averaged [coef | intercept])``."""
        members, sizes = federation.members, federation.sizes
        subspaces = [m.private_subspace(e1, self.delta, federation.n_components,
                                        self.calibration)
                     for m, (e1, _) in zip(members, federation.budgets, strict=True)]
        components = Server.average_subspaces(subspaces, sizes).T
        models = [m.private_model(components.T, self.classes_,
                                  self._classifier(e2, self.classes_))
                  for m, (_, e2) in zip(members, federation.budgets, strict=True)]
        return components, Server.average(models, sizes)

    def _finish(self, federation: Federation, averaged: NDArray[np.float64],
                ledger: Ledger) -> FedDPDRDPMLClassifier:
        self.coef_, self.intercept_ = averaged[:, :-1], averaged[:, -1]
        self.participants_ = federation.names
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(self.plan_, delta=self.delta).guarantee
        parts = self.plan_.parts if isinstance(self.plan_, Parallel) else (self.plan_,)
        self.participant_guarantees_ = [tightest(p, delta=self.delta).guarantee for p in parts]
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores: NDArray[np.float64] = ((X / self.row_norm_bound) @ self.components_.T
                                       @ self.coef_.T + self.intercept_)
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        return labels_from_scores(self.decision_function(X), self.classes_)
