"""The runner of the black-box end-to-end rows of ``privkit audit``: each algorithm's
*public estimator* fitted many times on a tiny neighbouring pair of datasets, audited on
what it releases. The rows themselves (named ``<row>_e2e``) are declared next to their
estimators, in each family folder's ``audit_cases`` module
(:func:`~privkit.audits.registry.audit_row`).

The white-box algorithm rows observe one internal stage and redraw only its noise, so a
wrong constant in any later stage, or a release path that bypasses the accounted one, is
invisible to them (issue 23). Each end-to-end row instead calls the estimator's own
``fit`` once per draw (:func:`fit_system`), with a fresh ``random_state``, on a pair
chosen so that one record moves the output as much as the estimator's analysis allows,
and hands the fitted attributes it publishes (weights, centres, components, embeddings,
decision values on fixed public probes) to :func:`~privkit.audits.audit` with its default
distinguisher. The released vector may be projected on a fixed public direction first (a
post-processing of the release, so the bound stays valid for the estimator's claim).

A finding of these rows: DPSGDLinearSVM computed its weights from opacus's plain
floating-point noise (torch), and their lowest mantissa bits depended on the data: on the
DP-SGD row's pair the share of odd mantissas of ``coef_[0, 0]`` was 0.27 with the added
record and 0.52 without, which the default distinguisher's floating-point cells (Mironov
2012, "On significance of the least significant bits for differential privacy") turned
into a bound of 3.53 against the claim 2 on one of the seeds measured. The estimator now
noises each step through privkit's safe Gaussian release; a test in
``tests/audits/test_end_to_end.py`` pins that the parity no longer depends on the data,
and the row audits the raw weights.

Each row states its claim: the estimator's own guarantee as privkit computes it
(``guarantee_``, or privkit's tightest accountant on the estimator's plan) at a delta
chosen so that the few thousand fits the row can afford certify at least half of it.
A Gaussian mechanism's epsilon at delta 1e-5 lives in a tail of probability about
1e-5, which a few thousand draws cannot reach; the same estimator's privacy profile at
delta 0.05 is a claim privkit proves just as well, and events of probability 0.1-0.4
reach it (Jagielski, Ullman, Oprea 2020, "Auditing differentially private machine
learning", Section 4, and Nasr et al. 2023, "Tight auditing of differentially private
machine learning", on auditing a single point of the profile). Those claims ignore
``privkit audit --epsilon`` and ``--delta``, as the transcript rows do.

.. versionadded:: 0.3.0
.. versionchanged:: 0.3.0
   The rows moved to the family folders' ``audit_cases`` modules; this module keeps the
   runner.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AuditCase
from privkit.neighbouring import Neighbouring

__all__ = ["FITS", "GAUSS_DELTA", "GAUSS_EPSILON", "end_to_end_case", "fit_system",
           "pilot_claim", "plan_epsilon"]

#: Measured fits per side of each row (20% more choose the rejection set): with fits of
#: 0.2-3 ms, a row costs 1-15 s.
FITS = 1_000
#: The calibration of the Gaussian rows, and the delta of their claims (see the module
#: docstring): a point of the estimator's privacy profile that a few thousand fits reach.
GAUSS_EPSILON, GAUSS_DELTA = 2.0, 0.05


def fit_system(make: Callable[[int], Any], release: Callable[[Any], Any]
               ) -> Callable[[Any, np.random.Generator, int], NDArray[np.float64]]:
    """A batched system whose draw on a dataset ``(X, y)`` (``y`` None: unsupervised) is
    ``release(make(seed).fit(X, y))`` for a fresh seed from ``rng``: the public estimator
    end to end, on copies of the data (a fit that changed its input would otherwise
    change every later one). Warnings are the transcript tier's concern, not this one's.
    """

    def system(data: Any, rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        X, y = data
        seeds = rng.integers(0, 2**32, size=size)
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in seeds:
                model = make(int(seed))
                if y is None:
                    model.fit(np.array(X, copy=True))
                else:
                    model.fit(np.array(X, copy=True), np.array(y, copy=True))
                rows.append(np.ravel(np.asarray(release(model), dtype=float)))
        return np.array(rows).reshape(size, -1)

    return system


def end_to_end_case(system: Any, first: Any, second: Any, relation: Neighbouring, *,
                    epsilon: float, delta: float, what: str, how: str,
                    claim: str = "privkit", fits: int = FITS) -> AuditCase:
    """An end-to-end row: ``system`` on the pair ``(first, second)`` against the claim
    ``(epsilon, delta)``, capped at ``fits`` per side; the threat model reads "black box
    on WHAT, end to end: HOW"."""
    pair = NeighbouringPair(first=first, second=second, relation=relation, description=how)
    return AuditCase(system, pair, epsilon, delta, max_trials=fits, claim=claim,
                     threat_model=f"black box on {what}, end to end: {how}")


def plan_epsilon(plan: Any, *, delta: float) -> float:
    """privkit's tightest epsilon at ``delta`` for ``plan`` (the estimator's own)."""
    from privkit.accountants import tightest

    return float(tightest(plan, delta=delta).epsilon)


def pilot_claim(make: Callable[[int], Any], data: tuple[Any, Any], *, delta: float
                ) -> float:
    """The estimator's own ``guarantee_`` at ``delta`` after one pilot fit on ``data`` (a
    function of its public parameters and, under replace-one, the public n)."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(0).fit(X) if y is None else make(0).fit(X, y)
    return float(model.guarantee_.epsilon_at(delta))
