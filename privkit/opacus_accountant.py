"""privkit as the accountant of opacus's PrivacyEngine.

opacus (and so torch) is imported by this module only: ``import privkit`` never loads it.
Importing it registers :class:`PrivkitAccountant` in opacus's accountant registry under the
mechanism name ``"privkit"`` (opacus's public ``register_accountant``), so opacus's own
``PrivacyEngine(accountant="privkit")`` works, and so does its ``make_private_with_epsilon``
with a ``PrivkitAccountant`` (opacus then bisects on privkit's PLD epsilon to its own
``epsilon_tolerance``, 0.01 in absolute epsilon by default).

:class:`PrivacyEngine` is opacus's engine with privkit's accountant (the tightest by
default) and a ``make_private_with_epsilon`` whose noise multiplier is privkit's
:func:`noise_multiplier_for`: the smallest multiplier, to 1e-6 relative, at which privkit's
tightest accountant certifies the whole run within the target.

Examples
--------
::

    from privkit.opacus_accountant import PrivacyEngine

    engine = PrivacyEngine()                          # privkit's tightest accountant
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader,
        target_epsilon=2.0, target_delta=1e-5, epochs=2, max_grad_norm=1.0)
    ...                                               # train for 2 epochs
    engine.get_epsilon(delta=1e-5)                    # <= 2, within 1e-4 of it

    from opacus import PrivacyEngine as OpacusEngine  # opacus's engine, fixed noise
    from privkit.opacus_accountant import PrivkitAccountant

    engine = OpacusEngine()
    engine.accountant = PrivkitAccountant()          # before make_private
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0)
    ...                                               # train
    engine.get_epsilon(delta=1e-5)                    # privkit's PLD bound

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   :class:`PrivacyEngine`; registration under ``"privkit"``; :func:`noise_multiplier_for`
   calibrates with the tightest accountant by default.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import opacus
from opacus.accountants import IAccountant, register_accountant

from privkit import _validation as check
from privkit.accountant import Accountant, available_accountants, get_accountant
from privkit.accountants import PLDAccountant, tightest
from privkit.ledger import record
from privkit.mechanisms import Gaussian
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, PoissonSubsample, Repeat, Sequential

__all__ = ["PrivacyEngine", "PrivkitAccountant", "dp_sgd_plan", "noise_multiplier_for"]


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


def noise_multiplier_for(*, epsilon: float, delta: float, sampling_rate: float, steps: int,
                         accountant: Accountant[Any] | str | None = None) -> float:
    """The smallest noise multiplier (to 1e-6 relative) at which ``steps`` DP-SGD steps
    with Poisson rate ``sampling_rate`` meet (epsilon, delta) under ``accountant``:
    privkit's counterpart of opacus's ``get_noise_multiplier``, which only knows opacus's
    own accountants and stops at an absolute epsilon tolerance.

    Parameters
    ----------
    accountant : privkit Accountant, "tightest" or None (default, the same as "tightest")
        ``"tightest"``: the bound of :func:`privkit.tightest`, the smallest over every
        certified accountant that supports the plan (PLD and RDP for Poisson subsampling).
        As each accountant's epsilon decreases with the multiplier, the smallest multiplier
        for their minimum is the smallest of the multipliers calibrated for each one.

    Notes
    -----
    Bisection on the multiplier sigma: the result is feasible (the certified epsilon is at
    most ``epsilon``) and ``sigma (1 - 1e-6)`` is not, up to the accountant's own
    monotonicity in sigma.
    """
    owner = "noise_multiplier_for"
    eps = check.positive_finite("epsilon", epsilon, owner)
    d = check.open_unit("delta", delta, owner)
    q = check.rate("sampling_rate", sampling_rate, owner)
    n = check.positive_int("steps", steps, owner)
    if accountant is None or accountant == "tightest":
        names = tuple(a.name for a in available_accountants() if a.certified)
        return _tightest_multiplier(eps, d, q, n, names, epsilon)
    if not isinstance(accountant, Accountant):
        raise check.fail("accountant", accountant, "a privkit Accountant, 'tightest' or None",
                         owner)
    return _calibrate([accountant], eps, d, q, n, epsilon)


@functools.lru_cache(maxsize=256)
def _tightest_multiplier(eps: float, d: float, q: float, n: int, names: tuple[str, ...],
                         epsilon: float) -> float:
    """:func:`noise_multiplier_for` with the tightest accountant, cached (estimators and
    their conformance checks calibrate the same run many times); ``names`` (the certified
    accountants registered) is in the key, so registering one recalibrates."""
    probe = _step_plan(1.0, q, n)
    pool = [get_accountant(name) for name in names]
    pool = [a for a in pool if a.supports(probe)]
    pool.sort(key=lambda a: a.name != "pld")  # PLD first: usually the tightest
    return _calibrate(pool, eps, d, q, n, epsilon)


def _calibrate(pool: list[Accountant[Any]], eps: float, d: float, q: float, n: int,
               epsilon: float) -> float:
    """The smallest multiplier over ``pool``'s accountants (see noise_multiplier_for)."""
    best: float | None = None
    for acct in pool:
        def spent(sigma: float, acct: Accountant[Any] = acct) -> float:
            return acct.epsilon(_step_plan(sigma, q, n), delta=d)
        if best is not None and spent(best * (1 - 1e-6)) > eps:
            continue  # this accountant cannot go below the multiplier found so far
        best = _smallest_feasible(spent, eps, "noise_multiplier_for", epsilon, below=best)
    if best is None:
        raise check.fail("accountant", "none", "an accountant that supports the DP-SGD plan",
                         "noise_multiplier_for")
    return best


