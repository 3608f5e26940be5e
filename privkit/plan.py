"""Plans: declarative, immutable compositions of privacy blocks.

A plan is a tree. Its leaves are blocks whose privacy is known (a
:class:`~privkit.mechanism.Mechanism`, or a :class:`Claimed` block known only by its
guarantee); its inner nodes say how the leaves are combined:

=============================  =========================================================
``Sequential(a, b, ...)``      all run on the same data, possibly adaptively
``Parallel(a, b, ...)``        each runs on its own disjoint part of the data
``Repeat(block, count)``       ``block`` runs ``count`` times on the same data
``PostProcess(block)``         a data-independent function of ``block``'s output (free)
``PoissonSubsample(block, q)`` ``block`` runs on a Poisson sample, each record kept w.p. q
``SampleWithoutReplacement``   ``block`` runs on m records drawn from n without replacement
=============================  =========================================================

A plan is data: it can be printed (``print(plan)`` draws the tree), turned into the JSON
format of :mod:`privkit.plan_spec`, and accounted by any accountant before any data is
touched. All blocks of a plan share one neighbouring relation, checked at construction.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Iterator
from typing import Any, ClassVar, TypeAlias

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.errors import IncompatibleCompositionError
from privkit.guarantees import Guarantee
from privkit.neighbouring import Neighbouring
from privkit.spec import BLOCKS, Kinded, Kinds

__all__ = [
    "Block",
    "Claimed",
    "Leaf",
    "Parallel",
    "PlanNode",
    "PoissonSubsample",
    "PostProcess",
    "Repeat",
    "SampleWithoutReplacement",
    "Sequential",
    "leaf_counts",
]


class Leaf(Kinded, abc.ABC):
    """A block whose privacy is characterised directly: the leaves of a plan.

    Subclasses give the neighbouring relation and every guarantee that holds for one
    run of the block; accountants take from these whichever composes best for them.
    """

    __slots__ = ()
    family: ClassVar[Kinds] = BLOCKS

    @property
    @abc.abstractmethod
    def relation(self) -> Neighbouring:
        """The neighbouring relation the guarantees hold under."""

    @abc.abstractmethod
    def guarantees(self) -> tuple[Guarantee, ...]:
        """Every guarantee that holds for one run, most precise first."""

    def guarantee(self) -> Guarantee:
        """The most precise single characterisation of one run."""
        return self.guarantees()[0]

    def epsilon_at(self, delta: float) -> float:
        """The smallest epsilon at ``delta`` over all of this block's guarantees."""
        return min(g.epsilon_at(delta) for g in self.guarantees())

    def delta_at(self, epsilon: float) -> float:
        """The smallest delta at ``epsilon`` over all of this block's guarantees."""
        return min(g.delta_at(epsilon) for g in self.guarantees())

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """The smallest RDP bound at each order over all of this block's guarantees."""
        curves = [g.rdp(orders) for g in self.guarantees()]
        result: NDArray[np.float64] = np.minimum.reduce(curves)
        return result

    def zcdp_rho(self) -> float:
        """The smallest rho over this block's guarantees (``inf`` when none is zCDP)."""
        return min(g.zcdp_rho() for g in self.guarantees())

    def repeat(self, count: int) -> Repeat:
        """``Repeat(self, count)``."""
        return Repeat(self, count)


class PlanNode(Kinded, abc.ABC):
    """An inner node of a plan."""

    __slots__ = ()
    family: ClassVar[Kinds] = BLOCKS

    @property
    @abc.abstractmethod
    def children(self) -> tuple[Block, ...]:
        """The blocks this node combines."""

    @property
    def relation(self) -> Neighbouring:
        """The neighbouring relation shared by every block under this node (that of its
        first leaf: construction checked that all blocks agree)."""
        block = self.children[0]
        while isinstance(block, PlanNode):  # a loop, not recursion: plans can be deep
            block = block.children[0]
        return block.relation

    @abc.abstractmethod
    def label(self) -> str:
        """One line describing this node (without its children)."""

    def repeat(self, count: int) -> Repeat:
        """``Repeat(self, count)``."""
        return Repeat(self, count)

    def tree(self) -> str:
        """The plan drawn as a tree, one block per line."""
        return "\n".join(_tree_lines(self))

    def __str__(self) -> str:
        return self.tree()


Block: TypeAlias = Leaf | PlanNode


