"""privkit.algorithms: private learning algorithms composed from mechanism blocks.

The private SVM family of the source papers (ERM by output and objective perturbation,
DP-PCA, federated SVMs, kernel methods, LP-SVMs) lands here; each estimator declares its
plan before fitting and reports ``guarantee_`` next to its paper's ``paper_claim_``.
This release ships no algorithm yet.

.. versionadded:: 0.1.0
"""

__all__: list[str] = []
