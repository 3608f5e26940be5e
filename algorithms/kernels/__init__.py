"""Private kernel learning: the system of B. Lee, J. Ahn, C. Park, *Differential privacy in
scalable general kernel learning via K-means Nyström random features* (DP k-means, then
Nyström features on the private centres, then a private linear learner), the private
kernel mean embedding and MMD test it builds on (Balog, Tolstikhin, Schölkopf 2018,
"Differentially private database release via kernel mean embeddings"), random Fourier
features, and *DPKSVMEL* (a kernel SVM made private by an exponential + Laplace hybrid on
its support vectors).

=====================  ================================================================
module                 exports
=====================  ================================================================
``nystrom``            ``KMeansNystromClassifier``, ``NystromMap``, ``Kernel``,
                       ``kernel_approximation_error``
``nystrom_map``        the Nyström map of any kernel with a public norm bound
``kmeans``             ``DPKMeans`` (DP-Lloyd; Su, Cao, Li, Bertino, Lyu, Lin 2017)
``feature_mean``       the private mean of a bounded feature map (sums, sensitivities)
``kernel_mean``        ``PrivateKernelMean``
``mmd_test``           ``private_mmd_test``
``random_features``    ``RandomFourierFeatures`` (Rahimi, Recht 2007), which Park 2022's
                       system (:mod:`privkit.algorithms.svdd`) uses too
``dpksvmel``           ``DPKSVMEL`` (as published), ``DPKSVMELCorrected`` (private)
``audit_cases``        the ``privkit audit`` rows of these estimators (white box and ``_e2e``)
=====================  ================================================================

This family imports :mod:`privkit.algorithms.linear` (the K-means Nyström learner's
private linear stage) and DP-PCA's budget split from :mod:`privkit.algorithms.federated`;
neither imports it back.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.kernels.dpksvmel import DPKSVMEL, DPKSVMELCorrected
from privkit.algorithms.kernels.kernel_mean import PrivateKernelMean
from privkit.algorithms.kernels.kmeans import DPKMeans
from privkit.algorithms.kernels.mmd_test import private_mmd_test
from privkit.algorithms.kernels.nystrom import (
    Kernel,
    KMeansNystromClassifier,
    NystromMap,
    kernel_approximation_error,
)
from privkit.algorithms.kernels.random_features import RandomFourierFeatures

__all__ = [
    "DPKSVMEL",
    "DPKMeans",
    "DPKSVMELCorrected",
    "KMeansNystromClassifier",
    "Kernel",
    "NystromMap",
    "PrivateKernelMean",
    "RandomFourierFeatures",
    "kernel_approximation_error",
    "private_mmd_test",
]
