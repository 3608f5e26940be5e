"""How to audit each built-in mechanism on a worst-case pair, at a given epsilon.

``CASES[name](epsilon, delta)`` builds the mechanism calibrated to ``epsilon`` (and, for
approximate-DP mechanisms, ``delta``, default 1e-5; pure mechanisms ignore it), a batched
system that draws its outputs, the neighbouring pair on which its privacy loss is
largest, and the claim to test. Every registered mechanism with a
:meth:`~privkit.Mechanism.worst_case` is a case (its pair lives next to it); algorithms
register theirs with :func:`register`.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
import numpy as np

from privkit.audits.pairs import NeighbouringPair
from privkit.mechanism import Mechanism, registered_mechanisms
from privkit.neighbouring import Neighbouring

__all__ = ["CASES", "AuditCase", "register"]

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
#: The delta at which approximate-DP mechanisms are calibrated and audited.
AUDIT_DELTA = 1e-5


@attrs.frozen
class AuditCase:
    """A system (batched), its worst-case pair, and the claim (epsilon, delta)."""

    system: Callable[[Any, np.random.Generator, int], Any] = attrs.field(eq=False)
    pair: NeighbouringPair
    epsilon: float
    delta: float
    #: Cap on draws per side for slow systems (each draw of objective perturbation solves
    #: an optimisation problem); ``privkit audit`` uses the smaller of this and --trials.
    max_trials: int | None = None
    #: The largest fraction of the claim this pair can certify, where it is known not to
    #: reach the claim (see :class:`privkit.WorstCase`).
    ceiling: float = 1.0


_ALGORITHMS: dict[str, Callable[..., AuditCase]] = {}


def register(name: str, build: Callable[..., AuditCase]) -> None:
    """Make ``privkit audit NAME`` run ``build(epsilon, delta)`` (for systems that are not
    a single mechanism; a mechanism's case comes from its ``worst_case``)."""
    _ALGORITHMS[name] = build


def mechanism_case(cls: type[Mechanism]) -> Callable[..., AuditCase]:
    """The audit case of a mechanism class, from its :meth:`~Mechanism.worst_case`."""

    def build(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
        worst = cls.worst_case(eps, delta)
        assert worst is not None
        mechanism, options, statistic = worst.mechanism, worst.options, worst.statistic

        def system(value: Any, rng: np.random.Generator, size: int) -> Any:
            out = mechanism.simulate(value, rng=rng, size=size, **options)
            return out if statistic is None else statistic(out)

        pure = mechanism.epsilon_at(0.0)
        claim = (pure, 0.0) if math.isfinite(pure) else (mechanism.epsilon_at(delta), delta)
        pair = NeighbouringPair(first=worst.first, second=worst.second,
                                relation=mechanism.relation)
        return AuditCase(system, pair, claim[0], claim[1], ceiling=worst.ceiling)

    return build


def _has_worst_case(cls: type[Mechanism]) -> bool:
    return cls.worst_case.__func__ is not Mechanism.worst_case.__func__  # type: ignore[attr-defined]


class _Cases(Mapping[str, Callable[..., AuditCase]]):
    """Every registered mechanism with a worst case, and every registered system; read
    afresh on each access, so a mechanism defined after import is covered."""

    def _all(self) -> dict[str, Callable[..., AuditCase]]:
        found = {kind: mechanism_case(cls) for kind, cls in registered_mechanisms().items()
                 if _has_worst_case(cls)}
        found.update(_ALGORITHMS)
        return found

    def __getitem__(self, name: str) -> Callable[..., AuditCase]:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: ``CASES[name](epsilon, delta)``: every case ``privkit audit`` knows.
CASES: Mapping[str, Callable[..., AuditCase]] = _Cases()


def _erm_pair() -> NeighbouringPair:
    """Twenty rows; the neighbour flips the first row's label (flipping its direction
    too would leave y x, hence the loss, unchanged)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 2))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.where(x[:, 0] > 0, 1.0, -1.0)
    first = np.column_stack([x, y])
    second = first.copy()
    second[0, 2] = -y[0]
    return NeighbouringPair(first=first, second=second, relation=R)


def _output_perturbation(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import OutputPerturbationClassifier, solve_erm
    from privkit.algorithms._losses import MarginLoss

    clf = OutputPerturbationClassifier(epsilon=eps, regularization=0.1)
    block = clf.plan(n_samples=20, n_features=2)

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        w = solve_erm(rows[:, :2], rows[:, 2], MarginLoss("huber"), clf.regularization)
        return block.simulate(w, rng=rng, size=size)  # type: ignore[union-attr]

    return AuditCase(system, _erm_pair(), eps, 0.0)


def _objective_perturbation(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import ObjectivePerturbationClassifier, solve_erm
    from privkit.algorithms._losses import MarginLoss

    clf = ObjectivePerturbationClassifier(epsilon=eps, regularization=0.1)
    block = clf.plan(n_samples=20, n_features=2)

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        noise = block.simulate(2, rng=rng, size=size)  # type: ignore[union-attr]
        lam = clf.regularization + block.extra_regularization  # type: ignore[union-attr]
        return np.array([solve_erm(rows[:, :2], rows[:, 2], MarginLoss("huber"), lam,
                                   linear=b / 20) for b in noise])

    return AuditCase(system, _erm_pair(), eps, 0.0, max_trials=3_000)


def _dp_pca(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import DPPCA

    block = DPPCA(1, epsilon=eps, delta=delta).plan(n_samples=10, n_features=3)
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(10, 3)) * [1.0, 0.8, 0.6]
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    other = rows.copy()
    other[0] = np.cross(rows[0], rows[1]) / np.linalg.norm(np.cross(rows[0], rows[1]))

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        noisy = block.simulate(data.T @ data, rng=rng, size=size)
        top = np.linalg.eigh(noisy)[1][:, :, -1]
        return np.abs(top)  # the released direction, up to its meaningless sign

    return AuditCase(system, NeighbouringPair(first=rows, second=other, relation=R), eps, delta)


def _pipeline_pair() -> NeighbouringPair:
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(12, 3)) * [1.0, 0.7, 0.4]
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    labels = (rows[:, 0] > 0).astype(float)
    first = np.column_stack([rows, labels])
    # the neighbour's first row is orthogonal to the original (x x^T and y x both change;
    # a sign flip of x would change neither) with the other label
    other = np.cross(rows[0], rows[1])
    second = first.copy()
    second[0] = [*(other / np.linalg.norm(other)), 1.0 - labels[0]]
    return NeighbouringPair(first=first, second=second, relation=R)


def _dpdr_dpml(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import DPDRDPMLClassifier

    model = DPDRDPMLClassifier(epsilon=eps, delta=delta, n_components=2, regularization=0.1)

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        out = []
        for seed in rng.integers(2**31, size=size):
            fitted = model.set_params(random_state=int(seed)).fit(data[:, :3],
                                                                 data[:, 3].astype(int))
            out.append(fitted.decision_function(np.eye(3)))  # the released map on a basis
        return np.array(out)

    return AuditCase(system, _pipeline_pair(), eps, delta, max_trials=500)


def _fed_dpdr_dpml(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import FedDPDRDPMLClassifier

    model = FedDPDRDPMLClassifier(epsilon=eps, delta=delta, n_components=2,
                                  regularization=0.1)
    ids = np.arange(12) % 2  # two participants; the changed row belongs to the first

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        out = []
        for seed in rng.integers(2**31, size=size):
            fitted = model.set_params(random_state=int(seed)).fit(
                data[:, :3], data[:, 3].astype(int), participant=ids)
            out.append(fitted.decision_function(np.eye(3)))
        return np.array(out)

    return AuditCase(system, _pipeline_pair(), eps, delta, max_trials=300)


def _dp_sgd_svm(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import DPSGDLinearSVM

    rng = np.random.default_rng(2)
    rows = rng.normal(size=(10, 2))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    labels = (rows[:, 0] > 0).astype(int)
    first = np.column_stack([rows, labels])
    svm = DPSGDLinearSVM(epsilon=eps, delta=delta, sampling_rate=0.5, epochs=2, learning_rate=1.0)
    sigma = svm._sigma()

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        out = []
        for seed in rng.integers(2**31, size=size):
            fitted = svm.set_params(noise_multiplier=sigma, random_state=int(seed)).fit(
                data[:, :2], data[:, 2].astype(int))
            out.append(np.append(fitted.coef_.ravel(), fitted.intercept_))
        return np.array(out)

    # ADD_REMOVE: the neighbour lacks the first row (which carries both labels' signal)
    pair = NeighbouringPair(first=first, second=first[1:], relation=A)
    return AuditCase(system, pair, eps, delta, max_trials=100)


for _name, _build in {
    "output_perturbation": _output_perturbation,
    "objective_perturbation": _objective_perturbation,
    "dp_pca": _dp_pca,
    "dp_sgd_svm": _dp_sgd_svm,
    "dpdr_dpml": _dpdr_dpml,
    "fed_dpdr_dpml": _fed_dpdr_dpml,
}.items():
    register(_name, _build)
