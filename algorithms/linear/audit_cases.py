"""``privkit audit`` rows of the private linear learners (Chaudhuri, Monteleoni, Sarwate
2011, "Differentially private empirical risk minimization"; DP-SGD, Abadi et al. 2016):
white box on the randomised step (only its noise redrawn, the deterministic part solved
once) and black box end to end on the public estimator (the rows ``NAME_e2e``, run by
:mod:`privkit.audits.end_to_end`). Each is declared with
:func:`~privkit.audits.registry.audit_row`, which ``privkit audit`` finds here.

.. versionadded:: 0.3.0
   (moved from ``privkit.audits.algorithm_cases`` and ``privkit.audits.end_to_end``)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privkit.audits.end_to_end import (
    FITS,
    GAUSS_DELTA,
    GAUSS_EPSILON,
    end_to_end_case,
    fit_system,
    pilot_claim,
)
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AUDIT_DELTA, AuditCase, audit_row
from privkit.neighbouring import Neighbouring

__all__ = ["dp_sgd_canary_statistic", "huber_derivative", "huber_second", "margin_pair",
           "objective_minimiser"]

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


@audit_row("output_perturbation", estimator="OutputPerturbationClassifier")
def _output_perturbation(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """Output perturbation (Chaudhuri et al. 2011, Algorithm 1): the minimiser is solved
    once per input (deterministic), only the L2-Laplace noise is redrawn, through the
    block's floating-point-safe ``release``. The statistic is the privacy loss
    ``(|w - w(D')| - |w - w(D)|) / scale`` (the likelihood ratio: optimal)."""
    from privkit.algorithms import OutputPerturbationClassifier, solve_erm

    from ._losses import MarginLoss

    clf = OutputPerturbationClassifier(epsilon=epsilon, classes=[-1, 1],
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

    return AuditCase(system, pair, epsilon, 0.0, threat_model=(
        "black box on the released weights; the ERM solve is computed once per input, "
        "only the L2-Laplace noise is redrawn (one-feature data, one row at the norm bound "
        "with its label flipped)"))


def huber_derivative(z: Any, h: float = 0.5) -> Any:
    """The Huber loss's derivative at margin ``z`` (smoothing ``h``)."""
    return np.where(z < 1 - h, -1.0, np.where(z > 1 + h, 0.0, (z - 1 - h) / (2 * h)))


def huber_second(z: Any, h: float = 0.5) -> Any:
    """The Huber loss's second derivative at margin ``z`` (smoothing ``h``)."""
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


@audit_row("objective_perturbation", estimator="ObjectivePerturbationClassifier")
def _objective_perturbation(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """Objective perturbation (Chaudhuri et al. 2011, Algorithm 2) through its exact
    minimiser: the released w is a deterministic function of the noise b
    (:func:`objective_minimiser`), so each draw costs a few array operations. The
    statistic is the privacy loss of w: ``(|b_D'(w)| - |b_D(w)|) / scale`` plus the log
    ratio of the Jacobians ``n Lambda + huber''`` (Chaudhuri et al.'s change of variables).
    Its ceiling is the largest privacy loss of the pair (computed on a grid of w), below
    the claim because Theorem 9 bounds the Jacobian term loosely (a factor 2)."""
    from privkit.algorithms import ObjectivePerturbationClassifier

    clf = ObjectivePerturbationClassifier(epsilon=epsilon, classes=[-1, 1],
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
        b_first = -n * lam * w - huber_derivative(w)          # label +1
        b_second = -n * lam * w + huber_derivative(-w)        # label -1
        jac = np.log((n * lam + huber_second(w)) / (n * lam + huber_second(-w)))
        # rounded: the loss is constant on a plateau, where the rounding errors of the two
        # inputs' computations differ and a threshold would otherwise pick them out
        return np.round((np.abs(b_second) - np.abs(b_first)) / block.noise_scale + jac, 9)

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        b = block.release(1, rng=rng, size=size)[:, 0]
        return loss_of(objective_minimiser(b, float(rows[0, 1]), n, lam))

    grid = np.linspace(-3.0, 3.0, 600_001)
    ceiling = float(np.max(np.abs(loss_of(grid)))) / epsilon
    return AuditCase(system, pair, epsilon, 0.0, ceiling=min(ceiling, 1.0), threat_model=(
        "black box on the released weights, computed exactly from the noise b by the "
        "closed-form minimiser (one-feature data, one row at the norm bound with its label "
        "flipped)"))


def dp_sgd_canary_statistic(noisy: Any, sigma: float, rate: float) -> Any:
    """The log likelihood ratio of a Dirac gradient canary of norm 1 from the noisy
    per-step sums along its direction, ``noisy`` of shape (draws, steps): each step is
    ``N(0, sigma^2)`` without the canary and ``N(1, sigma^2)`` with probability ``rate``
    with it (Poisson sampling), so the ratio is
    ``prod_t (1 - q + q exp((2 x_t - 1) / (2 sigma^2)))`` (Nasr et al. 2023, Section 5)."""
    x = np.asarray(noisy, dtype=float)
    return np.sum(np.log1p(rate * np.expm1((2.0 * x - 1.0) / (2.0 * sigma**2))), axis=-1)


@audit_row("dp_sgd_svm", estimator="DPSGDLinearSVM")
def _dp_sgd_svm(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """DP-SGD in the gradient-insertion threat model of Nasr, Hayes, Steinke, Balle,
    Tramer, Jagielski, Carlini, Terzis 2023 ("Tight auditing of differentially private
    machine learning"): the adversary inserts a canary gradient of norm C (the clipping
    norm) in a fixed direction, every other gradient is zero, and it observes every
    noisy update. Built from the estimator's own plan
    ``Repeat(PoissonSubsample(Gaussian), steps)``: each draw is the steps' Gaussian noise
    (the plan's noise multiplier) plus the canary when Poisson sampling includes it; the
    statistic is the likelihood ratio (:func:`dp_sgd_canary_statistic`)."""
    from privkit.algorithms import DPSGDLinearSVM

    svm = DPSGDLinearSVM(epsilon=epsilon, delta=delta, classes=[0, 1], sampling_rate=0.25,
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
    return AuditCase(system, pair, epsilon, delta, max_trials=1_000_000, threat_model=(
        f"white box, gradient insertion (Nasr et al. 2023): a canary gradient at the "
        f"clipping norm, every iterate observed; {steps} steps at sampling rate {rate}, "
        f"noise multiplier {sigma:.4g}, from the estimator's plan"))


def _margin_rows(n: int) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """The ERM rows of :func:`margin_pair` as ``(X, y)``."""
    X = np.zeros((n, 1))
    X[0, 0] = 1.0
    y = np.ones(n)
    flipped = y.copy()
    flipped[0] = -1.0
    return (X, y), (X, flipped)


_ERM = {"n": 20, "regularization": 0.2}


def _erm(cls_name: str, claim: float) -> AuditCase:
    """An ERM classifier at PureDP(claim) on :func:`_margin_rows`, no intercept (the
    margin pair attains the replace-one sensitivity ``2 / (n Lambda)`` of Chaudhuri,
    Monteleoni, Sarwate 2011, "Differentially private empirical risk minimization",
    Corollary 8, for the weight alone). Released: ``coef_``."""
    import privkit.algorithms as algorithms

    cls = getattr(algorithms, cls_name)

    def make(seed: int) -> Any:
        return cls(epsilon=claim, classes=[-1, 1], regularization=_ERM["regularization"],
                   fit_intercept=False, random_state=seed)

    first, second = _margin_rows(int(_ERM["n"]))
    return end_to_end_case(
        fit_system(make, lambda m: m.coef_), first, second, R, epsilon=claim, delta=0.0,
        what=f"{cls_name}'s released coef_",
        how=f"{int(_ERM['n'])} one-feature rows, one at the norm bound with "
            f"its label flipped (regularization {_ERM['regularization']}); "
            f"claim PureDP({claim})")


@audit_row("output_perturbation_e2e", estimator="OutputPerturbationClassifier")
def _output_perturbation_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    return _erm("OutputPerturbationClassifier", 2.0)


@audit_row("objective_perturbation_e2e", estimator="ObjectivePerturbationClassifier")
def _objective_perturbation_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    # at 2, 0.52-0.59 of the claim (the Jacobian term of Theorem 9 is loose): 4 leaves margin
    return _erm("ObjectivePerturbationClassifier", 4.0)


@audit_row("dp_sgd_svm_e2e", estimator="DPSGDLinearSVM")
def _dp_sgd_svm_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPSGDLinearSVM, one full-batch step (sampling rate 1: no amplification to model),
    add-remove: D has four rows at the origin (no gradient on the weights), D' adds
    (1, 0) labelled 1, whose clipped gradient moves the weights along e_1. Released:
    ``coef_`` and ``intercept_``."""
    from privkit.algorithms import DPSGDLinearSVM

    def make(seed: int) -> Any:
        return DPSGDLinearSVM(epsilon=GAUSS_EPSILON, delta=GAUSS_DELTA, classes=[0, 1],
                              sampling_rate=1.0, epochs=1, expected_batch_size=4.0,
                              random_state=seed)

    X = np.zeros((4, 2))
    y = np.array([0, 1, 0, 1])
    more, labels = np.vstack([X, [1.0, 0.0]]), np.append(y, 1)
    claim = pilot_claim(make, (X, y), delta=GAUSS_DELTA)

    def release(model: Any) -> Any:
        # the direction the added record moves (w_1, b) in
        return model.coef_[0, 0] + model.intercept_[0]

    return end_to_end_case(
        fit_system(make, release), (more, labels), (X, y), A, epsilon=claim, delta=GAUSS_DELTA,
        what="DPSGDLinearSVM's released coef_ and intercept_ (projected on the direction the "
             "added record moves them, w_1 + b)",
        how="four rows at the origin, and the same with (1, 0) labelled 1 added; one full-batch "
            f"step; calibrated at ({GAUSS_EPSILON}, {GAUSS_DELTA}), claim: its guarantee_ at "
            f"delta {GAUSS_DELTA}", fits=4 * FITS)
