"""Private linear empirical risk minimisation: the system of Chaudhuri, Monteleoni,
Sarwate, "Differentially private empirical risk minimization" (JMLR 2011), as
P. van der Reijden, *Solving linear programs to train SVMs under differential privacy*
(Erasmus master's thesis, 2019) uses it (its Alg. 1-2), and DP-SGD (Abadi et al. 2016,
"Deep learning with differential privacy").

=====================  ================================================================
module                 exports
=====================  ================================================================
``erm``                ``OutputPerturbationClassifier`` (Alg. 1),
                       ``ObjectivePerturbationClassifier`` (Alg. 2), ``solve_erm``,
                       ``solve_multinomial``
``dpsgd``              ``DPSGDLinearSVM`` (DP-SGD through opacus)
``_private_linear``    the base estimator the two perturbations share
``_linear``            scores, labels from scores, the checks of query and training rows
``_solvers``           the regularised ERM solvers (L-BFGS polished by Newton steps)
``_losses``            the convex margin losses, gradients and curvature bounds
``audit_cases``        the ``privkit audit`` rows of these estimators (white box and ``_e2e``)
=====================  ================================================================

The other families build on these solvers (the K-means Nystrom learner, DPDR-DPML, the
LP-SVM baselines, private tuning); nothing here imports another family.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.linear.dpsgd import DPSGDLinearSVM
from privkit.algorithms.linear.erm import (
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    solve_erm,
    solve_multinomial,
)

__all__ = [
    "DPSGDLinearSVM",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "solve_erm",
    "solve_multinomial",
]
