"""FedDPDR-DPML: federated private PCA and SVMs with weighted averaging (Wang et al. 2024
"Differentially private SVMs with knowledge aggregation", Algorithm 1).

The protocol is written against two small roles, :class:`Participant` (holds its data
and releases only differentially private objects) and :class:`Server` (aggregates what
participants release), so a real deployment can implement them over a network. Here they
run in one process; :mod:`privkit.algorithms.federated.flower` runs the same roles as Flower clients
and a Flower server strategy. Both run the phases of :data:`PHASES` through the same
:meth:`FedDPDRDPMLClassifier.participant_release`, so they give the same model.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   A first phase agrees on the label set (declared, or the union of the participants'
   private label releases); a participant without some class trains on it as on any
   other (was: refused); non-finite rows and labels outside ``classes_`` are neutral
   records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.plan import Block, Parallel

from .._audit_case import TranscriptCase
from .._bounds import clipped_rows, warn_if_preprocessed
from .._certified import certified
from .._few_labels import labels_without_model, no_model
from .._labels import LabelSet, release_label_set
from .._private_rows import private_labels, private_rows
from ..linear.erm import ObjectivePerturbationClassifier, labels_from_scores
from .pca import R, ReducedDimensionSVM, pca_block, private_subspace, transcript_fixture

__all__ = ["PHASES", "FedDPDRDPMLClassifier", "Participant", "Server"]

#: The protocol's phases, in order: every participant releases its label set (the
#: declared one, or its own private release), then its private subspace, then its private
#: model; after each phase the server aggregates and sends the result to all.
PHASES = ("labels", "subspace", "model")


@attrs.define
class Participant:
    """One data holder. Everything it sends is a private release of its own rows (or the
    declared, public label set)."""

    rows: NDArray[np.float64]  # scaled and clipped to norm <= 1, non-finite rows zeroed
    labels: NDArray[Any]
    rng: np.random.Generator

    @property
    def size(self) -> int:
        """Its number of rows: public under REPLACE_ONE (the averaging weights)."""
        return int(self.rows.shape[0])

    def private_labels(self, classes: NDArray[Any] | None, *, epsilon: float,
                       delta: float) -> NDArray[Any]:
        """Its label set: ``classes`` when declared (nothing drawn), otherwise the labels of
        its rows that a stability histogram releases, at ``LABEL_SHARE`` of ``epsilon``
        and of ``delta`` (:func:`~privkit.algorithms._labels.release_label_set`)."""
        return release_label_set(self.labels, classes=classes, epsilon=epsilon, delta=delta,
                                 relation=R, rng=self.rng, stage_uses_delta=True,
                                 owner="Participant").classes

    def private_subspace(self, *, epsilon: float, delta: float, k: int,
                         calibration: str) -> NDArray[np.float64]:
        """DPDR (Algorithm 2) on the local rows: a d x k private subspace."""
        block = pca_block(epsilon=epsilon, delta=delta, calibration=calibration)
        return private_subspace(self.rows, block, k, self.rng)

    def private_model(self, subspace: NDArray[np.float64],
                      classifier: ObjectivePerturbationClassifier) -> NDArray[np.float64]:
        """DPDR-DPML (Algorithm 3) on the local rows projected on the global subspace:
        the private ``[coef | intercept]``, one row per binary problem of the
        classifier's declared classes (a local record whose label is outside them is the
        zero augmented row; a class without local records is learnt as any other)."""
        clf = classifier.set_params(random_state=self.rng)
        clf.fit(self.rows @ subspace, self.labels)
        model: NDArray[np.float64] = np.hstack([clf.coef_, clf.intercept_[:, None]])
        return model


class Server:
    """Aggregation of the participants' releases (post-processing, free): the union of
    their label sets, and averages weighted by data size (Wang et al. 2024, Section 4.1:
    ``w_i = n_i / sum n``)."""

    @staticmethod
    def union(label_sets: Sequence[NDArray[Any]]) -> NDArray[Any]:
        """The federation's label set: every label some participant released, sorted."""
        if not label_sets:
            return np.empty(0)
        labels: NDArray[Any] = np.unique(np.concatenate(list(label_sets)))
        return labels

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
    """The participants of one fit, in the order of their sorted ids."""

    names: NDArray[Any]
    members: list[Participant]

    @property
    def sizes(self) -> list[int]:
        return [m.size for m in self.members]


