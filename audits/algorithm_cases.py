"""The white-box audit cases of the learning algorithms (``privkit audit``'s algorithm
rows): each observes the algorithm's randomised step on the pair its privacy analysis
makes worst, computing the deterministic part of the pipeline once (the non-private
solve, the exact second-moment matrix) so that only the noise is redrawn: a million
draws cost seconds. Each states its threat model (what the adversary sees), printed
with the row. Their black-box end-to-end counterparts are :mod:`privkit.audits.end_to_end`.

.. versionadded:: 0.3.0
   (moved out of :mod:`privkit.audits.registry`, where they were added in 0.1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AUDIT_DELTA, AuditCase, register
from privkit.neighbouring import Neighbouring

__all__ = ["dp_sgd_canary_statistic", "margin_pair", "objective_minimiser"]

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE


def margin_pair(n: int) -> NeighbouringPair:
    """``n`` one-feature rows ``(x, y)``: the first is ``(1, +1)``, the others ``(0, +1)``
    (a zero row has no gradient, so the changed row alone moves the solution); the
    neighbour flips the first label. Under REPLACE_ONE with rows of norm <= 1 this
    attains the ERM sensitivity ``2 / (n Lambda)`` of Chaudhuri et al. 2011 (Corollary 8)
    whenever the margin ``1 / (n Lambda)`` stays in the loss's linear part."""
    first = np.zeros((n, 2))
    first[:, 1] = 1.0
    first[0, 0] = 1.0
    second = first.copy()
    second[0, 1] = -1.0
    return NeighbouringPair(first=first, second=second, relation=R,
                            description="one row at the norm bound, label flipped")


_ERM_N, _ERM_LAMBDA = 200, 0.2


