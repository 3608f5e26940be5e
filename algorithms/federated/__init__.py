"""Private dimension reduction and federated SVMs: the system of T. Wang et al.,
*Differentially private SVMs with knowledge aggregation* (CMC 2024): DP-PCA by Gaussian
noise on the covariance (DPDR, Alg. 2), the objective-perturbation Huber SVM on the
projection (DPDR-DPML, Alg. 3) and federated weighted averaging (FedDPDR-DPML, Alg. 1),
in one process or on Flower (a process per participant).

======================  ===============================================================
module                  exports
======================  ===============================================================
``pca``                 ``DPPCA`` (Alg. 2; Analyze Gauss, Dwork et al. 2014),
                        ``DPDRDPMLClassifier`` (Alg. 3), ``private_subspace``
``federated``           ``FedDPDRDPMLClassifier``, ``Participant``, ``Server`` (Alg. 1)
``flower``              ``FlowerFedDPDRDPMLClassifier`` (the same on Flower)
``_flower_processes``   the processes of a local Flower deployment
``audit_cases``         the ``privkit audit`` rows of these estimators (white box and ``_e2e``)
======================  ===============================================================

The private SVM stage is :mod:`privkit.algorithms.linear`'s objective perturbation; DP-PCA
stays here, with DPDR, although the K-means Nyström learner of
:mod:`privkit.algorithms.kernels` borrows its budget split.

.. versionadded:: 0.3.0
   (the modules were at ``privkit.algorithms`` top level before)
"""

from privkit.algorithms.federated.federated import FedDPDRDPMLClassifier, Participant, Server
from privkit.algorithms.federated.flower import FlowerFedDPDRDPMLClassifier
from privkit.algorithms.federated.pca import DPPCA, DPDRDPMLClassifier, private_subspace

__all__ = [
    "DPPCA",
    "DPDRDPMLClassifier",
    "FedDPDRDPMLClassifier",
    "FlowerFedDPDRDPMLClassifier",
    "Participant",
    "Server",
    "private_subspace",
]