class FedDPDRDPMLClassifier(ReducedDimensionSVM):
    """FedDPDR-DPML (Wang et al. 2024, Algorithm 1).

    ``fit(X, y, participant=ids)``: rows with the same id belong to one participant.
    Phase 0: the participants agree on the label set (below). Phase 1: each participant
    releases a private subspace (epsilon1 = ``pca_share`` x epsilon, delta); the server
    averages them. Phase 2: each participant trains an objective-perturbation SVM on its
    rows projected on the global subspace (epsilon2); the server averages the models.
    Both averages are weighted by data size.

    Accounting: participants hold disjoint rows, so the plan is ``Parallel`` over
    participants of their own plans (REPLACE_ONE, parts fixed by who holds the data);
    ``participant_guarantees_`` holds each participant's guarantee and ``paper_claim_``
    Theorem 4.3's ``(epsilon1 + epsilon2, delta)``. With declared classes each
    participant's plan is ``Sequential(PCA block, classifier blocks)`` and ``guarantee_``
    is the tightest bound of the whole plan at delta (when every participant has the same
    plan, that of one participant: the parallel composition of equal parts, without the
    privacy loss distribution of a million atoms the accountant builds for their
    maximum). Without, each participant first releases its own label set with a stability
    histogram (``LABEL_SHARE`` of epsilon and of delta), the federation's ``classes_`` is
    their union, and each participant's stage is calibrated to the rest; a participant's
    guarantee is its release and its stage by basic composition, and ``guarantee_`` the
    largest of them (parallel composition: the others see its data only through its
    releases).

    Parameters are those of :class:`~privkit.algorithms.DPDRDPMLClassifier` (Wang et al.'s
    defaults: epsilon 0.1, delta 1e-4, k 20, lambda 0.01).

    Public and private
    ------------------
    Public: the declared ``classes``, the schema, the participant ids and each
    participant's number of rows (REPLACE_ONE within each participant: the averaging
    weights and each budget split use them), and the parameters. Each participant maps its
    records as :class:`~privkit.algorithms.DPDRDPMLClassifier` does (rows clipped onto the
    bound, a non-finite row the zero row, a label outside ``classes_`` the zero augmented
    row of its classifier), silently; a participant that holds no record of some class
    trains that one-vs-rest problem like the others. What the server receives: the
    participants' label sets (declared, or private releases), their private subspaces,
    their private models and their sizes; the union, the averaged subspace and the
    averaged model it sends back are post-processing of those. With fewer than two labels
    in the union no learning stage runs (``predict`` as for DPDR-DPML).

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.3.0
       ``classes`` and the label phase; no refusal of a participant without some class.
    """

    def plan(self, *, n_samples: int | Sequence[int], n_features: int,
             n_classes: int | None = None) -> Block:
        """The federation's plan; ``n_samples`` is the participants' sizes (one int: one
        participant), ``n_classes`` as for DPDR-DPML."""
        labels = self._planned_labels()
        sizes = [n_samples] if isinstance(n_samples, int) else list(n_samples)
        check.positive_int("n_features", n_features, "plan")
        k = self._n_classes(labels, n_classes)
        parts = [self._participant_plan(labels, check.positive_int("n_samples", n, "plan"), k)
                 for n in sizes]
        return parts[0] if len(parts) == 1 else Parallel(*parts)

    def _participant_plan(self, labels: LabelSet, n_samples: int, n_classes: int) -> Block:
        plan = labels.plan(self._stage(labels, n_samples, n_classes)[0]
                           if n_classes >= 2 else None)
        assert plan is not None
        return plan

    def fit(self, X: Any, y: Any, participant: Any = None,
            budget_filter: Any = None) -> FedDPDRDPMLClassifier:
        """Fit; ``budget_filter`` is charged before anything is drawn (the federation's
        plan when ``classes`` is declared, the whole (epsilon, delta) otherwise)."""
        planned = self._planned_labels()
        federation = self._federation(X, y, participant)
        declared = None if planned.released else self.plan(
            n_samples=federation.sizes, n_features=self.n_features_in_)
        self._charge(planned, declared, budget_filter)
        for stale in ("components_", "coef_", "intercept_"):
            self.__dict__.pop(stale, None)
        with Ledger() as ledger:
            classes, model = self._run_protocol(federation)
        return self._finish(federation, planned, classes, model, ledger)

    def _federation(self, X: Any, y: Any, participant: Any) -> Federation:
        """The rows mapped into the unit ball and split by participant (one child stream
        each, in the order of the sorted ids)."""
        owner = type(self).__name__
        X = private_rows(X, owner=owner, estimator=self, min_rows=1)
        y = private_labels(y, X.shape[0], owner=owner)
        warn_if_preprocessed(self)
        ids = np.zeros(len(y), dtype=int) if participant is None else np.asarray(participant)
        if ids.shape != (len(y),):
            raise check.fail("participant", f"shape {ids.shape}", f"one id per row ({len(y)})",
                             owner)
        Z = clipped_rows(X, self.row_norm_bound, owner=owner)
        names = np.unique(ids)
        streams = np.random.default_rng(self.random_state).spawn(len(names))
        members = [Participant(rows=Z[ids == p], labels=y[ids == p], rng=g)
                   for p, g in zip(names, streams, strict=True)]
        return Federation(names=names, members=members)

    def participant_release(self, member: Participant, phase: str,
                            received: list[NDArray[Any]]) -> NDArray[Any]:
        """What ``member`` releases in ``phase`` (one of :data:`PHASES`), given what the
        server sent after the previous phase (nothing; ``[classes]``; ``[subspace,
        classes]``). The in-process run and every Flower client call this."""
        labels = self._planned_labels()
        if phase == "labels":
            return member.private_labels(None if labels.released else labels.classes,
                                         epsilon=float(self.epsilon),
                                         delta=float(self.delta))
        if phase not in PHASES:
            raise check.fail("phase", phase, f"one of {', '.join(PHASES)}",
                             "FedDPDRDPMLClassifier.participant_release")
        classes = received[-1]
        _, eps1, eps2, delta = self._stage(labels, member.size, classes.size)
        if phase == "subspace":
            return member.private_subspace(epsilon=eps1, delta=delta, k=int(self.n_components),
                                           calibration=self.calibration)
        return member.private_model(received[0], self._classifier(eps2, classes))

    def _run_protocol(self, federation: Federation
                      ) -> tuple[NDArray[Any], tuple[NDArray[np.float64],
                                                     NDArray[np.float64]] | None]:
        """The phases, in this process: ``(classes, (subspace, averaged [coef |
        intercept]))``, with no model when fewer than two labels were agreed."""
        members, sizes = federation.members, federation.sizes
        classes = Server.union([self.participant_release(m, "labels", []) for m in members])
        if classes.size < 2:
            return classes, None
        subspace = Server.average_subspaces(
            [self.participant_release(m, "subspace", [classes]) for m in members], sizes)
        models = [self.participant_release(m, "model", [subspace, classes]) for m in members]
        return classes, (subspace, Server.average(models, sizes))

    def _finish(self, federation: Federation, planned: LabelSet, classes: NDArray[Any],
                model: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
                ledger: Ledger) -> FedDPDRDPMLClassifier:
        self.classes_ = classes
        if model is not None:
            subspace, averaged = model
            self.components_ = subspace.T
            self.coef_, self.intercept_ = averaged[:, :-1], averaged[:, -1]
        self.participants_ = federation.names
        k = classes.size
        parts = [self._participant_plan(planned, n, k) for n in federation.sizes]
        self.plan_ = parts[0] if len(parts) == 1 else Parallel(*parts)
        self.ledger_ = ledger
        guarantees: list[Guarantee] = []
        for n in federation.sizes:
            stage, _, _, delta = self._stage(planned, n, k) if k >= 2 else (
                None, 0.0, 0.0, float(self.delta))
            part = planned.guarantee(None if stage is None else certified(stage, delta=delta),
                                     delta)
            assert part is not None
            guarantees.append(part)
        self.participant_guarantees_ = guarantees
        if planned.released:  # parallel composition of the participants' own guarantees
            self.guarantee_: Guarantee = max(
                guarantees, key=lambda g: g.epsilon_at(float(self.delta)))
        else:  # participants with the same plan: the plan of one (max of equal profiles)
            distinct = list(dict.fromkeys(parts))
            self.guarantee_ = certified(distinct[0] if len(distinct) == 1 else self.plan_,
                                        delta=float(self.delta))
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if not hasattr(self, "coef_"):
            raise no_model(self)
        scores: NDArray[np.float64] = ((X / self.row_norm_bound) @ self.components_.T
                                       @ self.coef_.T + self.intercept_)
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        check_is_fitted(self)
        if not hasattr(self, "coef_"):
            rows = validate_data(self, X, dtype=np.float64, reset=False)
            return labels_without_model(self, rows.shape[0])
        return labels_from_scores(self.decision_function(X), self.classes_)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """Two participants of 100 rows (alternate rows of the 200 of
        :func:`~privkit.algorithms.federated.pca.transcript_fixture`, 50 records of each label
        each), one component, epsilon 8 and delta 1e-3: released, each participant keeps
        each label but for a chance near 2e-5, and a label held by one record almost
        never; declared: ``classes=[0, 1, 2]``."""
        model = cls(epsilon=8.0, delta=1e-3, n_components=1, regularization=0.1,
                    classes=[0, 1, 2] if declare_classes else None)
        case = transcript_fixture(model, rows_per_label=100, epsilon=8.0, delta=1e-3)
        return attrs.evolve(case, fit_params={"participant": np.arange(200) % 2})
