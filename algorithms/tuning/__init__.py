"""Private model selection: Papernot and Steinke, "Hyperparameter tuning with Renyi
differential privacy" (ICLR 2022), Theorem 2 (a random number of runs, only the best one
published), over any of privkit's private estimators.

====================  =================================================================
module                exports
====================  =================================================================
``selection``         ``PrivateGridSearch``
``_repeat_select``    the random number of runs and what it costs
====================  =================================================================

The search checks its inputs as :mod:`privkit.algorithms.linear` does (and audits itself
on output perturbation); nothing there imports this family.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.tuning.selection import PrivateGridSearch

__all__ = ["PrivateGridSearch"]
