"""A linear SVM trained by DP-SGD through opacus, accounted by privkit.

torch and opacus are imported when the estimator fits, not when this module loads.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.plan import Block

from .erm import LinearModel

__all__ = ["DPSGDLinearSVM"]


class DPSGDLinearSVM(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Linear SVM (hinge or Huber loss, one-vs-rest logits for several classes) trained
    with DP-SGD: Poisson sampling, per-example clipping to ``max_grad_norm``, Gaussian
    noise (Abadi et al. 2016), through opacus's ``PrivacyEngine``.

    Parameters
    ----------
    epsilon, delta : float
        The budget; the noise multiplier is calibrated with privkit's PLD accountant
        (:func:`privkit.opacus_accountant.noise_multiplier_for`) unless
        ``noise_multiplier`` is given, in which case epsilon is only reported.
    sampling_rate : float
        Poisson rate q (expected batch size q n).
    epochs : int
        The number of steps is ``round(epochs / sampling_rate)``.
    max_grad_norm, learning_rate, regularization : float
        Clipping norm C, SGD step, L2 weight decay.
    loss : {"huber", "hinge"}
    noise_multiplier : float, optional
    random_state : int or None

    Notes
    -----
    Accounting under ADD_REMOVE: each step is the Poisson-subsampled Gaussian with noise
    multiplier sigma (:func:`privkit.opacus_accountant.dp_sgd_plan`); opacus reports every
    step to :class:`~privkit.opacus_accountant.PrivkitAccountant`, which records it in the
    ledger, so ``ledger_`` holds exactly the steps that ran. ``guarantee_`` is the tightest
    bound at delta. opacus's noise is drawn by torch in floating point (its own
    ``secure_mode`` is off here).

    .. versionadded:: 0.1.0
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, sampling_rate: float = 0.01,
                 epochs: int = 5, max_grad_norm: float = 1.0, learning_rate: float = 0.5,
                 regularization: float = 0.0, loss: str = "huber", huber_h: float = 0.5,
                 noise_multiplier: float | None = None, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.sampling_rate = sampling_rate
        self.epochs = epochs
        self.max_grad_norm = max_grad_norm
        self.learning_rate = learning_rate
        self.regularization = regularization
        self.loss = loss
        self.huber_h = huber_h
        self.noise_multiplier = noise_multiplier
        self.random_state = random_state

    def _steps(self) -> int:
        q = check.rate("sampling_rate", self.sampling_rate, type(self).__name__)
        epochs = check.positive_int("epochs", self.epochs, type(self).__name__)
        return max(1, round(epochs / q))

    def _sigma(self) -> float:
        from privkit.opacus_accountant import noise_multiplier_for

        owner = type(self).__name__
        if self.noise_multiplier is not None:
            return check.positive_finite("noise_multiplier", self.noise_multiplier, owner)
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        dlt = check.open_unit("delta", self.delta, owner)
        return noise_multiplier_for(eps, dlt, sampling_rate=self.sampling_rate,
                                    steps=self._steps())

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Repeat(PoissonSubsample(Gaussian), steps)``; the shape does not change it."""
        from privkit.opacus_accountant import dp_sgd_plan

        check.positive_int("n_samples", n_samples, "plan")
        return dp_sgd_plan(self._sigma(), self.sampling_rate, self._steps())

    def fit(self, X: Any, y: Any) -> DPSGDLinearSVM:
        import torch
        from opacus import PrivacyEngine

        from privkit.opacus_accountant import PrivkitAccountant

        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        if self.loss not in ("huber", "hinge"):
            raise check.fail("loss", self.loss, "'huber' or 'hinge'", type(self).__name__)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        sigma, steps = self._sigma(), self._steps()
        outputs = 1 if self.classes_.size == 2 else self.classes_.size
        signs = np.where(y[:, None] == (self.classes_[1:] if outputs == 1
                                        else self.classes_)[None, :], 1.0, -1.0)
        seed = int(np.random.default_rng(self.random_state).integers(2**31))
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed)
        data = torch.utils.data.TensorDataset(torch.from_numpy(X),
                                              torch.from_numpy(signs.astype(np.float32)))
        batch = max(1, round(self.sampling_rate * len(y)))
        loader = torch.utils.data.DataLoader(data, batch_size=batch, generator=generator)
        model = torch.nn.Linear(X.shape[1], outputs)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.learning_rate,
                                    weight_decay=self.regularization)
        h = self.huber_h
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # opacus's secure-RNG and other notices
            engine = PrivacyEngine()
            engine.accountant = PrivkitAccountant()
            model, optimizer, loader = engine.make_private(
                module=model, optimizer=optimizer, data_loader=loader,
                noise_multiplier=sigma, max_grad_norm=self.max_grad_norm,
                poisson_sampling=True, noise_generator=generator)
            with Ledger() as ledger:
                done = 0
                while done < steps:
                    for xb, sb in loader:
                        optimizer.zero_grad()
                        margin = sb * model(xb)
                        if self.loss == "hinge":
                            per_example = torch.clamp(1 - margin, min=0)
                        else:  # Chaudhuri et al.'s Huber hinge (corrected eq. 3 of van der Reijden)
                            u = 1 - margin
                            per_example = torch.where(
                                u < -h, torch.zeros_like(u),
                                torch.where(u > h, u, (u + h) ** 2 / (4 * h)))
                        per_example.sum(dim=1).mean().backward()  # type: ignore[no-untyped-call]
                        optimizer.step()
                        done += 1
                        if done == steps:
                            break
        layer = model._module if hasattr(model, "_module") else model
        self.coef_ = layer.weight.detach().numpy().astype(np.float64)
        self.intercept_ = layer.bias.detach().numpy().astype(np.float64)
        self.noise_multiplier_ = sigma
        self.n_steps_ = steps
        self.plan_ = self.plan(n_samples=len(y), n_features=X.shape[1],
                               n_classes=self.classes_.size)
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(self.plan_, delta=self.delta).guarantee
        self.accountant_epsilon_ = float(engine.get_epsilon(self.delta))
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self



