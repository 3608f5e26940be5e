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
        The budget; unless ``noise_multiplier`` is given (then epsilon is only reported),
        the noise multiplier is the smallest at which privkit's tightest accountant
        certifies the run within (epsilon, delta), by opacus's
        ``make_private_with_epsilon`` on privkit's engine
        (:class:`privkit.opacus_accountant.PrivacyEngine`).
    sampling_rate : float
        Sets the expected batch size ``b = max(1, round(q n))``. opacus samples each row
        with probability ``1 / ceil(n / b)`` (``1 / len(data_loader)``), which is close to
        q but not always below it; that rate is the one accounted.
    epochs : int
        The number of steps is ``epochs * ceil(n / b)``.
    max_grad_norm, learning_rate, regularization : float
        Clipping norm C, SGD step, L2 weight decay.
    loss : {"huber", "hinge"}
    noise_multiplier : float, optional
    random_state : int or None

    Notes
    -----
    Accounting under ADD_REMOVE: each step is the Poisson-subsampled Gaussian with noise
    multiplier sigma at opacus's rate (:func:`privkit.opacus_accountant.dp_sgd_plan`);
    ``guarantee_`` is within about 1e-5 of the budget and never above it. opacus reports every
    step to :class:`~privkit.opacus_accountant.PrivkitAccountant`, which records it in the
    ledger, so ``ledger_`` holds exactly the steps that ran. ``guarantee_`` is the tightest
    bound at delta. opacus's noise is drawn by torch in floating point (its own
    ``secure_mode`` is off here).

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Calibrated by privkit's tightest accountant (was PLD) at opacus's actual sampling
       rate ``1 / ceil(n / b)`` (was ``sampling_rate``, which could be below it), for
       ``epochs * ceil(n / b)`` steps.
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

    def _schedule(self, n_samples: int) -> tuple[int, float, int]:
        """``(batch_size, rate, steps)``: opacus's Poisson rate is one over the number of
        batches of the data loader, ``1 / ceil(n / b)``."""
        owner = type(self).__name__
        q = check.rate("sampling_rate", self.sampling_rate, owner)
        epochs = check.positive_int("epochs", self.epochs, owner)
        batch = max(1, round(q * n_samples))
        batches = -(-n_samples // batch)
        return batch, 1.0 / batches, epochs * batches

    def _sigma(self, rate: float, steps: int) -> float:
        from privkit.opacus_accountant import noise_multiplier_for

        owner = type(self).__name__
        if self.noise_multiplier is not None:
            return check.positive_finite("noise_multiplier", self.noise_multiplier, owner)
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        dlt = check.open_unit("delta", self.delta, owner)
        return noise_multiplier_for(eps, dlt, sampling_rate=rate, steps=steps)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Repeat(PoissonSubsample(Gaussian), steps)`` at opacus's rate for ``n_samples``
        rows; the number of features and classes does not change it."""
        from privkit.opacus_accountant import dp_sgd_plan

        _, rate, steps = self._schedule(check.positive_int("n_samples", n_samples, "plan"))
        return dp_sgd_plan(self._sigma(rate, steps), rate, steps)

    def fit(self, X: Any, y: Any) -> DPSGDLinearSVM:
        import torch

        from privkit.opacus_accountant import PrivacyEngine, dp_sgd_plan

        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        if self.loss not in ("huber", "hinge"):
            raise check.fail("loss", self.loss, "'huber' or 'hinge'", type(self).__name__)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        batch, rate, steps = self._schedule(len(y))
        if self.noise_multiplier is not None:
            check.positive_finite("noise_multiplier", self.noise_multiplier,
                                  type(self).__name__)
        else:
            check.positive_finite("epsilon", self.epsilon, type(self).__name__)
            check.open_unit("delta", self.delta, type(self).__name__)
        outputs = 1 if self.classes_.size == 2 else self.classes_.size
        signs = np.where(y[:, None] == (self.classes_[1:] if outputs == 1
                                        else self.classes_)[None, :], 1.0, -1.0)
        seed = int(np.random.default_rng(self.random_state).integers(2**31))
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed)
        data = torch.utils.data.TensorDataset(torch.from_numpy(X),
                                              torch.from_numpy(signs.astype(np.float32)))
        loader = torch.utils.data.DataLoader(data, batch_size=batch, generator=generator)
        model = torch.nn.Linear(X.shape[1], outputs)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.learning_rate,
                                    weight_decay=self.regularization)
        h = self.huber_h
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # opacus's secure-RNG and other notices
            engine = PrivacyEngine()  # privkit's tightest accountant
            common = dict(module=model, optimizer=optimizer, data_loader=loader,
                          max_grad_norm=self.max_grad_norm, poisson_sampling=True,
                          noise_generator=generator)
            if self.noise_multiplier is None:
                model, optimizer, loader = engine.make_private_with_epsilon(
                    target_epsilon=self.epsilon, target_delta=self.delta,
                    epochs=self.epochs, **common)
            else:
                model, optimizer, loader = engine.make_private(
                    noise_multiplier=self.noise_multiplier, **common)
            sigma = float(optimizer.noise_multiplier)
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
        self.sampling_rate_ = rate
        self.plan_ = dp_sgd_plan(sigma, rate, steps)  # what make_private calibrated for
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(self.plan_, delta=self.delta).guarantee
        self.accountant_epsilon_ = float(engine.get_epsilon(self.delta))
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self



