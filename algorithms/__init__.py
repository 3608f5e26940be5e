"""privkit.algorithms: private learning algorithms composed from mechanism blocks.

Estimators follow scikit-learn's conventions (``fit``, ``predict``, ``get_params``), take
``epsilon`` as the total budget and ``random_state``, expose ``plan(*, n_samples,
n_features, n_classes)`` before fitting, and after fitting ``guarantee_`` (privkit's accountant on
what ran), ``ledger_``, ``plan_`` and ``paper_claim_`` (the source paper's claim).

====================================  ==================================================
estimator                             source
====================================  ==================================================
``OutputPerturbationClassifier``      Chaudhuri, Monteleoni, Sarwate 2011, Alg. 1
``ObjectivePerturbationClassifier``   Chaudhuri, Monteleoni, Sarwate 2011, Alg. 2
``DPPCA``                             Wang et al. 2024 Alg. 2 (Analyze Gauss, Dwork et al.
                                      2014)
``DPDRDPMLClassifier``                Wang et al. 2024 Alg. 3
``FedDPDRDPMLClassifier``             Wang et al. 2024 Alg. 1 (Participant / Server roles)
``FlowerFedDPDRDPMLClassifier``       the same on Flower (a process per participant)
``DPSGDLinearSVM``                    DP-SGD through opacus (Abadi et al. 2016)
``PrivateSVDD``                       Park 2022 Alg. 1 (on ``RandomFourierFeatures``)
``EquilibriumPointClassifier``        Park 2022 ch. 5-6 (private and paper modes)
``SVMWeightClassifier`` etc.          Park 2022 sec. 6.3 baselines (Rubinstein et al.
                                      2012; Jain, Thakurta 2013)
``LPSVMClassifier``                   van der Reijden 2019 Alg. 3; Hsu et al. 2014
``DPKMeans``                          Su, Cao, Li, Bertino, Lyu, Lin 2017 (DP-Lloyd)
``KMeansNystromClassifier``           Lee, Ahn, Park (K-means Nystrom random features)
``PrivateKernelMean``,                Balog, Tolstikhin, Scholkopf 2018 (private kernel
``private_mmd_test``                  mean embeddings); Gretton et al. 2012 (MMD test)
``DPKSVMEL``, ``DPKSVMELCorrected``   DPKSVMEL as published (no guarantee) and the
                                      nearest private variant
``PrivateGridSearch``                 Papernot, Steinke 2022 Thm 2 (random number of runs)
``PublicRangeScaler`` and others      public-bound preprocessing (no budget)
====================================  ==================================================

``inspect_rows`` is the data owner's own diagnostic (not private): how many rows an
estimator would clip onto its bound or replace because they are not finite.

The modules are grouped by the paper whose system they hold, a folder per family:
``linear`` (Chaudhuri et al.; DP-SGD), ``kernels`` (Lee, Ahn, Park; kernel means; random
features; DPKSVMEL), ``svdd`` (Park 2022), ``lp`` (van der Reijden 2019), ``federated``
(Wang et al. 2024) and ``tuning``, beside ``analytics`` and ``reproduce``; what several
families share (label release, spending, row bounds, audit cases, datasets,
preprocessing, the compiled ``_accelerators``) stays at this level. Families import each
other one way only: ``kernels`` imports ``linear`` and ``federated``; ``federated``,
``lp`` and ``tuning`` import ``linear``; ``svdd`` imports ``kernels``; ``linear`` imports
no family. The public names are imported from here.

scikit-learn is imported by these modules only; torch and opacus when
``DPSGDLinearSVM`` fits; flwr when ``FlowerFedDPDRDPMLClassifier`` fits.

.. versionadded:: 0.1.0
"""

from privkit.algorithms._bounds import RowReport, clipped_rows, inspect_rows
from privkit.algorithms.datasets import load_adult, load_csv
from privkit.algorithms.federated import (
    DPPCA,
    DPDRDPMLClassifier,
    FedDPDRDPMLClassifier,
    FlowerFedDPDRDPMLClassifier,
    Participant,
    Server,
    private_subspace,
)
from privkit.algorithms.kernels import (
    DPKSVMEL,
    DPKMeans,
    DPKSVMELCorrected,
    Kernel,
    KMeansNystromClassifier,
    NystromMap,
    PrivateKernelMean,
    RandomFourierFeatures,
    kernel_approximation_error,
    private_mmd_test,
)
from privkit.algorithms.linear import (
    DPSGDLinearSVM,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    solve_erm,
    solve_multinomial,
)
from privkit.algorithms.lp import (
    LPSVMClassifier,
    calibrate_step_epsilon,
    dense_projection,
    solve_private_lp,
)
from privkit.algorithms.preprocessing import (
    PublicOneHotEncoder,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
)
from privkit.algorithms.svdd import (
    EquilibriumPointClassifier,
    PrivateSVDD,
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
)
from privkit.algorithms.tuning import PrivateGridSearch

__all__ = [
    "DPKSVMEL",
    "DPPCA",
    "DPDRDPMLClassifier",
    "DPKMeans",
    "DPKSVMELCorrected",
    "DPSGDLinearSVM",
    "EquilibriumPointClassifier",
    "FedDPDRDPMLClassifier",
    "FlowerFedDPDRDPMLClassifier",
    "KMeansNystromClassifier",
    "Kernel",
    "LPSVMClassifier",
    "NystromMap",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "Participant",
    "PrivateGridSearch",
    "PrivateKernelMean",
    "PrivateSVDD",
    "PublicOneHotEncoder",
    "PublicRangeScaler",
    "PublicStandardScaler",
    "RandomFourierFeatures",
    "RowNormClipper",
    "RowReport",
    "SVMOutputClassifier",
    "SVMSemiClassifier",
    "SVMWeightClassifier",
    "Server",
    "calibrate_step_epsilon",
    "clipped_rows",
    "dense_projection",
    "inspect_rows",
    "kernel_approximation_error",
    "load_adult",
    "load_csv",
    "private_mmd_test",
    "private_subspace",
    "solve_erm",
    "solve_multinomial",
    "solve_private_lp",
]
