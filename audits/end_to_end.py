"""Black-box end-to-end rows of ``privkit audit``: each algorithm's *public estimator*
fitted many times on a tiny neighbouring pair of datasets, audited on what it releases.

The algorithm rows of :mod:`privkit.audits.algorithm_cases` are white box: each observes
one internal stage and redraws only its noise, so a wrong constant in any later stage,
or a release path that bypasses the accounted one, is invisible to them (issue 23).
Each row here (named ``<row>_e2e``) instead calls the estimator's own ``fit`` once per
draw, with a fresh ``random_state``, on a pair chosen so that one record moves the
output as much as the estimator's analysis allows, and hands the fitted attributes it
publishes (weights, centres, components, embeddings, decision values on fixed public
probes) to :func:`~privkit.audits.audit` with its default distinguisher. The released
vector may be projected on a fixed public direction first (a post-processing of the
release, so the bound stays valid for the estimator's claim).

A finding of these rows: DPSGDLinearSVM computed its weights from opacus's plain
floating-point noise (torch), and their lowest mantissa bits depended on the data: on the
DP-SGD row's pair the share of odd mantissas of ``coef_[0, 0]`` was 0.27 with the added
record and 0.52 without, which the default distinguisher's floating-point cells (Mironov
2012, "On significance of the least significant bits for differential privacy") turned
into a bound of 3.53 against the claim 2 on one of the seeds measured. The estimator now
noises each step through privkit's safe Gaussian release; a test in
``tests/audits/test_end_to_end.py`` pins that the parity no longer depends on the data,
and the row audits the raw weights.

Each row states its claim: the estimator's own guarantee as privkit computes it
(``guarantee_``, or privkit's tightest accountant on the estimator's plan) at a delta
chosen so that the few thousand fits the row can afford certify at least half of it.
A Gaussian mechanism's epsilon at delta 1e-5 lives in a tail of probability about
1e-5, which a few thousand draws cannot reach; the same estimator's privacy profile at
delta 0.05 is a claim privkit proves just as well, and events of probability 0.1-0.4
reach it (Jagielski, Ullman, Oprea 2020, "Auditing differentially private machine
learning", Section 4, and Nasr et al. 2023, "Tight auditing of differentially private
machine learning", on auditing a single point of the profile). Those claims ignore
``privkit audit --epsilon`` and ``--delta``, as the transcript rows do.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AuditCase, register
from privkit.neighbouring import Neighbouring

__all__ = ["END_TO_END", "FITS", "fit_system"]

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
#: Measured fits per side of each row (20% more choose the rejection set): with fits of
#: 0.2-3 ms, a row costs 1-15 s.
FITS = 1_000


def fit_system(make: Callable[[int], Any], release: Callable[[Any], Any]
               ) -> Callable[[Any, np.random.Generator, int], NDArray[np.float64]]:
    """A batched system whose draw on a dataset ``(X, y)`` (``y`` None: unsupervised) is
    ``release(make(seed).fit(X, y))`` for a fresh seed from ``rng``: the public estimator
    end to end, on copies of the data (a fit that changed its input would otherwise
    change every later one). Warnings are the transcript tier's concern, not this one's.
    """

    def system(data: Any, rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        X, y = data
        seeds = rng.integers(0, 2**32, size=size)
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in seeds:
                model = make(int(seed))
                if y is None:
                    model.fit(np.array(X, copy=True))
                else:
                    model.fit(np.array(X, copy=True), np.array(y, copy=True))
                rows.append(np.ravel(np.asarray(release(model), dtype=float)))
        return np.array(rows).reshape(size, -1)

    return system


def _case(system: Any, first: Any, second: Any, relation: Neighbouring, epsilon: float,
          delta: float, what: str, how: str, *, claim: str = "privkit",
          fits: int = FITS) -> AuditCase:
    pair = NeighbouringPair(first=first, second=second, relation=relation, description=how)
    return AuditCase(system, pair, epsilon, delta, max_trials=fits, claim=claim,
                     threat_model=f"black box on {what}, end to end: {how}")


def _margin_rows(n: int) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """The ERM rows of :func:`privkit.audits.algorithm_cases.margin_pair` as ``(X, y)``."""
    X = np.zeros((n, 1))
    X[0, 0] = 1.0
    y = np.ones(n)
    flipped = y.copy()
    flipped[0] = -1.0
    return (X, y), (X, flipped)


_ERM = {"n": 20, "regularization": 0.2}


def _erm(cls_name: str, claim: float) -> Callable[..., AuditCase]:
    """An ERM classifier at PureDP(claim) on :func:`_margin_rows`, no intercept (the
    margin pair attains the replace-one sensitivity ``2 / (n Lambda)`` of Chaudhuri,
    Monteleoni, Sarwate 2011, "Differentially private empirical risk minimization",
    Corollary 8, for the weight alone). Released: ``coef_``."""

    def build(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
        import privkit.algorithms as algorithms

        cls = getattr(algorithms, cls_name)

        def make(seed: int) -> Any:
            return cls(epsilon=claim, classes=[-1, 1], regularization=_ERM["regularization"],
                       fit_intercept=False, random_state=seed)

        first, second = _margin_rows(int(_ERM["n"]))
        return _case(fit_system(make, lambda m: m.coef_), first, second, R, claim, 0.0,
                     f"{cls_name}'s released coef_",
                     f"{int(_ERM['n'])} one-feature rows, one at the norm bound with its "
                     f"label flipped (regularization {_ERM['regularization']}); claim "
                     f"PureDP({claim})")

    return build


def _profile(plan: Any, delta: float) -> float:
    """privkit's tightest epsilon at ``delta`` for ``plan`` (the estimator's own)."""
    from privkit.accountants import tightest

    return float(tightest(plan, delta=delta).epsilon)


#: The calibration of the Gaussian rows, and the delta of their claims (see the module
#: docstring): a point of the estimator's privacy profile that a few thousand fits reach.
_GAUSS_EPSILON, _GAUSS_DELTA = 2.0, 0.05


def _kernel_mean(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """PrivateKernelMean (Gaussian noise on the mean embedding, replace-one, n public)
    with the linear-kernel Nyström map on the landmarks e_1, e_2 (phi(x) = x): three rows
    in the unit disc, the first, at the bound, replaced by its antipode, which moves the
    mean by its declared sensitivity 2/n. Released: ``embedding_``."""
    from privkit.algorithms import PrivateKernelMean

    def make(seed: int) -> Any:
        return PrivateKernelMean(2, epsilon=_GAUSS_EPSILON, delta=_GAUSS_DELTA,
                                 feature_map="nystrom", kernel="linear", landmarks=np.eye(2),
                                 data_radius=1.0, noise="gaussian", relation="replace_one",
                                 random_state=seed)

    first = np.array([[1.0, 0.0], [0.3, 0.2], [-0.1, 0.5]])
    second = first.copy()
    second[0] = [-1.0, 0.0]
    claim = _profile(make(0).plan(n_samples=3, n_features=2), _GAUSS_DELTA)
    return _case(fit_system(make, lambda m: m.embedding_), (first, None), (second, None),
                 R, claim, _GAUSS_DELTA, "PrivateKernelMean's released embedding_",
                 "three rows in the unit disc, the first (at the bound) replaced by its "
                 f"antipode; calibrated at ({_GAUSS_EPSILON}, {_GAUSS_DELTA}), claim: "
                 f"privkit's epsilon of its plan at delta {_GAUSS_DELTA}")


#: DPPCA's calibration: the released component shows only the noisy ``M_11 - M_22``
#: relative to ``M_12``; at 3 the row measured less than at 2 (0.47-0.51 against
#: 0.52-0.58 at 4,000 fits), so it gets more fits instead.
_PCA_EPSILON = 2.0


def _dp_pca(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPPCA (Analyze Gauss: Gaussian noise on X^T X, Dwork, Talwar, Thakurta, Zhang
    2014) with one component on two features: rows (e_1, e_1, e_2) against (e_1, e_2,
    e_2), which moves ``X^T X`` by ``e_1 e_1^T - e_2 e_2^T`` (its replace-one
    sensitivity). The released component leans to e_1 exactly when the noisy
    ``M_11 - M_22`` is positive, the sufficient statistic's sign: ``components_ ** 2``
    (sign-free) is what the row audits."""
    from privkit.algorithms import DPPCA

    def make(seed: int) -> Any:
        return DPPCA(1, epsilon=_PCA_EPSILON, delta=_GAUSS_DELTA, random_state=seed)

    e1, e2 = np.eye(2)
    first, second = np.array([e1, e1, e2]), np.array([e1, e2, e2])
    claim = _profile(make(0).plan(n_samples=3, n_features=2), _GAUSS_DELTA)
    return _case(fit_system(make, lambda m: m.components_[0, 0] ** 2), (first, None),
                 (second, None), R, claim, _GAUSS_DELTA,
                 "DPPCA's released components_ (squared: the sign is arbitrary)",
                 "unit rows (e1, e1, e2), the second replaced by e2; calibrated at "
                 f"({_PCA_EPSILON}, {_GAUSS_DELTA}), claim: privkit's epsilon of its plan "
                 f"at delta {_GAUSS_DELTA}", fits=8 * FITS)