def _smallest_feasible(spent: Callable[[float], float], target: float, owner: str,
                       epsilon: float, below: float | None = None) -> float:
    """Bisection for the smallest sigma with ``spent(sigma) <= target`` (to 1e-6 relative),
    searching below ``below`` when given (a feasible multiplier)."""
    if below is not None:
        hi = below
    else:
        hi = 1.0
        while spent(hi) > target:
            hi *= 2.0
            if hi > 1e4:
                raise check.fail("epsilon", epsilon, "reachable with a noise multiplier below "
                                 "1e4", owner)
    lo = hi / 2.0
    while spent(lo) <= target:
        hi, lo = lo, lo / 2.0
        if lo < 1e-3:
            return hi  # a budget this large needs almost no noise: stop at 1e-3
    while hi - lo > 1e-6 * hi:
        mid = (lo + hi) / 2.0
        if spent(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


class PrivacyEngine(opacus.PrivacyEngine):  # type: ignore[misc]  # opacus is untyped
    """opacus's ``PrivacyEngine`` with privkit as its accountant.

    Parameters
    ----------
    accountant : privkit Accountant or "tightest", default "tightest"
        The accountant of the :class:`PrivkitAccountant` the engine keeps in
        ``accountant`` (what ``get_epsilon`` reports and ``make_private_with_epsilon``
        calibrates for).
    secure_mode : bool
        As in opacus.

    Notes
    -----
    ``make_private_with_epsilon`` takes opacus's arguments. The run it calibrates is
    opacus's: Poisson sampling at rate ``1 / len(data_loader)`` for ``epochs *
    len(data_loader)`` steps (opacus computes ``int(epochs / sample_rate)``, which floating
    point can round one step short). The noise multiplier is :func:`noise_multiplier_for`
    with the engine's accountant, so after ``epochs`` epochs ``get_epsilon(target_delta)``
    is at most ``target_epsilon`` and within about 1e-5 of it; opacus's
    ``epsilon_tolerance`` is not used.

    .. versionadded:: 0.2.0
    """

    def __init__(self, *, accountant: Accountant[Any] | str = "tightest",
                 secure_mode: bool = False) -> None:
        super().__init__(accountant="privkit", secure_mode=secure_mode)
        self.accountant = PrivkitAccountant(accountant)

    def make_private_with_epsilon(self, *, data_loader: Any, target_epsilon: float,
                                  target_delta: float, epochs: int, **kwargs: Any) -> Any:
        """opacus's ``make_private_with_epsilon``, calibrated by privkit (see the class
        Notes); ``kwargs`` are passed to ``make_private``."""
        owner = "PrivacyEngine.make_private_with_epsilon"
        if not isinstance(self.accountant, PrivkitAccountant):
            raise check.fail("accountant", self.accountant, "a PrivkitAccountant", owner,
                             "use opacus.PrivacyEngine for opacus's own accountants")
        n_epochs = check.positive_int("epochs", epochs, owner)
        kwargs.pop("epsilon_tolerance", None)
        if len(self.accountant) > 0:
            warnings.warn("make_private_with_epsilon calibrates for a fresh run, but this "
                          "engine's accountant already holds steps: the total will exceed "
                          "the target", stacklevel=2)
        batches = len(data_loader)
        accountant = self.accountant.accountant
        sigma = noise_multiplier_for(
            epsilon=target_epsilon, delta=target_delta, sampling_rate=1.0 / batches,
            steps=n_epochs * batches,
            accountant=None if accountant == "tightest" else accountant)
        return self.make_private(data_loader=data_loader, noise_multiplier=sigma, **kwargs)


register_accountant(PrivkitAccountant.mechanism(), PrivkitAccountant, force=True)
