"""Private SVDD and the equilibrium-point classifier: the system of J. Park, *Differentially
private multi-class classification using kernel supports and equilibrium points* (SNU
master's thesis, 2022), with its baselines and its experiments.

==========================  ===========================================================
module                      exports
==========================  ===========================================================
``svdd``                    ``PrivateSVDD`` (Alg. 1, eq. 4.5-4.6, Cor. 4.2)
``_svdd_dual``              the SVDD dual, solved exactly and certified by its duality
                            gap (on the ``_hull`` accelerator)
``equilibrium``             ``EquilibriumPointClassifier`` (ch. 5-6, private and paper
                            modes)
``_equilibrium_dynamics``   the equilibrium-point dynamics and their public grid of
                            cells (eq. 5.2, 5.6)
``svm_baselines``           ``SVMWeightClassifier``, ``SVMOutputClassifier``,
                            ``SVMSemiClassifier`` (sec. 6.3)
``_hinge_ovr``              the one-vs-rest hinge SVM on random features the baselines
                            share
``park2022``                the reproduction protocol of sections 7.1-7.5 (``privkit
                            reproduce park2022``)
``_equilibrium_cases``      the classifier's transcript cases
``audit_cases``             the ``privkit audit`` rows of these estimators (white box and ``_e2e``)
==========================  ===========================================================

The random Fourier features come from :mod:`privkit.algorithms.kernels`, the compiled
solver and descent from ``privkit.algorithms._accelerators``; neither imports this
family.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.svdd.equilibrium import EquilibriumPointClassifier
from privkit.algorithms.svdd.svdd import PrivateSVDD
from privkit.algorithms.svdd.svm_baselines import (
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
)

__all__ = [
    "EquilibriumPointClassifier",
    "PrivateSVDD",
    "SVMOutputClassifier",
    "SVMSemiClassifier",
    "SVMWeightClassifier",
]
