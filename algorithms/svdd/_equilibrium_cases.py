"""The transcript cases of the equilibrium-point classifier
(:mod:`privkit.algorithms.svdd.equilibrium`). Its ``privkit audit`` rows are
:mod:`privkit.algorithms.svdd.audit_cases`'.

.. versionadded:: 0.3.0
   (moved out of :mod:`privkit.algorithms.svdd.equilibrium`, where they were added in 0.2.0)
.. versionchanged:: 0.3.0
   The audit cases moved to :mod:`privkit.algorithms.svdd.audit_cases`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privkit.neighbouring import Neighbouring

from .._audit_case import TranscriptCase

__all__ = ["CASE_PROBES", "case_rows", "private_case", "transcript_case_paper"]


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