def _output_perturbation(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """Output perturbation (Chaudhuri et al. 2011, Algorithm 1): the minimiser is solved
    once per input (deterministic), only the L2-Laplace noise is redrawn, through the
    block's floating-point-safe ``release``. The statistic is the privacy loss
    ``(|w - w(D')| - |w - w(D)|) / scale`` (the likelihood ratio: optimal)."""
    from privkit.algorithms import OutputPerturbationClassifier, solve_erm
    from privkit.algorithms.linear._losses import MarginLoss

    clf = OutputPerturbationClassifier(epsilon=eps, classes=[-1, 1],
                                       regularization=_ERM_LAMBDA)
    block: Any = clf.plan(n_samples=_ERM_N, n_features=1)
    pair = margin_pair(_ERM_N)
    loss = MarginLoss("huber")
    centres = [solve_erm(rows[:, :1], rows[:, 1], loss, _ERM_LAMBDA)
               for rows in (pair.first, pair.second)]

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        w0 = centres[0] if rows[0, 1] > 0 else centres[1]
        w = block.release(w0, rng=rng, size=size)
        loss = (np.linalg.norm(w - centres[1], axis=-1)
                - np.linalg.norm(w - centres[0], axis=-1)) / block.noise_scale
        return np.round(loss, 9)  # the plateau's rounding errors differ between inputs

    return AuditCase(system, pair, eps, 0.0, threat_model=(
        "black box on the released weights; the ERM solve is computed once per input, "
        "only the L2-Laplace noise is redrawn (one-feature data, one row at the norm bound "
        "with its label flipped)"))


def _huber_derivative(z: Any, h: float = 0.5) -> Any:
    return np.where(z < 1 - h, -1.0, np.where(z > 1 + h, 0.0, (z - 1 - h) / (2 * h)))


def _huber_second(z: Any, h: float = 0.5) -> Any:
    return np.where(np.abs(z - 1) <= h, 1.0 / (2 * h), 0.0)


def objective_minimiser(b: Any, label: float, n: int, lam: float, h: float = 0.5) -> Any:
    """The exact minimiser of ``lam/2 w^2 + huber(label w)/n + b w / n`` over one feature,
    with the data of :func:`margin_pair` (one row ``x = 1``, zero rows elsewhere).

    The stationarity condition ``n lam z + huber'(z) = -label b`` in the margin
    ``z = label w`` is strictly increasing and piecewise linear in z, so each piece is
    solved in closed form and the consistent one kept (vectorised over draws of b). The
    tests check it against privkit's own ``solve_erm``.
    """
    t = -label * np.asarray(b, dtype=float)
    a = n * lam
    z_low = (t + 1.0) / a                       # z < 1 - h: huber' = -1
    z_mid = (t + (1 + h) / (2 * h)) / (a + 1 / (2 * h))  # quadratic part
    z_high = t / a                              # z > 1 + h: huber' = 0
    z = np.where(z_low < 1 - h, z_low, np.where(z_high > 1 + h, z_high, z_mid))
    return label * z


def _objective_perturbation(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """Objective perturbation (Chaudhuri et al. 2011, Algorithm 2) through its exact
    minimiser: the released w is a deterministic function of the noise b
    (:func:`objective_minimiser`), so each draw costs a few array operations. The
    statistic is the privacy loss of w: ``(|b_D'(w)| - |b_D(w)|) / scale`` plus the log
    ratio of the Jacobians ``n Lambda + huber''`` (Chaudhuri et al.'s change of variables).
    Its ceiling is the largest privacy loss of the pair (computed on a grid of w), below
    the claim because Theorem 9 bounds the Jacobian term loosely (a factor 2)."""
    from privkit.algorithms import ObjectivePerturbationClassifier

    clf = ObjectivePerturbationClassifier(epsilon=eps, classes=[-1, 1],
                                          regularization=_ERM_LAMBDA)
    plan: Any = clf.plan(n_samples=_ERM_N, n_features=1)
    # the plan may be Sequential(ObjectivePerturbation, L2Laplace covering an inexact
    # solve): the exact minimiser is the first step's output, a marginal of the plan's
    # transcript, so its bound is valid for the whole plan's claim
    block: Any = plan.steps[0] if hasattr(plan, "steps") else plan
    lam = block.regularization + block.extra_regularization
    n = _ERM_N
    pair = margin_pair(n)

    def loss_of(w: Any) -> Any:
        b_first = -n * lam * w - _huber_derivative(w)          # label +1
        b_second = -n * lam * w + _huber_derivative(-w)        # label -1
        jac = np.log((n * lam + _huber_second(w)) / (n * lam + _huber_second(-w)))
        # rounded: the loss is constant on a plateau, where the rounding errors of the two
        # inputs' computations differ and a threshold would otherwise pick them out
        return np.round((np.abs(b_second) - np.abs(b_first)) / block.noise_scale + jac, 9)

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        b = block.release(1, rng=rng, size=size)[:, 0]
        return loss_of(objective_minimiser(b, float(rows[0, 1]), n, lam))

    grid = np.linspace(-3.0, 3.0, 600_001)
    ceiling = float(np.max(np.abs(loss_of(grid)))) / eps
    return AuditCase(system, pair, eps, 0.0, ceiling=min(ceiling, 1.0), threat_model=(
        "black box on the released weights, computed exactly from the noise b by the "
        "closed-form minimiser (one-feature data, one row at the norm bound with its label "
        "flipped)"))


def _second_moment_pair(d: int = 2) -> NeighbouringPair:
    """Unit rows; the neighbour replaces the first row e_1 by the orthogonal e_2, which
    moves ``X^T X`` by ``e_1 e_1^T - e_2 e_2^T``: Frobenius norm sqrt 2, the replace-one
    sensitivity of the second-moment matrix for rows of norm 1."""
    rows = np.zeros((4, d))
    rows[:, 0] = 1.0
    other = rows.copy()
    other[0] = np.eye(d)[1]
    return NeighbouringPair(first=rows, second=other, relation=R,
                            description="a unit row replaced by an orthogonal one")


def _noisy_moment_system(block: Any, pair: NeighbouringPair) -> Callable[..., Any]:
    """Draws of the noisy second-moment matrix (the block's safe ``release``) projected on
    the direction in which the pair's exact matrices differ (the Gaussian likelihood
    ratio's direction over the upper triangle: optimal)."""
    exact = [np.asarray(x).T @ np.asarray(x) for x in (pair.first, pair.second)]
    upper = np.triu_indices(exact[0].shape[0])
    direction = (exact[0] - exact[1])[upper]

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        noisy = block.release(np.asarray(rows).T @ np.asarray(rows), rng=rng, size=size)
        return noisy[:, upper[0], upper[1]] @ direction

    return system


_PCA_THREAT = ("white box on the noisy second-moment matrix X^T X + E (the eigenvectors "
               "it publishes are its post-processing, so any bound on the matrix's release "
               "is a bound on the claim's analysis)")


def _dp_pca(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import DPPCA

    block = DPPCA(1, epsilon=eps, delta=delta).plan(n_samples=4, n_features=2)
    pair = _second_moment_pair()
    return AuditCase(_noisy_moment_system(block, pair), pair, eps, delta,
                     threat_model=_PCA_THREAT)


def _pipeline_case(model: Any, eps: float, delta: float, federated: bool) -> AuditCase:
    """Wang et al.'s pipelines audited on their PCA stage (its noisy second-moment matrix,
    with ``pca_share=0.9`` so that stage carries most of the budget): a marginal of the
    pipeline's transcript, so its lower bound is valid for the whole pipeline's claim."""
    pair = _second_moment_pair()
    labels = np.array([0.0, 1.0, 0.0, 1.0])
    plan = model.plan(n_samples=[4, 4] if federated else 4, n_features=2)
    part = plan.parts[0] if federated else plan
    block = part.steps[0]
    system = _noisy_moment_system(block, pair)
    data = NeighbouringPair(first=np.column_stack([pair.first, labels]),
                            second=np.column_stack([pair.second, labels]), relation=R,
                            description=pair.description)

    def rows_system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        return system(np.asarray(rows)[:, :2], rng, size)

    where = ("the changed row's participant's " if federated else "the ")
    return AuditCase(rows_system, data, eps, delta, threat_model=(
        f"white box on {where}noisy second-moment matrix (the PCA stage, pca_share=0.9); "
        "the classifier stage is not observed, so the bound is a marginal of the "
        "pipeline's transcript"))


def _dpdr_dpml(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import DPDRDPMLClassifier

    model = DPDRDPMLClassifier(epsilon=eps, delta=delta, classes=[0, 1], n_components=2,
                               pca_share=0.9, regularization=0.1)
    return _pipeline_case(model, eps, delta, federated=False)


def _fed_dpdr_dpml(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    from privkit.algorithms import FedDPDRDPMLClassifier

    model = FedDPDRDPMLClassifier(epsilon=eps, delta=delta, classes=[0, 1], n_components=2,
                                  pca_share=0.9, regularization=0.1)
    return _pipeline_case(model, eps, delta, federated=True)


def dp_sgd_canary_statistic(noisy: Any, sigma: float, rate: float) -> Any:
    """The log likelihood ratio of a Dirac gradient canary of norm 1 from the noisy
    per-step sums along its direction, ``noisy`` of shape (draws, steps): each step is
    ``N(0, sigma^2)`` without the canary and ``N(1, sigma^2)`` with probability ``rate``
    with it (Poisson sampling), so the ratio is
    ``prod_t (1 - q + q exp((2 x_t - 1) / (2 sigma^2)))`` (Nasr et al. 2023, Section 5)."""
    x = np.asarray(noisy, dtype=float)
    return np.sum(np.log1p(rate * np.expm1((2.0 * x - 1.0) / (2.0 * sigma**2))), axis=-1)


def _dp_sgd_svm(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """DP-SGD in the gradient-insertion threat model of Nasr, Hayes, Steinke, Balle,
    Tramer, Jagielski, Carlini, Terzis 2023 ("Tight auditing of differentially private
    machine learning"): the adversary inserts a canary gradient of norm C (the clipping
    norm) in a fixed direction, every other gradient is zero, and it observes every
    noisy update. Built from the estimator's own plan
    ``Repeat(PoissonSubsample(Gaussian), steps)``: each draw is the steps' Gaussian noise
    (the plan's noise multiplier) plus the canary when Poisson sampling includes it; the
    statistic is the likelihood ratio (:func:`dp_sgd_canary_statistic`)."""
    from privkit.algorithms import DPSGDLinearSVM

    svm = DPSGDLinearSVM(epsilon=eps, delta=delta, classes=[0, 1], sampling_rate=0.25,
                         epochs=1)
    plan: Any = svm.plan(n_samples=10, n_features=2)
    steps = plan.count
    subsample = plan.block
    if hasattr(subsample, "sampling_rate"):
        rate, gaussian = subsample.sampling_rate, subsample.block
    else:  # sampling rate 1: the plan has no subsampling node
        rate, gaussian = 1.0, subsample
    sigma = gaussian.noise_multiplier

    def system(canary: Any, rng: np.random.Generator, size: int) -> Any:
        noise = gaussian.simulate(np.zeros(steps), rng=rng, size=size) / gaussian.sensitivity.value
        if canary["inserted"]:
            noise = noise + (rng.random((size, steps)) < rate)
        return dp_sgd_canary_statistic(noise, sigma, rate)

    pair = NeighbouringPair(first={"inserted": True}, second={"inserted": False},
                            relation=A, description="gradient canary inserted or not")
    return AuditCase(system, pair, eps, delta, max_trials=1_000_000, threat_model=(
        f"white box, gradient insertion (Nasr et al. 2023): a canary gradient at the "
        f"clipping norm, every iterate observed; {steps} steps at sampling rate {rate}, "
        f"noise multiplier {sigma:.4g}, from the estimator's plan"))


def _from_module(module: str, function: str, **changes: Any) -> Callable[..., AuditCase]:
    """A case built by ``privkit.algorithms.<module>.<function>(epsilon, delta)``, imported
    when it runs (so that ``privkit audit`` lists it without importing scikit-learn)."""

    def build(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
        import importlib

        case: AuditCase = getattr(importlib.import_module(f"privkit.algorithms.{module}"),
                                  function)(eps, delta)
        return attrs.evolve(case, **changes) if changes else case

    return build


for _name, _build in {
    "output_perturbation": _output_perturbation,
    "objective_perturbation": _objective_perturbation,
    "dp_pca": _dp_pca,
    "dp_sgd_svm": _dp_sgd_svm,
    "dpdr_dpml": _dpdr_dpml,
    "fed_dpdr_dpml": _fed_dpdr_dpml,
    "private_svdd": _from_module("svdd.svdd", "audit_case"),
    "equilibrium_points": _from_module("svdd.equilibrium", "audit_case"),
    "equilibrium_points_paper": _from_module("svdd.equilibrium", "audit_case_paper", claim="paper"),
    "lp_svm_dmw": _from_module("lp.lp_svm", "audit_case"),
    "kmeans_nystrom": _from_module("kernels.nystrom", "audit_case"),
    "kernel_mean": _from_module("kernels.kernel_mean", "audit_case"),
    "dpksvmel_paper": _from_module("kernels.dpksvmel", "audit_case", claim="paper"),
    **{f"analytics_{part}": _from_module("analytics.audit_cases", f"{part}_case")
       for part in ("count", "sum", "mean", "variance", "histogram", "quantile",
                    "selection")},
}.items():
    register(_name, _build)
