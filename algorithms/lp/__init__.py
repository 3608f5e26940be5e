"""Private linear programming and the LP-SVMs: the system of P. van der Reijden, *Solving
linear programs to train SVMs under differential privacy* (Erasmus master's thesis, 2019):
the private dense multiplicative weights LP solver of Hsu, Roth, Roughgarden, Ullman
("Privately solving linear programs", ICALP 2014) applied to LP-SVMs (Alg. 3), with the
alternative quality score (eq. 13-14).

===================  ==================================================================
module               exports
===================  ==================================================================
``private_lp``       ``solve_private_lp``, ``dense_projection``,
                     ``calibrate_step_epsilon`` (dense multiplicative weights)
``lp_svm``           ``LPSVMClassifier`` (Alg. 3)
``_lp_svm_forms``    the soft- and hard-margin LP forms (eq. 4-5) and their non-private
                     reference
``audit_cases``      the ``privkit audit`` rows ``lp_svm_dmw`` and ``lp_svm_dmw_e2e``
===================  ==================================================================

The thesis' Chaudhuri et al. baselines (its Alg. 1-2) are :mod:`privkit.algorithms.linear`,
which ``lp_svm`` imports; nothing there imports this family.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.lp.lp_svm import LPSVMClassifier
from privkit.algorithms.lp.private_lp import (
    calibrate_step_epsilon,
    dense_projection,
    solve_private_lp,
)

__all__ = ["LPSVMClassifier", "calibrate_step_epsilon", "dense_projection", "solve_private_lp"]
