"""privkit.mechanisms: noise and selection blocks with exact privacy characterisations.

Every mechanism is a frozen value object with named calibration constructors, a
floating-point-safe ``release`` (recorded in the active ledger) and a plain-float
``simulate`` for experiments.

.. versionadded:: 0.1.0
"""

from privkit.mechanisms.gaussian import Gaussian, classic_gaussian_sigma
from privkit.mechanisms.laplace import Laplace, laplace_rdp

__all__ = ["Gaussian", "Laplace", "classic_gaussian_sigma", "laplace_rdp"]
