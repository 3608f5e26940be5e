"""Convex margin losses of the ERM algorithms, with gradients and curvature bounds.

A loss is a function of the margin ``z = y * (x . w)``; every one here is convex,
1-Lipschitz and has second derivative at most ``curvature`` (the c of Chaudhuri et al.
2011), as objective perturbation requires.
"""

from __future__ import annotations

import attrs
import numpy as np
from numpy.typing import NDArray


@attrs.frozen
class MarginLoss:
    """A margin loss: value, derivative and curvature bound."""

    name: str
    h: float = 0.5

    @property
    def curvature(self) -> float:
        """Upper bound on the second derivative: 1/(2h) for Huber, 1/4 for logistic."""
        return 1.0 / (2.0 * self.h) if self.name == "huber" else 0.25

    def value(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.name == "logistic":
            out: NDArray[np.float64] = np.logaddexp(0.0, -z)
            return out
        # van der Reijden 2019 eq. (3): 0 above 1 + h, (1 + h - z)^2 / (4h) within h of 1,
        # 1 - z below
        u = 1.0 - z
        return np.where(u < -self.h, 0.0,
                        np.where(u > self.h, u, (u + self.h) ** 2 / (4.0 * self.h)))

    def derivative(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.name == "logistic":
            out: NDArray[np.float64] = -1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))
            return out
        u = 1.0 - z
        return np.where(u < -self.h, 0.0, np.where(u > self.h, -1.0, -(u + self.h) / (2 * self.h)))

    def second_derivative(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """The second derivative (Huber: ``1/(2h)`` within h of the hinge, else 0)."""
        if self.name == "logistic":
            p = 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))
            out: NDArray[np.float64] = p * (1.0 - p)
            return out
        return np.where(np.abs(1.0 - z) <= self.h, 1.0 / (2.0 * self.h), 0.0)
