"""The registered audit cases of the equilibrium-point classifier
(:mod:`privkit.algorithms.svdd.equilibrium`): its private mode's noisy centre, and the thesis'
claim for the paper-faithful mode.

.. versionadded:: 0.3.0
   (moved out of :mod:`privkit.algorithms.svdd.equilibrium`, where they were added in 0.2.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privkit.neighbouring import Neighbouring

from .._audit_case import TranscriptCase
from .._certified import certified
from ..kernels.random_features import RandomFourierFeatures
from .svdd import svdd_centre

__all__ = ["CASE_PROBES", "audit_case", "audit_case_paper", "case_rows", "private_case",
           "transcript_case_paper"]


def audit_case(epsilon: float, delta: float = 1e-5) -> Any:
    """The private classifier (``mode="private"``) audited on its phase-I release.

    The classifier's transcript is the noisy centre (Laplace, Algorithm 1) followed,
    adaptively, by the stability histogram of the cubes' votes; the model it publishes is
    post-processing of the two. The case observes the noisy centre (a marginal of the
    transcript, so its lower bound is a valid lower bound for the whole plan's
    ``guarantee_``), with ``centre_share=0.9`` so that this stage carries most of the
    budget (as the PCA stage does in the DPDR-DPML case). The pair is SVDD's worst case
    (:func:`privkit.algorithms.svdd.svdd.worst_case_rows`: REPLACE_ONE, ``nu = 1/2``, F = 2,
    a row replaced by one with negated features; labels 0 and 1), which attains the
    centre's declared L1 sensitivity; the statistic is the Laplace likelihood ratio.
    The claim is privkit's accountant on the estimator's own plan (centre and votes),
    at ``delta``: the ceiling of this marginal is ``0.9 epsilon / claim``.
    """
    from privkit.audits.pairs import NeighbouringPair
    from privkit.audits.registry import AuditCase

    from .equilibrium import EquilibriumPointClassifier
    from .svdd import centre_audit_system, worst_case_rows

    model = EquilibriumPointClassifier(epsilon=epsilon, delta=delta, nu=0.5, gamma=1.0,
                                       n_components=2, centre_share=0.9, r_max=0.5,
                                       classes=[0.0, 1.0], random_state=0)
    relation = model._validate()
    rff = RandomFourierFeatures(2, 1.0, 0).fit(np.zeros((1, 1)))
    rows_first, rows_second = worst_case_rows(rff)
    labels = np.array([0.0, 1.0])
    first = np.column_stack([rows_first, labels])
    second = np.column_stack([rows_second, labels])
    e_c, d_c, _, _ = model._budget(*model._stage_budget())
    block: Any = model._centre_block(relation, e_c, d_c)
    system = centre_audit_system(block, rff, rows_first, rows_second, model.nu, model.tol,
                                 first)

    plan = model.plan(n_samples=2, n_features=1, n_classes=2)
    claim = float(certified(plan, delta=delta).epsilon_at(delta))
    pair = NeighbouringPair(first=first, second=second, relation=Neighbouring.REPLACE_ONE,
                            description="a row replaced by one with negated features")
    return AuditCase(system, pair, claim, delta, ceiling=min(1.0, e_c / claim),
                     threat_model=(
        "white box on the noisy SVDD centre (phase I, centre_share=0.9, before clipping); "
        "the votes (phase III) are not observed, so the bound is a marginal of the "
        "transcript and valid for the whole plan's guarantee; nu = 1/2, F = 2, the row "
        "replaced by one with negated features (the centre's L1 sensitivity attained); "
        "the SVDD solve is computed once per input, only the Laplace noise is redrawn; "
        "statistic: the Laplace likelihood ratio"))


def audit_case_paper(epsilon: float, delta: float = 1e-5) -> Any:
    """The thesis' claim (``mode="paper"``, PureDP(epsilon)) on a pair that breaks it.

    REPLACE_ONE; 1-D data: 40 rows at the origin and one row at 3 on D, at -3 on D'.
    The paper-faithful model releases the training EPs; the output is whether a released
    EP lies within 0.5 of 3. The row's end point moves by at most ``2 lr iters sup |grad|``
    (far below 0.5), so the event has probability 1 on D and 0 on D': no finite epsilon.
    Each draw runs the noise on the centre and the dynamics from the changed row.
    """
    from privkit.audits.pairs import NeighbouringPair
    from privkit.audits.registry import AuditCase

    from .equilibrium import EquilibriumPointClassifier

    model = EquilibriumPointClassifier(epsilon=epsilon, nu=0.05, gamma=1.0, n_components=8,
                                       learning_rate=0.001, n_iter=20, mode="paper",
                                       random_state=0)
    relation = model._validate()
    first = np.zeros((41, 1))
    first[40, 0] = 3.0
    second = first.copy()
    second[40, 0] = -3.0
    rff = RandomFourierFeatures(8, 1.0, 0).fit(first)
    centres = {rows.tobytes(): svdd_centre(rff.transform(rows), model.nu).centre
               for rows in (first, second)}
    e_c, d_c, _, _ = model._budget(*model._stage_budget())
    block = model._centre_block(relation, e_c, d_c)

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        rows = np.asarray(data, dtype=np.float64)
        noisy = block.simulate(centres[rows.tobytes()], rng=rng,  # type: ignore[union-attr]
                               size=size)
        noisy = noisy / np.maximum(np.linalg.norm(noisy, axis=1, keepdims=True), 1.0)
        x = np.full((size, 1), rows[40, 0])
        switch = math.floor(0.8 * model.n_iter)
        for t in range(model.n_iter):
            lr = model.learning_rate if t < switch else model.learning_rate / 5.0
            proj = x @ rff.frequencies_.T
            coef = np.cos(proj) * noisy[:, 4:] - np.sin(proj) * noisy[:, :4]
            x += 2.0 * lr * (coef @ rff.frequencies_) * math.sqrt(2.0 / 8)
        return (np.abs(x[:, 0] - 3.0) < 0.5).astype(np.int64)

    pair = NeighbouringPair(first=first, second=second, relation=Neighbouring.REPLACE_ONE,
                            description="one row moved from 3 to -3")
    # the event has probability 1 against 0: 2 x 10^5 draws certify ~11 nats, far above
    # any claim audited, at a sixth of the cost of 10^6 (each draw runs the dynamics)
    return AuditCase(system, pair, epsilon, 0.0, max_trials=200_000, threat_model=(
        "black box on the released training EPs of the paper-faithful model; the centre's "
        "noise is redrawn and the dynamics rerun from the changed row on each draw; "
        "event: a released EP within 0.5 of 3"))


#: The transcript cases' probes.
CASE_PROBES = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [3.0, 3.0]])


def case_rows() -> tuple[Any, Any]:
    """The transcript cases' D: 48 rows of two 2-D blobs, labels 0 and 1 (24 each)."""
    rng = np.random.default_rng(0)
    y = np.arange(48) % 2
    return np.array([[-1.0, 0.0], [1.0, 0.0]])[y] + 0.5 * rng.normal(size=(48, 2)), y


