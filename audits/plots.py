"""Plots for audits: output histograms on D and D', and the bound as draws grow.

matplotlib is imported here only (with the non-interactive Agg backend if none is set).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privkit.audits.attacks import audit, draw
from privkit.audits.pairs import NeighbouringPair

__all__ = ["plot_bound_against_draws", "plot_output_histograms"]


def _pyplot() -> Any:
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_output_histograms(system: Callable[..., Any], pair: NeighbouringPair, *,
                           draws: int = 100_000, bins: int = 100, rng: Any = 0,
                           statistic: Callable[[Any], Any] | None = None) -> Any:
    """Overlaid histograms of (a scalar statistic of) the outputs on D and D'."""
    plt = _pyplot()
    seeds = np.random.SeedSequence(rng).spawn(2)
    outputs = [draw(system, data, seed, draws, True) for data, seed in
               zip((pair.first, pair.second), seeds, strict=True)]
    if statistic is not None:
        outputs = [np.asarray(statistic(o)) for o in outputs]
    outputs = [np.asarray(o, dtype=float).reshape(draws, -1)[:, 0] for o in outputs]
    figure, axes = plt.subplots(figsize=(6, 3.5))
    edges = np.histogram_bin_edges(np.concatenate(outputs), bins=bins)
    for values, label in zip(outputs, ("M(D)", "M(D')"), strict=True):
        axes.hist(values, bins=edges, alpha=0.5, density=True, label=label)
    axes.set_xlabel("output")
    axes.set_ylabel("density")
    axes.legend()
    figure.tight_layout()
    return figure


def plot_bound_against_draws(system: Callable[..., Any], pair: NeighbouringPair, *,
                             epsilon: float, delta: float = 0.0,
                             draws: Sequence[int] = (1_000, 10_000, 100_000, 1_000_000),
                             rng: Any = 0, **kwargs: Any) -> Any:
    """The audited lower bound for growing numbers of draws, against the claim."""
    plt = _pyplot()
    seeds = np.random.SeedSequence(rng).spawn(len(draws))
    bounds = [audit(system, pair, epsilon=epsilon, delta=delta, trials=n, rng=seed,
                    **kwargs).lower_bound for n, seed in zip(draws, seeds, strict=True)]
    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.plot(draws, bounds, marker="o", label="lower bound")
    axes.axhline(epsilon, color="black", linestyle="--", label="claim")
    axes.set_xscale("log")
    axes.set_xlabel("draws per side")
    axes.set_ylabel("epsilon")
    axes.legend()
    figure.tight_layout()
    return figure
