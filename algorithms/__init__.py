"""privkit.algorithms: private learning algorithms composed from mechanism blocks.

Estimators follow scikit-learn's conventions (``fit``, ``predict``, ``get_params``), take
``epsilon`` as the total budget and ``random_state``, expose ``plan(n_samples,
n_features)`` before fitting, and after fitting ``guarantee_`` (privkit's accountant on
what ran), ``ledger_``, ``plan_`` and ``paper_claim_`` (the source paper's claim).

====================================  ==================================================
estimator                             source
====================================  ==================================================
``OutputPerturbationClassifier``      Chaudhuri et al. 2011 Alg. 1; seed 003 Alg. 1
``ObjectivePerturbationClassifier``   Chaudhuri et al. 2011 Alg. 2; seed 003 Alg. 2,
                                      seed 004 Alg. 3
``DPPCA``                             seed 004 Alg. 2 (Analyze Gauss, Dwork et al. 2014)
``DPDRDPMLClassifier``                seed 004 Alg. 3
``FedDPDRDPMLClassifier``             seed 004 Alg. 1 (Participant / Server roles)
``DPSGDLinearSVM``                    DP-SGD through opacus (Abadi et al. 2016)
====================================  ==================================================

scikit-learn is imported by these modules only; torch and opacus when
``DPSGDLinearSVM`` fits.

.. versionadded:: 0.1.0
"""

from privkit.algorithms.datasets import load_adult, load_csv
from privkit.algorithms.dpsgd import DPSGDLinearSVM
from privkit.algorithms.erm import (
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    clipped_rows,
    solve_erm,
)
from privkit.algorithms.federated import FedDPDRDPMLClassifier, Participant, Server
from privkit.algorithms.pca import DPPCA, DPDRDPMLClassifier, private_subspace

__all__ = [
    "DPPCA",
    "DPDRDPMLClassifier",
    "DPSGDLinearSVM",
    "FedDPDRDPMLClassifier",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "Participant",
    "Server",
    "clipped_rows",
    "load_adult",
    "load_csv",
    "private_subspace",
    "solve_erm",
]