def transcript_case_paper(*, declare_classes: bool = True) -> TranscriptCase:
    """The paper-faithful mode (``mode="paper"``) audited against the thesis' claim
    ``PureDP(epsilon)`` (``claim="paper"``: privkit makes no claim for it, and expects the
    audit to find it violated, as the released equilibrium points follow single rows).
    The configuration of :meth:`EquilibriumPointClassifier.transcript_case` under
    REPLACE_ONE, the thesis' relation, at epsilon 1. With declared classes the audit
    finds the violation on every channel (a released equilibrium point follows the
    changed record); with a private label set (delta 1e-3) the labels' 24 records each
    stay below the stability threshold at this epsilon (about 190), so no phase runs and
    the transcript is the label release alone."""
    from .equilibrium import EquilibriumPointClassifier

    X, y = case_rows()
    estimator = EquilibriumPointClassifier(
        epsilon=1.0, delta=1e-3, nu=0.125, gamma=0.5, n_components=4, learning_rate=0.01,
        n_iter=5, r_max=0.5, mode="paper", classes=[0, 1, 2] if declare_classes else None,
        random_state=0)
    return TranscriptCase(
        estimator=estimator, X=X, y=y, relation=Neighbouring.REPLACE_ONE, epsilon=1.0,
        delta=0.0, record=np.array([0.5, 0.5]), label=1,
        new_label=2 if declare_classes else 7, at_bound=np.array([1e6, -1e6]),
        beyond_bound=np.array([1e40, -1e40]), probes=CASE_PROBES, claim="paper")


def private_case(cls: Any, declare_classes: bool) -> TranscriptCase:
    """:meth:`EquilibriumPointClassifier.transcript_case`: the private mode in a few
    milliseconds, 48 rows of two 2-D blobs (labels 0 and 1), F = 4, 5 steps, cubes of
    half-width 0.5, under ADD_REMOVE (the auditor's added records test that nothing
    depends on n). With ``classes=[0, 1, 2]`` (2 is the new label no record has), epsilon
    2; with a private label set, epsilon 8 (each label's 24 records near the stability
    threshold); delta 1e-3 either way. No data bound: rows far out are valid
    (``beyond_bound`` is clipped onto ``COORDINATE_BOUND``)."""
    X, y = case_rows()
    epsilon = 2.0 if declare_classes else 8.0
    estimator = cls(epsilon=epsilon, delta=1e-3, nu=0.125, gamma=0.5, n_components=4,
                    learning_rate=0.01, n_iter=5, r_max=0.5, relation="add_remove",
                    classes=[0, 1, 2] if declare_classes else None, random_state=0)
    return TranscriptCase(
        estimator=estimator, X=X, y=y, relation=Neighbouring.ADD_REMOVE, epsilon=epsilon,
        delta=1e-3, record=np.array([0.5, 0.5]), label=1,
        new_label=2 if declare_classes else 7, at_bound=np.array([1e6, -1e6]),
        beyond_bound=np.array([1e40, -1e40]), probes=CASE_PROBES)