def _svdd_statistic(first: Any, second: Any, nu: float) -> Callable[[Any], Any]:
    """The Laplace likelihood ratio (up to its public scale) of a released noisy centre
    between the SVDD centres of the pair's two datasets under the *released* feature map
    ``features_`` (a published attribute: the centres are a function of it and of the
    public pair, so the statistic is a post-processing of the release)."""
    from privkit.algorithms.svdd.svdd import svdd_centre

    def statistic(model: Any) -> Any:
        a, b = (svdd_centre(model.features_.transform(rows), nu).centre
                for rows in (first, second))
        c = np.asarray(model.centre_, dtype=float)
        return np.round(np.abs(c - b).sum() - np.abs(c - a).sum(), 9)

    return statistic


#: SVDD rows: D = (0, 0), D' = (0, 2.2). The one frequency w of the F = 2 map is drawn
#: from random_state on each fit (N(0, 2 gamma)), so the pair attains the declared L1
#: sensitivity only for some w; ``|w| 2.2`` lands near ``3 pi / 4`` (L1 distance
#: ``(1 + sqrt 2) / (2 sqrt 2) = 0.85`` of the bound) for typical w.
_SVDD_ROWS = (np.array([[0.0], [0.0]]), np.array([[0.0], [2.2]]))
#: The SVDD rows' calibration: at epsilon 4 the Laplace tails that carry the privacy loss
#: are frequent enough for two thousand fits.
_SVDD_EPSILON = 4.0
#: The equilibrium-point row's calibration (its centre gets 0.95 of it; at 6 the row
#: measured less, 0.44-0.45 at 3,000 fits, at 4 0.49-0.61: it gets more fits instead).
_EP_EPSILON = 4.0


