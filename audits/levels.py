"""A level set of the likelihood ratio, for scalar outputs.

The most powerful rejection set for two laws P, Q is a superlevel set ``{x : p(x)/q(x)
>= r}`` (Neyman, Pearson 1933); on one-dimensional outputs it is a tail, an interval,
two tails, or any union of intervals, depending on the laws. :class:`LevelSets`
estimates the ratio by a histogram of the selection draws (bins at pooled quantiles,
finer in both tails) and returns the union of the bins with the largest ratio: the
density-ratio rule of DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev 2021, "DP-Sniper:
black-box discovery of differential privacy violations using classifiers", IEEE S&P),
with a histogram as its classifier. The set is chosen on the selection draws and
measured on fresh ones (:func:`~privkit.audits.audit`), so its flexibility costs no
validity.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.distinguishers import Distinguisher, Rule, _ranked_bounds

__all__ = ["LevelSets"]


#: The most selection draws per side a fit reads (the first ones): more only cost time
#: (a 10^8-draw audit selects on 10^7), the choice is already sharp.
FIT_DRAWS = 1_000_000


class LevelSets(Distinguisher):
    """S = the union of the histogram bins whose likelihood ratio (add-one smoothing) is
    largest, on scalar outputs: tails, intervals and two-sided events alike.

    The bins are cut at ``bins`` evenly spaced pooled quantiles of the selection draws,
    and at 24 geometrically spaced ones in each tail down to 16 pooled draws (where the
    best set of an (epsilon, delta) audit of a Gaussian lies). The bins are ranked by
    their smoothed ratio in each orientation, and the prefix of that ranking with the
    best bound (projected to the measured size, :meth:`Distinguisher.for_trials`) is the
    rule.
    """

    name = "level sets"

    def __init__(self, bins: int = 48, trials: int | None = None) -> None:
        super().__init__(trials)
        self.bins = bins

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        first, second = first[:FIT_DRAWS], second[:FIT_DRAWS]  # enough to choose
        a = np.asarray(first, dtype=float).ravel()
        b = np.asarray(second, dtype=float).ravel()
        pooled = np.concatenate([a, b])
        deepest = min(16.0 / max(pooled.size, 1), 1.0 / self.bins)
        tail = np.geomspace(deepest, 1.0 / self.bins, 24)
        levels = np.concatenate([np.linspace(0.0, 1.0, self.bins + 1)[1:-1], tail, 1 - tail])
        edges = np.unique(np.quantile(pooled, np.clip(levels, 0.0, 1.0)))
        size = edges.size + 1
        count_a = np.bincount(np.searchsorted(edges, a, side="right"), minlength=size)
        count_b = np.bincount(np.searchsorted(edges, b, side="right"), minlength=size)
        best: tuple[float, NDArray[np.intp], bool] = (-1.0, np.arange(0), False)
        for favoured, other, n_f, n_o, swapped in ((count_a, count_b, a.size, b.size, False),
                                                   (count_b, count_a, b.size, a.size, True)):
            ratio = (favoured + 1.0) / (n_f + 1.0) / ((other + 1.0) / (n_o + 1.0))
            order = np.argsort(-ratio, kind="stable")
            bounds = _ranked_bounds(np.cumsum(favoured[order]), n_f,
                                    np.cumsum(other[order]), n_o, delta=delta,
                                    confidence=confidence, trials=self.trials)
            i = int(np.argmax(bounds))
            if bounds[i] > best[0]:
                best = (float(bounds[i]), np.sort(order[: i + 1]), swapped)
        _, chosen, swapped = best
        member = np.zeros(size, dtype=bool)
        member[chosen] = True

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            index = np.searchsorted(edges, np.asarray(x, dtype=float), side="right")
            found: NDArray[np.bool_] = member[index]
            return found

        return Rule(contains=contains, swapped=swapped,
                    description=_describe(edges, member))


def _describe(edges: NDArray[np.float64], member: NDArray[np.bool_]) -> str:
    """The chosen bins as a union of intervals, e.g. ``x <= -1 or 0.5 < x <= 2``."""
    bounds = np.concatenate([[-np.inf], edges, [np.inf]])
    parts: list[str] = []
    i = 0
    while i < member.size:
        if not member[i]:
            i += 1
            continue
        j = i
        while j + 1 < member.size and member[j + 1]:
            j += 1
        low, high = bounds[i], bounds[j + 1]
        if np.isinf(low) and np.isinf(high):
            parts.append("any x")
        elif np.isinf(low):
            parts.append(f"x <= {high:.6g}")
        elif np.isinf(high):
            parts.append(f"x > {low:.6g}")
        else:
            parts.append(f"{low:.6g} < x <= {high:.6g}")
        i = j + 1
    shown = " or ".join(parts[:4]) + (f" or ({len(parts) - 4} more)" if len(parts) > 4 else "")
    return shown
