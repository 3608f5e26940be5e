"""The label set of a classifier: declared public, or released privately and accounted.

Two datasets that differ in one record whose label no other record has give different
``np.unique(y)`` with certainty, so a classifier that publishes ``classes_ = np.unique(y)``
(and sizes its one-vs-rest problems by it) leaks membership outside any epsilon. privkit's
classifiers take the label set as a public parameter, ``classes=`` (scikit-learn's name in
``partial_fit``), and without it release the label set privately:

* **declared** (``classes=[...]``): ``classes_`` is the sorted declared set, whatever the
  data hold. It costs nothing;
* **released** (``classes=None``): a :class:`~privkit.mechanisms.StabilityHistogram` with
  one count column per distinct label (Vadhan 2017, "The complexity of differential
  privacy", Theorem 3.5: a label is published only if its Laplace-noised count clears a
  threshold set by delta) publishes the labels whose records are numerous enough. It costs
  ``(LABEL_SHARE * epsilon, delta_L)``; the learning stage is calibrated to what is left.
  Pure epsilon-DP cannot release a label set from an unbounded label domain (a label held
  by one record is released with positive probability, never without it), so with
  ``delta == 0`` a classifier refuses before touching the data and asks for ``classes``.

Either way, a record whose label is not in ``classes_`` (a label outside the declared set,
or one the release suppressed) is not an error: refusing it would reveal that such a record
exists. Each estimator maps it to a neutral record by a public rule stated in its docstring
(under add-remove it is removed; under replace-one, where n is public, it is replaced by a
record that moves nothing, such as a zero row), which any neighbouring pair survives.

Composition. The label release's output chooses the learning stage (how many one-vs-rest
problems, which labels), and that stage is calibrated, for every possible label set, to
the same ``(epsilon_rest, delta_rest)``. Basic composition holds for adaptively chosen
mechanisms each of which satisfies its guarantee for every choice (Dwork, Rothblum, Vadhan
2010; Rogers, Roth, Ullman, Vadhan 2016, Theorem 3.6), so the estimator is
``(epsilon_L + epsilon_rest, delta_L + delta_rest)``-DP, which :meth:`LabelSet.guarantee`
reports. A tighter accountant applied to the plan of one particular label set would not be
valid for the adaptive choice, so privkit does not use one here.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee
from privkit.mechanisms import StabilityHistogram
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed, Sequential

__all__ = ["LABEL_SHARE", "LabelSet", "declared_classes", "label_budget", "release_label_set",
           "total_claim"]

#: Share of epsilon (and of delta, when the learning stage uses delta) that a classifier
#: without declared ``classes`` spends on releasing its label set. A public constant.
LABEL_SHARE = 0.1


def declared_classes(classes: Any, owner: str) -> NDArray[Any] | None:
    """The declared label set, sorted (scikit-learn's ``classes_`` order), or ``None``.

    ``classes`` is a public parameter: a one-dimensional collection of at least two
    distinct, mutually comparable labels.
    """
    if classes is None:
        return None
    try:
        values = np.asarray(classes)
        unique = np.unique(values)
    except (TypeError, ValueError) as exc:
        raise check.fail("classes", classes, "None or a 1-D collection of comparable labels",
                         owner) from exc
    if values.ndim != 1 or unique.size != values.size or unique.size < 2:
        raise check.fail("classes", classes, "None or a 1-D collection of at least 2 "
                         "distinct labels", owner)
    return unique


def label_budget(epsilon: float, delta: float, *, stage_uses_delta: bool,
                 owner: str) -> tuple[float, float]:
    """``(epsilon_L, delta_L)`` of the label release: ``LABEL_SHARE`` of epsilon, and the
    same share of delta (all of it when the learning stage is pure).

    Raises before any data is touched when ``delta == 0`` (see the module docstring).
    """
    if delta <= 0.0:
        raise check.fail("classes", None, "the public label set (for example "
                         "classes=[0, 1]) when delta is 0", owner,
                         "a label set learnt from the data is released by a stability "
                         "histogram, which needs delta > 0; declare the labels your task "
                         "defines, or pass a delta")
    return LABEL_SHARE * epsilon, (LABEL_SHARE * delta if stage_uses_delta else delta)


def _histogram(epsilon: float, delta: float, relation: Neighbouring) -> StabilityHistogram:
    return StabilityHistogram.for_approx_dp(epsilon=epsilon, delta=delta, n_classes=1,
                                            relation=relation)


@attrs.frozen
class LabelSet:
    """A classifier's label set and what it cost.

    ``classes`` is ``classes_``; ``block`` is the stability histogram that released it
    (``None`` when declared); ``epsilon`` and ``delta`` its cost (0 when declared).
    """

    classes: NDArray[Any] = attrs.field(eq=False)
    block: StabilityHistogram | None = None
    epsilon: float = 0.0
    delta: float = 0.0

    @property
    def released(self) -> bool:
        """True when the label set was learnt from the data (and charged)."""
        return self.block is not None

    def codes(self, y: NDArray[Any]) -> NDArray[np.int64]:
        """Each label's index in ``classes``; ``-1`` for a label outside it (a neutral
        record for the estimator's stated rule)."""
        index = np.searchsorted(self.classes, y)
        index = np.clip(index, 0, max(self.classes.size - 1, 0))
        inside = self.classes.size > 0
        found = (self.classes[index] == y) if inside else np.zeros(len(y), dtype=bool)
        codes: NDArray[np.int64] = np.where(found, index, -1).astype(np.int64)
        return codes

    def plan(self, stage: Block | None) -> Block | None:
        """The estimator's plan: the label release (if any), then ``stage``."""
        if self.block is None:
            return stage
        return self.block if stage is None else Sequential(self.block, stage)

    def guarantee(self, stage: Guarantee | None, stage_delta: float) -> Guarantee | None:
        """The estimator's guarantee: ``stage`` itself for a declared label set; otherwise
        the label release and ``stage`` (taken at ``stage_delta``) by basic composition,
        which holds for the adaptive choice (see the module docstring). ``stage`` is
        ``None`` when no learning stage ran (fewer than two labels were released)."""
        if self.block is None:
            return stage
        if stage is None:
            return ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return ApproxDP(epsilon=self.epsilon + stage.epsilon_at(stage_delta),
                        delta=min(self.delta + stage_delta, np.nextafter(1.0, 0.0)))


def release_label_set(y: NDArray[Any], *, classes: NDArray[Any] | None, epsilon: float,
                      delta: float, relation: Neighbouring, rng: np.random.Generator,
                      stage_uses_delta: bool, owner: str) -> LabelSet:
    """``classes`` if declared; otherwise the labels of ``y`` whose noisy counts clear the
    stability threshold, released with ``label_budget(epsilon, delta)`` and recorded in
    the active ledgers. ``y`` is never echoed."""
    if classes is not None:
        return LabelSet(classes=classes)
    eps_l, delta_l = label_budget(epsilon, delta, stage_uses_delta=stage_uses_delta,
                                  owner=owner)
    block = _histogram(eps_l, delta_l, relation)
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    suppressed = block.release(counts[:, None], rng=rng)
    kept = labels[suppressed == 0]
    return LabelSet(classes=kept, block=block, epsilon=eps_l, delta=delta_l)


def total_claim(epsilon: float, delta: float, relation: Neighbouring, label: str) -> Claimed:
    """What a classifier with a private label set spends on a budget filter before it
    touches the data: its whole ``(epsilon, delta)``, which holds whatever label set is
    released (the plan of the learning stage is known only afterwards)."""
    guarantee = ApproxDP(epsilon=epsilon, delta=delta)
    return Claimed(guarantee, relation=relation, label=label)
