"""privkit as the accountant of opacus's PrivacyEngine.

opacus (and so torch) is imported by this module only: ``import privkit`` never loads it.

Examples
--------
::

    from opacus import PrivacyEngine
    from privkit.opacus_accountant import PrivkitAccountant

    engine = PrivacyEngine()
    engine.accountant = PrivkitAccountant()          # before make_private
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0)
    ...                                               # train
    engine.get_epsilon(delta=1e-5)                    # privkit's PLD bound

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import Any

from opacus.accountants.accountant import IAccountant

from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.accountants import PLDAccountant, tightest
from privkit.ledger import record
from privkit.mechanisms import Gaussian
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, PoissonSubsample, Repeat, Sequential

__all__ = ["PrivkitAccountant", "dp_sgd_plan", "noise_multiplier_for"]


def _step_leaf(noise_multiplier: float) -> Gaussian:
    """The Gaussian on the sum of clipped gradients of one step, in units of the clipping
    norm: L2 sensitivity 1 under ADD_REMOVE, noise ``noise_multiplier``."""
    return Gaussian(noise_scale=noise_multiplier,
                    sensitivity=Sensitivity(value=1.0, norm=Norm.L2,
                                            relation=Neighbouring.ADD_REMOVE))


def _step_plan(noise_multiplier: float, sampling_rate: float, steps: int) -> Block:
    """``steps`` DP-SGD steps: Poisson subsampling of :func:`_step_leaf`."""
    gaussian = _step_leaf(noise_multiplier)
    block: Block = (gaussian if sampling_rate == 1.0
                    else PoissonSubsample(gaussian, sampling_rate))
    return block if steps == 1 else Repeat(block, steps)


class PrivkitAccountant(IAccountant):  # type: ignore[misc]  # opacus is untyped
    """An opacus accountant backed by a privkit accountant (PLD by default).

    Parameters
    ----------
    accountant : privkit Accountant or "tightest", default PLDAccountant()
        What computes epsilon; ``"tightest"`` tries every certified accountant.

    Attributes
    ----------
    history : list of (noise_multiplier, sample_rate, steps)
        As in opacus's own accountants (consecutive identical steps are merged);
        ``sample_rate`` is opacus's name in the methods opacus calls, privkit's own
        functions say ``sampling_rate``.
    """

    def __init__(self, accountant: Accountant[Any] | str | None = None) -> None:
        super().__init__()
        if accountant is None:
            accountant = PLDAccountant()
        if not (accountant == "tightest" or isinstance(accountant, Accountant)):
            raise check.fail("accountant", accountant, "a privkit Accountant or 'tightest'",
                             "PrivkitAccountant")
        self.accountant = accountant
        self.history: list[tuple[float, float, int]] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimisation step (called by opacus's optimizer hook)."""
        sigma = check.positive_finite("noise_multiplier", noise_multiplier, "step")
        q = check.rate("sample_rate", sample_rate, "step")
        record(_step_leaf(sigma))  # every step that ran is in the active ledgers
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + 1)
        else:
            self.history.append((sigma, q, 1))

    def plan(self) -> Block:
        """What ran so far, as a privkit plan."""
        if not self.history:
            raise check.fail("history", "empty", "at least one step", "PrivkitAccountant.plan")
        parts = [_step_plan(s, q, n) for s, q, n in self.history]
        return parts[0] if len(parts) == 1 else Sequential(*parts)

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """The certified epsilon at ``delta`` of the steps taken so far."""
        if not self.history:
            return 0.0
        if self.accountant == "tightest":
            return tightest(self.plan(), delta=delta).epsilon
        assert isinstance(self.accountant, Accountant)
        return self.accountant.epsilon(self.plan(), delta=delta)

    def __len__(self) -> int:
        return sum(n for _, _, n in self.history)

    @classmethod
    def mechanism(cls) -> str:
        return "privkit"


def dp_sgd_plan(noise_multiplier: float, sampling_rate: float, steps: int) -> Block:
    """The plan of ``steps`` DP-SGD steps with Poisson rate ``sampling_rate``."""
    owner = "dp_sgd_plan"
    sigma = check.positive_finite("noise_multiplier", noise_multiplier, owner)
    q = check.rate("sampling_rate", sampling_rate, owner)
    return _step_plan(sigma, q, check.positive_int("steps", steps, owner))


def noise_multiplier_for(epsilon: float, delta: float, *, sampling_rate: float, steps: int,
                         accountant: Accountant[Any] | None = None) -> float:
    """The smallest noise multiplier (to 1e-6 relative) whose DP-SGD run meets
    (epsilon, delta) under ``accountant`` (default PLD): privkit's counterpart of
    opacus's ``get_noise_multiplier``, which only knows opacus's own accountants."""
    owner = "noise_multiplier_for"
    eps = check.positive_finite("epsilon", epsilon, owner)
    d = check.open_unit("delta", delta, owner)
    q = check.rate("sampling_rate", sampling_rate, owner)
    n = check.positive_int("steps", steps, owner)
    acct = accountant or PLDAccountant()
    lo, hi = 0.05, 1.0
    while acct.epsilon(_step_plan(hi, q, n), delta=d) > eps:
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            raise check.fail("epsilon", epsilon, "reachable with a noise multiplier below "
                             "1e4", owner)
    while hi - lo > 1e-6 * hi:
        mid = (lo + hi) / 2.0
        if acct.epsilon(_step_plan(mid, q, n), delta=d) <= eps:
            hi = mid
        else:
            lo = mid
    return hi