def _private_svdd(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """PrivateSVDD (Laplace on the SVDD centre in random Fourier features), nu = 1/2,
    F = 2, unclipped centre: statistic :func:`_svdd_statistic`."""
    from privkit.algorithms import PrivateSVDD

    claim = _SVDD_EPSILON

    def make(seed: int) -> Any:
        return PrivateSVDD(epsilon=claim, nu=0.5, gamma=1.0, n_components=2,
                           noise="laplace", clip_centre=False, random_state=seed)

    first, second = _SVDD_ROWS
    return _case(fit_system(make, _svdd_statistic(first, second, 0.5)), (first, None),
                 (second, None), R, claim, 0.0,
                 "PrivateSVDD's released centre_ and features_ (the statistic: the Laplace "
                 "likelihood ratio between the pair's centres under the released map)",
                 f"1-D rows (0, 0), the second replaced by 2.2; nu 1/2, F = 2; claim "
                 f"PureDP({claim})", fits=4 * FITS)


def _equilibrium_points(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """EquilibriumPointClassifier (private mode): its noisy centre (phase I, share 0.95,
    unclipped) is published as ``centre_``, with ``features_``; the pair and statistic
    are PrivateSVDD's. The claim is the whole plan's (centre and votes) at delta 0.05."""
    from privkit.algorithms import EquilibriumPointClassifier

    def make(seed: int) -> Any:
        return EquilibriumPointClassifier(epsilon=_EP_EPSILON, delta=_GAUSS_DELTA, nu=0.5,
                                          gamma=1.0, n_components=2, centre_share=0.95,
                                          r_max=0.5, clip_centre=False, classes=[0, 1],
                                          random_state=seed)

    rows_first, rows_second = _SVDD_ROWS
    labels = np.array([0, 1])
    claim = _profile(make(0).plan(n_samples=2, n_features=1, n_classes=2), _GAUSS_DELTA)
    return _case(fit_system(make, _svdd_statistic(rows_first, rows_second, 0.5)),
                 (rows_first, labels), (rows_second, labels), R, claim, _GAUSS_DELTA,
                 "EquilibriumPointClassifier's released centre_ and features_ (the "
                 "statistic: PrivateSVDD's likelihood ratio)",
                 "1-D rows (0, 0) labelled (0, 1), the second replaced by 2.2; nu 1/2, "
                 f"F = 2, centre_share 0.95; calibrated at ({_EP_EPSILON}, "
                 f"{_GAUSS_DELTA}), claim: privkit's epsilon of its plan at delta "
                 f"{_GAUSS_DELTA}", fits=8 * FITS)


def _pilot_claim(make: Callable[[int], Any], data: tuple[Any, Any], delta: float) -> float:
    """The estimator's own ``guarantee_`` at ``delta`` after one pilot fit on ``data`` (a
    function of its public parameters and, under replace-one, the public n)."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(0).fit(X) if y is None else make(0).fit(X, y)
    return float(model.guarantee_.epsilon_at(delta))


#: The pipelines' rows: DP-PCA's pair with labels (each label twice), one component.
_PCA_ROWS = (np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]),
             np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]))
_PCA_LABELS = np.array([0, 1, 0, 1])


def _pipeline(cls_name: str, components: Callable[[Any], Any]) -> Callable[..., AuditCase]:
    """Wang et al.'s DPDR-DPML pipelines (PCA stage at pca_share 0.98, then the
    classifier): the released subspace, squared, as DPPCA's row audits it (at pca_share
    0.9 and 1,000 fits the federated one measured 0.48-0.72 of the claim; at 0.98 and
    3,000 fits both measured 0.60-0.64, at four times the cost)."""

    def build(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
        import privkit.algorithms as algorithms

        cls = getattr(algorithms, cls_name)

        def make(seed: int) -> Any:
            return cls(epsilon=_GAUSS_EPSILON, delta=_GAUSS_DELTA, classes=[0, 1],
                       n_components=1, pca_share=0.98, regularization=0.1,
                       random_state=seed)

        first, second = ((rows, _PCA_LABELS) for rows in _PCA_ROWS)
        claim = _pilot_claim(make, first, _GAUSS_DELTA)
        return _case(fit_system(make, lambda m: components(m)[0, 0] ** 2), first, second, R,
                     claim, _GAUSS_DELTA,
                     f"{cls_name}'s released PCA subspace (squared: the sign is arbitrary)",
                     "unit rows (e1, e1, e2, e2) labelled (0, 1, 0, 1), the second replaced "
                     f"by e2; pca_share 0.98, one component; calibrated at ({_GAUSS_EPSILON}, "
                     f"{_GAUSS_DELTA}), claim: its guarantee_ at delta {_GAUSS_DELTA}",
                     fits=2 * FITS)

    return build


#: Rows of the K-means row: enough that the noisy count stays positive (400 rows and
#: count_share 0.02 measured 0.47 of the claim too, at 2.4 times the cost).
_KMEANS_ROWS = 40


def _kmeans_nystrom(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """KMeansNystromClassifier with K = 1, one iteration, kmeans_share 0.95: the released
    landmark (``kmeans_.cluster_centers_``, the Nyström map's centre, a noisy sum over a
    noisy count) on 40 rows, 39 at the origin and (1, 0), replaced by its antipode (the
    cluster sum moves by its sensitivity 2, the count not at all; 40 rows keep the noisy
    count positive, so the centre's sign is the noisy sum's). Below half the claim:
    measured 0.44-0.49 (the learner's and the count's shares, and the centre's division
    by the noisy count, cost more than the half)."""
    from privkit.algorithms import KMeansNystromClassifier

    def make(seed: int) -> Any:
        return KMeansNystromClassifier(1, epsilon=_GAUSS_EPSILON, delta=_GAUSS_DELTA,
                                       classes=[0, 1], kernel="rbf", gamma=1.0,
                                       data_radius=1.0, n_iter=1, kmeans_share=0.95,
                                       count_share=0.05, regularization=0.1,
                                       random_state=seed)

    X = np.zeros((_KMEANS_ROWS, 2))
    X[0] = [1.0, 0.0]
    other = X.copy()
    other[0] = [-1.0, 0.0]
    y = np.arange(_KMEANS_ROWS) % 2
    claim = _pilot_claim(make, (X, y), _GAUSS_DELTA)
    return _case(fit_system(make, lambda m: m.kmeans_.cluster_centers_[0, 0]), (X, y), (other, y),
                 R, claim, _GAUSS_DELTA,
                 "KMeansNystromClassifier's released landmark (kmeans_.cluster_centers_; its "
                 "first coordinate, the direction the record moves)",
                 f"{_KMEANS_ROWS - 1} rows at the origin and (1, 0), replaced by (-1, 0); "
                 "K = 1, one iteration, kmeans_share 0.95, count_share 0.05; calibrated at "
                 f"({_GAUSS_EPSILON}, {_GAUSS_DELTA}), claim: its guarantee_ at delta "
                 f"{_GAUSS_DELTA}. Below half the claim: measured 0.44-0.49 at 1,000 fits "
                 "per side (the count's and the learner's shares, and the division by the "
                 "noisy count, are not observed apart)")


def _dp_sgd_svm(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPSGDLinearSVM, one full-batch step (sampling rate 1: no amplification to model),
    add-remove: D has four rows at the origin (no gradient on the weights), D' adds
    (1, 0) labelled 1, whose clipped gradient moves the weights along e_1. Released:
    ``coef_`` and ``intercept_``."""
    from privkit.algorithms import DPSGDLinearSVM

    def make(seed: int) -> Any:
        return DPSGDLinearSVM(epsilon=_GAUSS_EPSILON, delta=_GAUSS_DELTA, classes=[0, 1],
                              sampling_rate=1.0, epochs=1, expected_batch_size=4.0,
                              random_state=seed)

    X = np.zeros((4, 2))
    y = np.array([0, 1, 0, 1])
    more, labels = np.vstack([X, [1.0, 0.0]]), np.append(y, 1)
    claim = _pilot_claim(make, (X, y), _GAUSS_DELTA)

    def release(model: Any) -> Any:
        # the direction the added record moves (w_1, b) in
        return model.coef_[0, 0] + model.intercept_[0]

    return _case(fit_system(make, release),
                 (more, labels), (X, y), A, claim, _GAUSS_DELTA,
                 "DPSGDLinearSVM's released coef_ and intercept_ (projected on the direction "
                 "the added record moves them, w_1 + b)",
                 "four rows at the origin, and the same with (1, 0) labelled 1 added; one "
                 f"full-batch step; calibrated at ({_GAUSS_EPSILON}, {_GAUSS_DELTA}), claim: "
                 f"its guarantee_ at delta {_GAUSS_DELTA}", fits=4 * FITS)


