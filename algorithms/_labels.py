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

import math
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee
from privkit.mechanisms import StabilityHistogram
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed, Sequential

__all__ = ["LABEL_SHARE", "LabelSet", "declared_classes", "label_budget", "label_counts",
           "label_release", "record_codes", "release_label_set", "single_label",
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
    if unique.dtype.kind in "fc" and np.any(np.isnan(unique)):
        raise check.fail("classes", classes, "labels other than NaN", owner,
                         "a NaN label marks a record with no label (a neutral record)")
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
        record for the estimator's stated rule): NaN, an unhashable object, a value of
        another type. Never raises on the values of ``y``."""
        y = np.asarray(y)
        k = self.classes.size
        if k == 0 or y.size == 0:
            return np.full(y.shape[0] if y.ndim else 0, -1, dtype=np.int64)
        if _same_kind(y.dtype, self.classes.dtype):
            index = np.clip(np.searchsorted(self.classes, y), 0, k - 1)
            found = self.classes[index] == y
            codes: NDArray[np.int64] = np.where(found, index, -1).astype(np.int64)
            return codes
        lookup = {label: i for i, label in enumerate(self.classes.tolist())}
        return np.fromiter((_index(lookup, value) for value in y.tolist()),
                           dtype=np.int64, count=y.shape[0])

    def rest(self, epsilon: float, delta: float) -> tuple[float, float]:
        """What the learning stage gets of a total ``(epsilon, delta)``: the largest
        floats whose sums with this release's cost stay within the total (so
        :meth:`guarantee` never exceeds it by a rounding)."""
        def within(total: float, part: float) -> float:
            left = max(total - part, 0.0)
            while left > 0.0 and part + left > total:
                left = math.nextafter(left, 0.0)
            return left

        return within(epsilon, self.epsilon), within(delta, self.delta)

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
    planned = label_release(epsilon, delta, relation=relation,
                            stage_uses_delta=stage_uses_delta, owner=owner)
    block = planned.block
    assert block is not None
    labels, counts = label_counts(y)
    if labels.size == 0:  # the histogram of no record: nothing can clear the threshold
        counts = np.zeros(1, dtype=np.int64)
    suppressed = block.release(counts[:, None], rng=rng)
    kept = labels[suppressed[: labels.size] == 0]
    return attrs.evolve(planned, classes=kept)


def record_codes(labels: NDArray[Any], records: NDArray[np.bool_], *,
                 classes: NDArray[Any] | None, epsilon: float, delta: float,
                 relation: Neighbouring, rng: np.random.Generator,
                 stage_uses_delta: bool, owner: str) -> tuple[LabelSet, NDArray[np.int64]]:
    """The label set (declared, or released privately from the labels of ``records``
    alone) and every row's index in it: ``-1`` for a row that is not a record (its
    features undefined) or whose label is not in the set (NaN and unhashable labels
    included), the neutral record of the estimator's stated rule."""
    label_set = release_label_set(labels[records], classes=classes, epsilon=epsilon,
                                  delta=delta, relation=relation, rng=rng,
                                  stage_uses_delta=stage_uses_delta, owner=owner)
    codes = np.full(labels.shape[0], -1, dtype=np.int64)
    if label_set.classes.size:
        codes[records] = label_set.codes(labels[records])
    return label_set, codes


def single_label(classes: NDArray[Any], n_queries: int, owner: str) -> NDArray[Any]:
    """The predictions of a classifier whose label set has fewer than two labels (no
    learning stage ran): the one label for every query, or, with no label, an error
    that depends on the released label set only."""
    if classes.size == 0:
        from privkit.errors import InvalidParameterError

        raise InvalidParameterError(
            f"{owner} released no label (the private label set is empty: no label had "
            "enough records to clear the stability threshold), so it has nothing to "
            "predict; declare the label set with classes=[...], or fit on more records "
            "per label or with a larger budget")
    out: NDArray[Any] = np.full(n_queries, classes[0])
    return out


def label_release(epsilon: float, delta: float, *, relation: Neighbouring,
                  stage_uses_delta: bool, owner: str) -> LabelSet:
    """The label release a classifier without declared ``classes`` will run, known before
    any data is seen: its block and cost, with no classes yet (for ``plan()``). Raises
    as :func:`label_budget` does."""
    eps_l, delta_l = label_budget(epsilon, delta, stage_uses_delta=stage_uses_delta,
                                  owner=owner)
    return LabelSet(classes=np.empty(0), block=_histogram(eps_l, delta_l, relation),
                    epsilon=eps_l, delta=delta_l)


def _same_kind(a: np.dtype[Any], b: np.dtype[Any]) -> bool:
    """Whether numpy orders and compares values of the two dtypes as Python does: both
    numbers (booleans included) or both strings of one kind."""
    numbers = "biuf"
    return (a.kind in numbers and b.kind in numbers) or (a.kind == b.kind and a.kind in "US")


def _index(lookup: dict[Any, int], value: Any) -> int:
    try:
        return lookup.get(value, -1)
    except TypeError:  # an unhashable label is outside every label set
        return -1


def label_counts(y: Any) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """The distinct labels of ``y`` (sorted where they are mutually comparable) and how many
    records hold each. NaN and unhashable labels are no label: their records are neutral
    (a per-record public rule), so they are not counted. Never raises on the values."""
    values = np.asarray(y)
    if values.dtype.kind in "fc":
        values = values[~np.isnan(values)]
    if values.dtype.kind != "O":
        labels, counts = np.unique(values, return_counts=True)
        return labels, counts.astype(np.int64)
    tally: dict[Any, int] = {}
    for value in values.tolist():
        if isinstance(value, float) and math.isnan(value):
            continue
        try:
            tally[value] = tally.get(value, 0) + 1
        except TypeError:  # unhashable
            continue
    try:
        order = sorted(tally)
    except TypeError:  # labels of several types: a fixed order by type, then by text
        order = sorted(tally, key=lambda v: (type(v).__name__, repr(v)))
    labels_out = np.empty(len(order), dtype=object)
    labels_out[:] = order
    return labels_out, np.array([tally[v] for v in order], dtype=np.int64)


def total_claim(epsilon: float, delta: float, relation: Neighbouring, label: str) -> Claimed:
    """What a classifier with a private label set spends on a budget filter before it
    touches the data: its whole ``(epsilon, delta)``, which holds whatever label set is
    released (the plan of the learning stage is known only afterwards)."""
    guarantee = ApproxDP(epsilon=epsilon, delta=delta)
    return Claimed(guarantee, relation=relation, label=label)
