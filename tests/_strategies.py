"""Hypothesis strategies for privkit values, shared by the test files.

Bounded value types need explicit strategies: ``st.builds`` does not read numeric bounds
from attrs validators (see STYLE.md).
"""

from __future__ import annotations

from hypothesis import strategies as st

from privkit import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    BoundedRange,
    Claimed,
    LaplaceDP,
    Neighbouring,
    Norm,
    Parallel,
    PostProcess,
    PureDP,
    Repeat,
    Sensitivity,
    Sequential,
)
from privkit.mechanisms import Gaussian, Laplace

epsilons = st.floats(min_value=1e-3, max_value=20.0)
deltas = st.floats(min_value=1e-12, max_value=0.5)
rhos = st.floats(min_value=1e-4, max_value=10.0)
mus = st.floats(min_value=1e-2, max_value=10.0)
relations = st.sampled_from(list(Neighbouring))


def _rdp_curves() -> st.SearchStrategy[RDP]:
    """An RDP curve on a few increasing orders: the curve of a Gaussian (a mu^2 / 2) with
    a random nonnegative slack added at each order."""
    orders = st.lists(st.floats(min_value=1.1, max_value=256.0), min_size=1, max_size=6,
                      unique=True).map(sorted)

    def curve(a: list[float], mu: float, slack: list[float]) -> RDP:
        return RDP(orders=a, epsilons=[x * mu * mu / 2 + s for x, s in zip(a, slack,
                                                                         strict=False)])

    return orders.flatmap(lambda a: st.builds(
        curve, st.just(a), mus, st.lists(st.floats(min_value=0.0, max_value=1.0),
                                         min_size=len(a), max_size=len(a))))


#: Every kind of guarantee privkit has.
guarantees = st.one_of(
    st.builds(PureDP, epsilon=epsilons),
    st.builds(ApproxDP, epsilon=epsilons, delta=deltas),
    st.builds(ZCDP, rho=rhos),
    st.builds(GDP, mu=mus),
    _rdp_curves(),
    st.builds(BoundedRange, eta=epsilons),
    st.builds(LaplaceDP, epsilon=epsilons),
)


def laplaces(relation: Neighbouring = Neighbouring.ADD_REMOVE) -> st.SearchStrategy[Laplace]:
    return st.builds(
        Laplace,
        noise_scale=st.floats(min_value=0.05, max_value=50.0),
        sensitivity=st.builds(Sensitivity, value=st.floats(min_value=0.1, max_value=5.0),
                              norm=st.just(Norm.L1), relation=st.just(relation)),
    )


def gaussians(relation: Neighbouring = Neighbouring.ADD_REMOVE) -> st.SearchStrategy[Gaussian]:
    return st.builds(
        Gaussian,
        noise_scale=st.floats(min_value=0.2, max_value=50.0),
        sensitivity=st.builds(Sensitivity, value=st.floats(min_value=0.1, max_value=5.0),
                              norm=st.just(Norm.L2), relation=st.just(relation)),
    )


def leaves(relation: Neighbouring = Neighbouring.ADD_REMOVE) -> st.SearchStrategy:
    claimed = st.builds(
        lambda g: Claimed(g, relation=relation, label="claimed"),
        st.one_of(st.builds(PureDP, epsilon=epsilons), st.builds(ZCDP, rho=rhos),
                  st.builds(ApproxDP, epsilon=epsilons,  # blocks with their own delta
                            delta=st.floats(min_value=1e-12, max_value=1e-6)),
                  st.builds(BoundedRange, eta=epsilons), st.builds(LaplaceDP, epsilon=epsilons)),
    )
    return st.one_of(laplaces(relation), gaussians(relation), claimed)


def plans(relation: Neighbouring = Neighbouring.ADD_REMOVE, max_leaves: int = 6
          ) -> st.SearchStrategy:
    """Random plans of Sequential, Parallel, Repeat and PostProcess over leaves."""

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        many = st.lists(children, min_size=1, max_size=3)
        return st.one_of(
            many.map(lambda bs: Sequential(*bs)),
            many.map(lambda bs: Parallel(*bs)),
            st.builds(Repeat, children, st.integers(min_value=1, max_value=5)),
            st.builds(PostProcess, children),
        )

    return st.recursive(leaves(relation), extend, max_leaves=max_leaves)