def _check_block(name: str, value: Any, owner: str) -> Block:
    if not isinstance(value, Leaf | PlanNode):
        raise check.fail(
            name, value, "a privacy block (a Mechanism, a Claimed block or a plan node)", owner
        )
    return value


def _check_same_relation(blocks: tuple[Block, ...], owner: str) -> None:
    first = blocks[0]
    for other in blocks[1:]:
        if other.relation is not first.relation:
            raise IncompatibleCompositionError(
                f"cannot compose a {other.relation.name} block ({_short(other)}) with a "
                f"{first.relation.name} block ({_short(first)}) in {owner}; build both "
                "with the same neighbouring relation"
            )


def _short(block: Block) -> str:
    return block.label() if isinstance(block, PlanNode) else str(block)


def _check_children(owner: str, children: tuple[Any, ...]) -> tuple[Block, ...]:
    if not children:
        raise check.fail("blocks", children, "at least one block", owner)
    blocks = tuple(_check_block(f"blocks[{i}]", c, owner) for i, c in enumerate(children))
    _check_same_relation(blocks, owner)
    return blocks


@attrs.frozen(init=False)
class Sequential(PlanNode):
    """Blocks that all run on the same data, one after another, possibly adaptively.

    Examples
    --------
    >>> from privkit import Sequential, Claimed, PureDP, Neighbouring
    >>> a = Claimed(PureDP(epsilon=0.5), relation=Neighbouring.ADD_REMOVE, label="count")
    >>> print(Sequential(a, a.repeat(3)))
    Sequential [add_remove]
    ├── count: PureDP(ε=0.5)
    └── Repeat ×3
        └── count: PureDP(ε=0.5)
    """

    kind: ClassVar[str] = "sequential"

    steps: tuple[Block, ...] = attrs.field(metadata={"spec": "blocks"})

    def __init__(self, *steps: Block) -> None:
        self.__attrs_init__(_check_children("Sequential", steps))

    @property
    def children(self) -> tuple[Block, ...]:
        return self.steps

    def label(self) -> str:
        return "Sequential"


@attrs.frozen(init=False)
class Parallel(PlanNode):
    """Blocks that each run on their own, disjoint part of the data.

    The cost is the most expensive part's (McSherry 2009, Theorem 4), which is valid
    when any neighbouring change touches at most one part. Under ``ADD_REMOVE`` that
    holds for any partition by a fixed function of the record. Under ``REPLACE_ONE`` it
    holds when the parts are fixed by who holds the data (e.g. federated participants),
    but not when a record's part depends on its value: a replacement can then move a
    record from one part to another and change two parts. Model that case with
    ``ADD_REMOVE`` blocks instead.
    """

    kind: ClassVar[str] = "parallel"

    parts: tuple[Block, ...] = attrs.field(metadata={"spec": "blocks"})

    def __init__(self, *parts: Block) -> None:
        self.__attrs_init__(_check_children("Parallel", parts))

    @property
    def children(self) -> tuple[Block, ...]:
        return self.parts

    def label(self) -> str:
        return "Parallel (disjoint parts)"


def _validate_block(instance: Any, attribute: Any, value: Any) -> None:
    _check_block(check.field_name(attribute), value, type(instance).__name__)


@attrs.frozen
class Repeat(PlanNode):
    """``block`` run ``count`` times on the same data (``count`` >= 1)."""

    kind: ClassVar[str] = "repeat"

    block: Block = attrs.field(validator=_validate_block, metadata={"spec": "block"})
    count: int = attrs.field(validator=check.attrs_validator(check.positive_int))

    @property
    def children(self) -> tuple[Block, ...]:
        return (self.block,)

    def label(self) -> str:
        return f"Repeat ×{self.count}"


def _description_validator(instance: Any, attribute: Any, value: Any) -> None:
    check.instance(check.field_name(attribute), value, str, type(instance).__name__)


@attrs.frozen
class PostProcess(PlanNode):
    """A function of ``block``'s output that does not look at the data again: free.

    The data-processing inequality (Dwork and Roth 2014, Prop. 2.1) makes the cost that
    of ``block``; the node exists so that plans say what is released.
    """

    kind: ClassVar[str] = "post_process"

    block: Block = attrs.field(validator=_validate_block, metadata={"spec": "block"})
    description: str = attrs.field(default="post-processing", validator=_description_validator)

    @property
    def children(self) -> tuple[Block, ...]:
        return (self.block,)

    def label(self) -> str:
        return f"PostProcess: {self.description}"