def _lp_svm(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """LPSVMClassifier (the dense multiplicative-weights LP solver, each step's vertex
    chosen by the exponential mechanism): six rows, the first's label flipped. Released:
    ``coef_``, ``intercept_`` and the chosen vertices ``choices_``."""
    from privkit.algorithms import LPSVMClassifier

    def make(seed: int) -> Any:
        return LPSVMClassifier(epsilon=_GAUSS_EPSILON, delta=_GAUSS_DELTA, classes=[0, 1],
                               quality="count", n_iterations=2, regularization=0.1,
                               random_state=seed)

    X = np.array([[0.9, 0.1], [0.8, -0.2], [0.7, 0.3], [-0.9, 0.1], [-0.8, -0.2],
                  [-0.7, 0.3]])
    y = np.array([1, 1, 1, 0, 0, 0])
    flipped = y.copy()
    flipped[0] = 0
    claim = _pilot_claim(make, (X, y), _GAUSS_DELTA)
    return _case(fit_system(make, lambda m: np.concatenate(
                     [m.coef_.ravel(), m.intercept_, m.choices_])),
                 (X, y), (X, flipped), R, claim, _GAUSS_DELTA,
                 "LPSVMClassifier's released coef_, intercept_ and choices_",
                 "six rows, the first's label flipped; count score, T = 2; calibrated at "
                 f"({_GAUSS_EPSILON}, {_GAUSS_DELTA}), claim: its guarantee_ at delta "
                 f"{_GAUSS_DELTA}. Below half the claim by construction: a real row moves "
                 "a step's vertex scores by at most 2 OPT p_i, a third of the declared "
                 "sensitivity 3 OPT / s on six rows (the white-box row inserts the "
                 "sensitivity itself); measured 0.0 at 1,000 fits per side",
                 fits=FITS // 2)


def _dpksvmel_paper(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPKSVMEL against Theorem 1's PureDP(epsilon) (the paper's claim, which privkit does
    not make), on :func:`privkit.algorithms.kernels.dpksvmel.audit_case`'s pair: a released
    support vector that is the exact mean of a k-subset containing the original record
    is possible on the first dataset only."""
    from itertools import combinations

    from privkit.algorithms import DPKSVMEL
    from privkit.algorithms.kernels.dpksvmel import _audit_data

    k, claim = 2, 1.0
    X, y, target = _audit_data(k)
    moved = X.copy()
    moved[target] += 0.01
    others = [i for i in range(len(X)) if i != target]
    means = np.array([(X[target] + X[list(c)].sum(0)) / k
                      for c in combinations(others, k - 1)])

    def make(seed: int) -> Any:
        return DPKSVMEL(epsilon=claim, k=k, lls=0.5, classes=[0, 1], random_state=seed)

    def statistic(model: Any) -> Any:
        released = np.asarray(model.support_vectors_, dtype=float)
        gap = np.abs(released[:, None, :] - means[None, :, :]).max(-1)
        return float((gap < 1e-12).any())

    return _case(fit_system(make, statistic), (X, y), (moved, y), R, claim, 0.0,
                 "DPKSVMEL's released support_vectors_ (event: one is the exact mean of a "
                 "k-subset holding the original record)",
                 "two tight clusters, one non-support member moved by 0.01; the paper's "
                 f"PureDP({claim})", claim="paper", fits=200)


def _equilibrium_points_paper(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """The paper-faithful EquilibriumPointClassifier against the thesis' PureDP(epsilon)
    (privkit makes no claim for it), on :func:`privkit.algorithms.svdd._equilibrium_cases.
    audit_case_paper`'s pair: 40 rows at the origin and one at 3, moved to -3; event: a
    released equilibrium point within 0.5 of 3."""
    from privkit.algorithms import EquilibriumPointClassifier

    claim = 1.0

    def make(seed: int) -> Any:
        return EquilibriumPointClassifier(epsilon=claim, nu=0.05, gamma=1.0, n_components=8,
                                          learning_rate=0.001, n_iter=20, mode="paper",
                                          classes=[0, 1], random_state=seed)

    first = np.zeros((41, 1))
    first[40, 0] = 3.0
    second = first.copy()
    second[40, 0] = -3.0
    y = np.arange(41) % 2

    def statistic(model: Any) -> Any:
        return float((np.abs(np.asarray(model.equilibria_)[:, 0] - 3.0) < 0.5).any())

    return _case(fit_system(make, statistic), (first, y), (second, y), R, claim, 0.0,
                 "the paper-faithful EquilibriumPointClassifier's released equilibria_ "
                 "(event: one within 0.5 of 3)",
                 "40 rows at the origin and one at 3, moved to -3; the thesis' "
                 f"PureDP({claim})", claim="paper", fits=200)


END_TO_END: dict[str, Callable[..., AuditCase]] = {
    "dpdr_dpml_e2e": _pipeline("DPDRDPMLClassifier", lambda m: m.pca_.components_),
    "fed_dpdr_dpml_e2e": _pipeline("FedDPDRDPMLClassifier", lambda m: m.components_),
    "kmeans_nystrom_e2e": _kmeans_nystrom,
    "dp_sgd_svm_e2e": _dp_sgd_svm,
    "lp_svm_dmw_e2e": _lp_svm,
    "dpksvmel_paper_e2e": _dpksvmel_paper,
    "equilibrium_points_paper_e2e": _equilibrium_points_paper,
    "kernel_mean_e2e": _kernel_mean,
    "dp_pca_e2e": _dp_pca,
    "private_svdd_e2e": _private_svdd,
    "equilibrium_points_e2e": _equilibrium_points,
    "output_perturbation_e2e": _erm("OutputPerturbationClassifier", 2.0),
    # at 2, 0.52-0.59 of the claim (the Jacobian term of Theorem 9 is loose): 4 leaves margin
    "objective_perturbation_e2e": _erm("ObjectivePerturbationClassifier", 4.0),
}

for _name, _build in END_TO_END.items():
    register(_name, _build)
