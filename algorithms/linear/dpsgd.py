"""A linear SVM trained by DP-SGD through opacus, accounted by privkit.

torch and opacus are imported when the estimator fits, not when this module loads.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.mechanisms import Gaussian
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block

from .._audit_case import TranscriptCase
from .._bounds import finite_rows
from .._certified import certified
from .._labels import LabelSet, declared_classes, label_release, release_label_set, total_claim
from .._private_rows import private_labels, private_rows
from .._spend import charge
from .erm import LinearModel

__all__ = ["DPSGDLinearSVM"]

A = Neighbouring.ADD_REMOVE


@contextlib.contextmanager
def _one_thread(torch: Any) -> Iterator[None]:
    """torch on one thread, restored after: a linear model's steps are far too small to
    share, and on a busy machine torch's thread pool spins (40 ms a step instead of 1)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _safe_noise(optimizer: Any, mechanism: Any, rng: np.random.Generator) -> None:
    """Replace ``optimizer.add_noise`` (opacus's ``DPOptimizer``) by the floating-point-safe
    release of privkit's Gaussian mechanism (``mechanism``: scale sigma C, L2 sensitivity C)
    on the concatenation of every parameter's clipped, summed gradient: one release per
    step, so the weights are a post-processing of snapped noisy sums and their low-order
    bits say nothing more of the data (Mironov 2012, "On significance of the least
    significant bits for differential privacy"). opacus adds torch's float Gaussian noise,
    whose low-order bits depend on the sum (the end-to-end audit measured the share of odd
    mantissas in ``coef_`` at 0.27 against 0.52). The release has the Gaussian's privacy
    profile, so the Poisson-subsampled steps keep their accounting (Zhu, Dong, Wang 2022,
    "Optimal accounting of differential privacy via characteristic function": a
    dominating pair of the step dominates its subsampling)."""
    import torch
    from opacus.optimizers.optimizer import _check_processed_flag, _mark_as_processed

    def add_noise() -> None:
        params = list(optimizer.params)
        for p in params:
            _check_processed_flag(p.summed_grad)
        summed = [p.summed_grad.detach().reshape(-1).numpy() for p in params]
        noisy = mechanism.safe_sample(np.concatenate(summed), rng, (1,))[0]
        start = 0
        for p, part in zip(params, summed, strict=True):
            stop = start + part.size
            p.grad = torch.from_numpy(np.ascontiguousarray(noisy[start:stop])).view_as(p)
            start = stop
            _mark_as_processed(p.summed_grad)  # as opacus does: a sum is noised once

    optimizer.add_noise = add_noise