@attrs.frozen
class PoissonSubsample(PlanNode):
    """``block`` run on a Poisson sample: each record kept independently w.p. ``sampling_rate``.

    Amplification by subsampling (e.g. Mironov, Talwar, Zhang 2019 for the Gaussian) is
    analysed under ``ADD_REMOVE``; accountants without such an analysis refuse this node.
    """

    kind: ClassVar[str] = "poisson_subsample"

    block: Block = attrs.field(validator=_validate_block, metadata={"spec": "block"})
    sampling_rate: float = attrs.field(validator=check.attrs_validator(check.rate))

    @property
    def children(self) -> tuple[Block, ...]:
        return (self.block,)

    def label(self) -> str:
        return f"PoissonSubsample (rate={self.sampling_rate:g})"


@attrs.frozen
class SampleWithoutReplacement(PlanNode):
    """``block`` run on ``sample_size`` records drawn uniformly without replacement
    from a dataset of ``population_size`` records.

    Amplification for this sampling (Wang, Balle, Kasiviswanathan 2019) is analysed under
    ``REPLACE_ONE``; accountants without such an analysis refuse this node.
    """

    kind: ClassVar[str] = "sample_without_replacement"

    block: Block = attrs.field(validator=_validate_block, metadata={"spec": "block"})
    sample_size: int = attrs.field(validator=check.attrs_validator(check.positive_int))
    population_size: int = attrs.field(validator=check.attrs_validator(check.positive_int))

    def __attrs_post_init__(self) -> None:
        if self.sample_size > self.population_size:
            raise check.fail(
                "sample_size", self.sample_size,
                f"at most population_size={self.population_size}", "SampleWithoutReplacement",
            )

    @property
    def children(self) -> tuple[Block, ...]:
        return (self.block,)

    def label(self) -> str:
        return f"SampleWithoutReplacement ({self.sample_size} of {self.population_size})"


def _check_guarantee(instance: Any, attribute: Any, value: Any) -> None:
    check.instance(check.field_name(attribute), value, Guarantee, type(instance).__name__)


def _relation(value: Any) -> Neighbouring:
    return Neighbouring.parse(value, owner="Claimed")


@attrs.frozen
class Claimed(Leaf):
    """A block known only by a stated guarantee, e.g. a component privkit does not run.

    privkit accounts it as stated and cannot check it; audit it with
    :mod:`privkit.audits` if you can run it.

    Parameters
    ----------
    guarantee : Guarantee
        What the block is stated to satisfy for one run.
    relation : Neighbouring or str
        Under which neighbouring relation (``"add_remove"`` or ``"replace_one"``).
    label : str
        A name for printing and ledgers.
    """

    kind: ClassVar[str] = "claimed"

    _guarantee: Guarantee = attrs.field(alias="guarantee", validator=_check_guarantee)
    _relation: Neighbouring = attrs.field(alias="relation", converter=_relation, kw_only=True)
    label: str = attrs.field(default="claimed", kw_only=True, validator=_description_validator)

    @property
    def relation(self) -> Neighbouring:
        return self._relation

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (self._guarantee,)

    def __str__(self) -> str:
        return f"{self.label}: {self._guarantee}"


def _tree_lines(block: Block, prefix: str = "", is_root: bool = True) -> Iterator[str]:
    if isinstance(block, PlanNode):
        head = block.label()
        yield f"{head} [{block.relation.value}]" if is_root else head
        children = block.children
        for i, child in enumerate(children):
            last = i == len(children) - 1
            branch, extend = ("└── ", "    ") if last else ("├── ", "│   ")
            lines = list(_tree_lines(child, prefix + extend, is_root=False))
            yield prefix + branch + lines[0]
            yield from lines[1:]
    else:
        yield f"{block} [{block.relation.value}]" if is_root else str(block)


def leaf_counts(block: Block) -> Counter[Leaf]:
    """How many times each leaf runs in ``block`` (Repeat multiplies, the rest add)."""
    check.instance("block", block, (Leaf, PlanNode), "leaf_counts")
    if isinstance(block, Leaf):
        return Counter({block: 1})
    total: Counter[Leaf] = Counter()
    for child in block.children:
        total.update(leaf_counts(child))
    if isinstance(block, Repeat):
        return Counter({leaf: n * block.count for leaf, n in total.items()})
    return total