class DPSGDLinearSVM(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Linear SVM (hinge or Huber loss, one-vs-rest outputs for several classes) trained
    with DP-SGD: Poisson sampling, per-example clipping to ``max_grad_norm``, Gaussian
    noise (Abadi et al. 2016, "Deep learning with differential privacy", Algorithm 1),
    with opacus's per-example gradients (``GradSampleModule``) and noisy step
    (``DPOptimizer``).

    Parameters
    ----------
    epsilon, delta : float
        The total budget, (epsilon, delta)-DP under ADD_REMOVE. Unless ``noise_multiplier``
        is given (then epsilon only sizes the label release), the noise multiplier is the
        smallest at which privkit's tightest accountant certifies the steps within the
        learning stage's budget (:func:`privkit.opacus_accountant.noise_multiplier_for`).
    classes : array-like or None
        The label set, public. ``None``: released privately by a stability histogram
        (:mod:`privkit.algorithms._labels`) with ``LABEL_SHARE`` of epsilon and of delta;
        the steps are calibrated to the rest.
    sampling_rate : float
        q, the Poisson rate: every step takes each row independently with probability q.
    epochs : int
        The number of steps is ``ceil(epochs / sampling_rate)``: each row is used
        ``epochs`` times in expectation.
    expected_batch_size : float
        The divisor of each step's noisy sum of clipped gradients (opacus's
        ``expected_batch_size``): set it to about q times your number of rows. It is a
        declared constant because n is private under ADD_REMOVE.
    max_grad_norm, learning_rate, regularization : float
        Clipping norm C, SGD step, L2 weight decay.
    loss : {"huber", "hinge"}
    huber_h : float
    noise_multiplier : float, optional
    random_state : int, Generator or None

    Public and private
    ------------------
    Public: the declared ``classes``, the schema (``n_features_in_``) and every parameter
    above. Under ADD_REMOVE the number of rows n is private: the sampling rate, the number
    of steps, the divisor and the noise multiplier come from parameters only, and so do
    ``sampling_rate_``, ``n_steps_``, ``noise_multiplier_``, ``plan_`` and
    ``guarantee_``; an empty dataset fits like any other. Records are mapped by public
    rules, silently: a row with a non-finite entry, or a label outside ``classes_``
    (undeclared, or suppressed by the label release), is removed (the neutral record under
    ADD_REMOVE). Finite rows need no bound: each example's gradient is clipped to C, and
    training runs in float64 with a Huber loss written with clamps, whose gradient is
    finite for every finite row. With fewer than two released labels no step runs:
    ``predict`` returns the one label (none: a clear error).

    Notes
    -----
    Accounting: each step is the Poisson-subsampled Gaussian with noise multiplier sigma
    at rate q (:func:`privkit.opacus_accountant.dp_sgd_plan`); opacus's optimizer reports
    every step to a :class:`~privkit.opacus_accountant.PrivkitAccountant`, which records it
    in the ledger, so ``ledger_`` holds exactly the steps that ran and
    ``accountant_epsilon_`` is that accountant's epsilon for them. With a private label
    set, ``guarantee_`` is the label release and the steps by basic composition
    (:meth:`~privkit.algorithms._labels.LabelSet.guarantee`). Each step's noisy gradient
    sum is released by privkit's floating-point-safe Gaussian path (opacus's float noise
    is replaced), so the weights' low-order bits are a post-processing of safe releases.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Calibrated by privkit's tightest accountant (was PLD) at opacus's actual sampling
       rate.
    .. versionchanged:: 0.3.0
       The sampling rate, the number of steps (``ceil(epochs / sampling_rate)``) and the
       divisor (``expected_batch_size``) are public parameters, never derived from n;
       ``classes``; ``fit(budget_filter=)``; non-finite rows are removed instead of
       refused; float64 training from zero weights; each step's noise through the
       floating-point-safe Gaussian release (opacus's float noise leaked through the
       weights' lowest bits).
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, classes: Any = None,
                 sampling_rate: float = 0.01, epochs: int = 5,
                 expected_batch_size: float = 100.0, max_grad_norm: float = 1.0,
                 learning_rate: float = 0.5, regularization: float = 0.0,
                 loss: str = "huber", huber_h: float = 0.5,
                 noise_multiplier: float | None = None, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.sampling_rate = sampling_rate
        self.epochs = epochs
        self.expected_batch_size = expected_batch_size
        self.max_grad_norm = max_grad_norm
        self.learning_rate = learning_rate
        self.regularization = regularization
        self.loss = loss
        self.huber_h = huber_h
        self.noise_multiplier = noise_multiplier
        self.random_state = random_state

    # -- public parameters ------------------------------------------------------------------

    def _schedule(self) -> tuple[float, int]:
        """``(q, steps)`` from the parameters: ``steps = ceil(epochs / q)``."""
        owner = type(self).__name__
        q = check.rate("sampling_rate", self.sampling_rate, owner)
        epochs = check.positive_int("epochs", self.epochs, owner)
        return q, math.ceil(epochs / q - 1e-9)

    def _label_plan(self) -> LabelSet:
        """Every public parameter validated, and the label set as planned."""
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check.open_unit("delta", self.delta, owner)
        for name in ("expected_batch_size", "max_grad_norm", "learning_rate", "huber_h"):
            check.positive_finite(name, getattr(self, name), owner)
        check.nonnegative_finite("regularization", self.regularization, owner)
        if self.loss not in ("huber", "hinge"):
            raise check.fail("loss", self.loss, "'huber' or 'hinge'", owner)
        if self.noise_multiplier is not None:
            check.positive_finite("noise_multiplier", self.noise_multiplier, owner)
        self._schedule()
        declared = declared_classes(self.classes, owner)
        if declared is not None:
            return LabelSet(classes=declared)
        return label_release(float(self.epsilon), float(self.delta), relation=A,
                             stage_uses_delta=True, owner=owner)

    def _stage(self, labels: LabelSet) -> tuple[float, Block, float]:
        """``(sigma, steps' plan, the stage's delta)``: sigma calibrated to the budget
        the label release leaves (or the given ``noise_multiplier``)."""
        from privkit.opacus_accountant import dp_sgd_plan, noise_multiplier_for

        q, steps = self._schedule()
        eps, dlt = labels.rest(float(self.epsilon), float(self.delta))
        sigma = (float(self.noise_multiplier) if self.noise_multiplier is not None
                 else noise_multiplier_for(epsilon=eps, delta=dlt, sampling_rate=q, steps=steps))
        return sigma, dp_sgd_plan(sigma, q, steps), dlt

    def plan(self, *, n_samples: int | None = None, n_features: int,
             n_classes: int = 2) -> Block:
        """The label release (when ``classes`` is None), then ``Repeat(PoissonSubsample(
        Gaussian), steps)``. No argument changes it: n is private, and the gradient's
        dimension (features, classes) does not enter the Gaussian's sensitivity."""
        check.positive_int("n_features", n_features, "plan")
        check.positive_int("n_classes", n_classes, "plan")
        labels = self._label_plan()
        block = labels.plan(self._stage(labels)[1])
        assert block is not None
        return block

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> DPSGDLinearSVM:
        """Fit privately. ``budget_filter`` (a :class:`~privkit.BudgetFilter`) is charged
        before anything is drawn, with the guarantee of the whole fit (label release and
        steps) at ``delta`` as one claimed block: no filter's accountant composes Poisson
        subsampling, and the guarantee is privkit's tightest for it."""
        owner = type(self).__name__
        planned = self._label_plan()
        sigma, stage_plan, stage_delta = self._stage(planned)
        X = private_rows(X, owner=owner, estimator=self)
        y = private_labels(y, X.shape[0], owner=owner)
        finite = finite_rows(X)  # a row with a non-finite entry: removed (neutral)
        X, y = X[finite], y[finite]
        claim = planned.guarantee(certified(stage_plan, delta=stage_delta), stage_delta)
        assert claim is not None
        eps, dlt = ((claim.epsilon, claim.delta) if isinstance(claim, ApproxDP)
                    else (claim.epsilon_at(self.delta), self.delta))
        charge(self, total_claim(eps, dlt, A, owner), budget_filter, delta=dlt)
        for name in ("coef_", "intercept_"):  # a refit that trains nothing keeps none
            self.__dict__.pop(name, None)
        rng = np.random.default_rng(self.random_state)
        with Ledger() as ledger:
            labels = release_label_set(y, classes=None if planned.released else
                                       planned.classes, epsilon=self.epsilon,
                                       delta=self.delta, relation=A, rng=rng,
                                       stage_uses_delta=True, owner=owner)
            self.classes_ = labels.classes
            q, steps = self._schedule()
            trained = labels.classes.size >= 2
            if trained:
                codes = labels.codes(y)
                keep = codes >= 0  # a label outside classes_: removed (neutral)
                self.accountant_epsilon_ = self._train(
                    X[keep], codes[keep], sigma, q, steps, int(rng.integers(2**31)),
                    stage_delta)
            else:
                self.accountant_epsilon_ = 0.0
        self.noise_multiplier_ = sigma
        self.sampling_rate_ = q
        self.n_steps_ = steps if trained else 0
        self.plan_ = labels.plan(stage_plan if trained else None)
        self.ledger_ = ledger
        stage = certified(stage_plan, delta=stage_delta) if trained else None
        guarantee = labels.guarantee(stage, stage_delta)
        assert guarantee is not None
        self.guarantee_: Guarantee = guarantee
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def _train(self, X: NDArray[np.float64], codes: NDArray[np.int64], sigma: float,
               q: float, steps: int, seed: int, stage_delta: float) -> float:
        """``steps`` DP-SGD steps from zero weights; sets ``coef_`` and ``intercept_`` and
        returns the epsilon at ``stage_delta`` of the steps opacus reported to its
        accountant."""
        import torch
        from opacus import GradSampleModule
        from opacus.optimizers import DPOptimizer

        from privkit.opacus_accountant import PrivkitAccountant

        k = self.classes_.size
        outputs = 1 if k == 2 else k
        targets = np.arange(1, 2) if outputs == 1 else np.arange(k)
        signs = np.where(codes[:, None] == targets[None, :], 1.0, -1.0)
        generator = torch.Generator().manual_seed(seed)
        layer = torch.nn.Linear(X.shape[1], outputs, dtype=torch.float64)
        with torch.no_grad():
            layer.weight.zero_()
            layer.bias.zero_()
        accountant = PrivkitAccountant("tightest")
        x, s = torch.from_numpy(X), torch.from_numpy(signs)
        h = float(self.huber_h)
        with warnings.catch_warnings(), _one_thread(torch):
            # opacus's secure-RNG notice, torch's notice that no input needs a gradient:
            # the same for every dataset
            warnings.simplefilter("ignore")
            model = GradSampleModule(layer, loss_reduction="sum")
            optimizer = DPOptimizer(
                torch.optim.SGD(model.parameters(), lr=self.learning_rate,
                                weight_decay=self.regularization),
                noise_multiplier=sigma, max_grad_norm=self.max_grad_norm,
                expected_batch_size=self.expected_batch_size, loss_reduction="mean",
                generator=generator)
            optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=q))
            _safe_noise(optimizer, Gaussian(
                noise_scale=sigma * float(self.max_grad_norm),
                sensitivity=Sensitivity(value=float(self.max_grad_norm), norm=Norm.L2,
                                        relation=A)), np.random.default_rng(seed))
            for _ in range(steps):
                batch = torch.rand(x.shape[0], generator=generator, dtype=torch.float64) < q
                optimizer.zero_grad()
                u = 1.0 - s[batch] * model(x[batch])
                if self.loss == "hinge":
                    per_example = torch.clamp(u, min=0.0)
                else:  # Chaudhuri et al.'s Huber hinge, with clamps: finite gradients
                    per_example = ((torch.clamp(u, -h, h) + h) ** 2 / (4.0 * h)
                                   + torch.clamp(u - h, min=0.0))
                per_example.sum().backward()  # type: ignore[no-untyped-call]
                optimizer.step()
        self.coef_ = layer.weight.detach().numpy().copy()
        self.intercept_ = layer.bias.detach().numpy().copy()
        return certified(accountant.plan(), delta=stage_delta).epsilon_at(stage_delta)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """Two steps at rate 0.5 on 80 rows in the unit disc, two labels of 40 rows each
        (the label release at epsilon 4, delta 1e-3 keeps each but for a chance near
        4e-4)."""
        rng = np.random.default_rng(0)
        X = rng.uniform(0.1, 0.7, size=(80, 2)) * np.repeat([[-1.0, 1.0], [1.0, 1.0]], 40, 0)
        y = np.repeat([0, 1], 40)
        model = cls(epsilon=4.0, delta=1e-3, classes=[0, 1, 2] if declare_classes else None,
                    sampling_rate=0.5, epochs=1, expected_batch_size=40.0)
        return TranscriptCase(
            estimator=model, X=X, y=y, relation=A, epsilon=4.0, delta=1e-3,
            record=np.array([0.3, -0.2]), label=1, new_label=2,
            at_bound=np.array([1e6, 0.0]), beyond_bound=np.array([1e300, -1e300]),
            probes=np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 0.5]]))
