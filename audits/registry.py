"""How to audit each built-in mechanism on a worst-case pair, at a given epsilon.

``CASES[name](epsilon=..., delta=...)`` builds the mechanism calibrated to ``epsilon`` (and,
for approximate-DP mechanisms, ``delta``, default 1e-5; pure mechanisms ignore it), a batched
system that draws its outputs, the neighbouring pair on which its privacy loss is
largest, and the claim to test. Every registered mechanism with a
:meth:`~privkit.Mechanism.worst_case` is a case (its pair lives next to it); an estimator
declares its rows next to itself too, with :func:`audit_row` in its family folder's
``audit_cases`` module (``privkit/algorithms/<family>/audit_cases.py``): the white-box
rows on one randomised stage and the black-box end-to-end rows ``NAME_e2e`` (run by
:mod:`privkit.audits.end_to_end`). :func:`discover_algorithm_rows` imports every such
module whenever :data:`CASES` is read; other systems register with :func:`register`.
Estimators audited end to end on their whole transcript are found (or registered) by
:mod:`privkit.audits.estimators`.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   Every builder takes ``epsilon`` and ``delta`` as keywords only
   (``CASES[name](epsilon=1.0)``; 0.2.0 called ``CASES[name](1.0)``), and
   :func:`register` refuses a builder that cannot be called so.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import attrs
import numpy as np

from privkit import _validation as check
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult
from privkit.mechanism import Mechanism, registered_mechanisms
from privkit.neighbouring import Neighbouring

__all__ = ["CASES", "DEFAULT_TRIALS", "ROWS_MODULE", "AuditCase", "audit_row",
           "declared_rows", "discover_algorithm_rows", "discrete_gaussian_ceiling",
           "discrete_gaussian_pair_epsilon", "register", "row_estimator", "run_case"]

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
#: The delta at which approximate-DP mechanisms are calibrated and audited.
AUDIT_DELTA = 1e-5
#: Values drawn per call of a mechanism's ``release`` in an audit (bounds the memory).
_VALUES_PER_BLOCK = 4_000_000
#: Draws per side that ``privkit audit`` measures a case with, unless the case says more
#: (``measure_trials``) or less (``max_trials``), or ``--trials`` is given.
DEFAULT_TRIALS = 1_000_000
#: Measured and selection draws per side of the mechanisms whose best event at delta 1e-5
#: is rare (probability ~1e-4): an oracle threshold certifies 0.77 of the claim at 10^6
#: draws and 0.96 at 10^8. Each draw is one scalar sample (~0.1 us on the release path
#: of the two continuous ones), measured in streaming chunks. The exact discrete Gaussian
#: sampler costs ~1.5 us a draw, so it gets fewer draws and a stated draws ceiling
#: (:func:`discrete_gaussian_ceiling`).
_MEASURE = {"gaussian": (100_000_000, 10_000_000),
            "analyze_gauss": (100_000_000, 10_000_000),
            "discrete_gaussian": (4_000_000, 1_000_000)}


@attrs.frozen
class AuditCase:
    """A system (batched), its worst-case pair, and the claim (epsilon, delta)."""

    system: Callable[[Any, np.random.Generator, int], Any] = attrs.field(eq=False)
    pair: NeighbouringPair
    epsilon: float
    delta: float
    #: Cap on draws per side for slow systems (each draw of objective perturbation solves
    #: an optimisation problem); ``privkit audit`` uses the smaller of this and --trials.
    max_trials: int | None = None
    #: The largest fraction of the claim this pair can certify, where it is known not to
    #: reach the claim (see :class:`privkit.WorstCase`).
    ceiling: float = 1.0
    #: What the adversary is assumed to see, printed with the result ("" for the output
    #: of a mechanism, the usual black box).
    threat_model: str = ""
    #: Whose claim is tested: ``"privkit"`` (the guarantee privkit computes; a violation
    #: is a bug) or ``"paper"`` (a source paper's claim that privkit does not make; the
    #: verdict is reported, and ``privkit audit`` does not fail on it).
    claim: str = attrs.field(default="privkit",
                             validator=attrs.validators.in_(("privkit", "paper")))
    #: Draws per side that ``privkit audit`` measures this case with by default, in place
    #: of :data:`DEFAULT_TRIALS`: for cheap scalar samplers whose best event is rare
    #: (10^8 for the Gaussian mechanisms). The measurement streams (a few chunks of memory).
    measure_trials: int | None = None
    #: Selection draws per side for such a measurement (in place of 20% of it).
    selection_trials: int | None = None
    #: What limits ``ceiling``: ``"pair"`` (the pair's own largest privacy loss) or
    #: ``"draws"`` (the best bound an oracle that knows the optimal set certifies at the
    #: case's draws for the exact output law: a statistical limit, not the pair's).
    ceiling_basis: str = attrs.field(default="pair",
                                     validator=attrs.validators.in_(("pair", "draws")))


def run_case(case: AuditCase, *, name: str, trials: int | None = None,
             confidence: float = 0.95, rng: Any = None, sequential: bool = False,
             progress: bool | None = False) -> AuditResult:
    """Audit ``case`` as ``privkit audit`` does and return the :class:`AuditResult` with
    the case's ceiling and threat model.

    ``trials`` (draws per side) defaults to the case's ``measure_trials`` (one-shot
    audits only) or :data:`DEFAULT_TRIALS`, capped by ``max_trials``; the case's
    ``selection_trials`` apply when its ``measure_trials`` is used. ``sequential`` runs
    :func:`~privkit.audits.sequential_audit` (stages of 2,000 x 4^k draws up to
    ``trials``, default :data:`DEFAULT_TRIALS`: it stops early on a violation, and its
    stages choose their sets on 20% of their draws). ``progress`` is
    :func:`~privkit.audits.audit`'s (``None``: bars only on a terminal).
    """
    from privkit.audits.attacks import audit, sequential_audit

    measured = trials is None and case.measure_trials is not None and not sequential
    if trials is not None:
        n = trials
    elif measured and case.measure_trials is not None:
        n = case.measure_trials
    else:
        n = DEFAULT_TRIALS
    n = min(n, case.max_trials or n)
    common: dict[str, Any] = {"epsilon": case.epsilon, "delta": case.delta,
                              "confidence": confidence, "rng": rng, "name": name,
                              "threat_model": case.threat_model, "progress": progress}
    if sequential:
        result = sequential_audit(case.system, case.pair, max_trials=n,
                                  first_stage=min(2_000, n), **common)
    else:
        select = case.selection_trials if measured else None
        result = audit(case.system, case.pair, trials=n, selection_trials=select, **common)
    return attrs.evolve(result, ceiling=case.ceiling, ceiling_basis=case.ceiling_basis)


_ALGORITHMS: dict[str, Callable[..., AuditCase]] = {}
#: The module each row declared with :func:`audit_row` was declared in.
_DECLARED_IN: dict[str, str] = {}
#: The estimator (a class name exported by the declaring module's package) each row
#: declared with :func:`audit_row` audits.
_ESTIMATOR: dict[str, str] = {}
#: The module name under which each family folder of :mod:`privkit.algorithms` declares
#: its estimators' rows (found by :func:`discover_algorithm_rows`).
ROWS_MODULE = "audit_cases"


def register(name: str, build: Callable[..., AuditCase]) -> None:
    """Make ``privkit audit NAME`` run ``build(epsilon=..., delta=...)`` (for systems that
    are not a single mechanism; a mechanism's case comes from its ``worst_case``).
    Estimators declare theirs with :func:`audit_row`. ``build`` must accept ``epsilon``
    and ``delta`` as keywords (declare them ``(*, epsilon, delta=...)``); one whose
    parameters are named otherwise is refused here, not when ``privkit audit`` calls it.

    .. versionchanged:: 0.3.0
       The builder is called with keywords, and one that cannot be is refused.
    """
    try:
        inspect.signature(build).bind(epsilon=1.0, delta=AUDIT_DELTA)
    except TypeError:
        raise check.fail("build", build, "callable as build(epsilon=..., delta=...)",
                         f"register({name!r})",
                         hint="declare it as def build(*, epsilon, delta=...)") from None
    _ALGORITHMS[name] = build


Build = TypeVar("Build", bound=Callable[..., AuditCase])


def audit_row(name: str, *, estimator: str) -> Callable[[Build], Build]:
    """Declare the function below as the builder of ``privkit audit NAME``, a row that
    audits ``estimator`` (a class its family package exports).

    An estimator declares its rows next to itself, as a mechanism declares its worst
    case: in its family folder's ``audit_cases`` module
    (``privkit/algorithms/<family>/audit_cases.py``), white-box rows (one stage, only its
    noise redrawn) and black-box end-to-end rows (``NAME_e2e``: the public ``fit``) alike.
    :func:`discover_algorithm_rows` imports every such module; there is no list.
    """

    def declare(build: Build) -> Build:
        register(name, build)
        _DECLARED_IN[name] = build.__module__
        _ESTIMATOR[name] = estimator
        return build

    return declare


def declared_rows(module: str) -> dict[str, Callable[..., AuditCase]]:
    """The rows :func:`audit_row` declared in ``module`` (a dotted module name)."""
    return {name: _ALGORITHMS[name] for name, where in _DECLARED_IN.items()
            if where == module}


def row_estimator(name: str) -> str:
    """The estimator a row declared with :func:`audit_row` audits (its class name)."""
    return _ESTIMATOR[name]


def discover_algorithm_rows() -> list[str]:
    """Import the ``audit_cases`` module of every family folder of
    :mod:`privkit.algorithms` (a subpackage holding a module of that name, found on the
    package's path without importing the others) and return the dotted names of those
    that import. A family whose optional dependency is not installed (scikit-learn;
    pandas for the analytics) has no rows here: its module is skipped, never an error
    for the rows that need nothing more (the mechanisms')."""
    import importlib
    import os
    import pkgutil

    try:
        import privkit.algorithms as algorithms
    except ModuleNotFoundError:
        return []
    found = []
    for root in algorithms.__path__:
        for family in pkgutil.iter_modules([root]):
            folder = os.path.join(root, family.name)
            if family.ispkg and any(m.name == ROWS_MODULE
                                    for m in pkgutil.iter_modules([folder])):
                found.append(f"{algorithms.__name__}.{family.name}.{ROWS_MODULE}")
    imported = []
    for module in sorted(set(found)):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as missing:
            if (missing.name or "privkit").partition(".")[0] == "privkit":
                raise
            continue
        imported.append(module)
    return imported


def mechanism_case(cls: type[Mechanism]) -> Callable[..., AuditCase]:
    """The audit case of a mechanism class, from its :meth:`~Mechanism.worst_case`: the
    system is the mechanism's ``release`` (the floating-point-safe publication path, so
    that the audit covers what is published)."""

    def build(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
        worst = cls.worst_case(epsilon=epsilon, delta=delta)
        assert worst is not None
        mechanism, options, statistic = worst.mechanism, worst.options, worst.statistic

        block = max(1, _VALUES_PER_BLOCK // max(1, np.size(worst.first)))

        def system(value: Any, rng: np.random.Generator, size: int) -> Any:
            # the publication path: ``simulate``'s plain floats leak through their
            # low-order bits (Mironov 2012), which the reachability test detects; drawn
            # in blocks so that wide queries (many candidates) stay within memory
            parts = []
            for start in range(0, size, block):
                out = mechanism.release(value, rng=rng, size=min(block, size - start),
                                        **options)
                parts.append(out if statistic is None else statistic(out))
            return parts[0] if len(parts) == 1 else np.concatenate(parts)

        pure = mechanism.epsilon_at(0.0)
        claim = (pure, 0.0) if math.isfinite(pure) else (mechanism.epsilon_at(delta), delta)
        if not math.isfinite(claim[0]):
            # a declared (epsilon, delta) whose delta rounds just above the audit's
            # delta: audit the declared pair itself
            for g in mechanism.guarantees():
                if hasattr(g, "epsilon") and hasattr(g, "delta"):
                    claim = (float(g.epsilon), float(g.delta))
                    break
        pair = NeighbouringPair(first=worst.first, second=worst.second,
                                relation=mechanism.relation)
        measure, select = _MEASURE.get(cls.kind, (None, None))
        if cls.kind == "discrete_gaussian" and measure is not None:
            ceiling = discrete_gaussian_ceiling(mechanism, epsilon=claim[0], delta=claim[1],
                                                trials=measure)
            exact = discrete_gaussian_pair_epsilon(mechanism, delta=claim[1])
            return AuditCase(system, pair, claim[0], claim[1], ceiling=ceiling,
                             measure_trials=measure, selection_trials=select,
                             ceiling_basis="draws", threat_model=(
                                 f"the mechanism's output; the pair's exact epsilon at "
                                 f"delta {claim[1]:.3g} is {exact:.4f} "
                                 f"({exact / claim[0]:.3f} of the claim, which is "
                                 f"converted from zCDP), and at {measure:,} measured "
                                 f"draws per side an oracle certifies at most "
                                 f"{ceiling:.3f} of the claim (the exact sampler costs "
                                 f"~1.5 us a draw)"))
        return AuditCase(system, pair, claim[0], claim[1], ceiling=worst.ceiling,
                         measure_trials=measure, selection_trials=select)

    return build


def _discrete_gaussian_laws(mechanism: Any) -> tuple[Any, Any]:
    """The exact output laws of a discrete Gaussian on the counts 0 and 1, on a common
    integer support: ``P(x) ∝ exp(-x^2 / (2 sigma^2))`` with ``sigma^2`` the sampler's
    rational scale (Canonne, Kamath, Steinke 2020, "The discrete Gaussian for
    differential privacy", Definition 1), truncated at 40 sigma (mass below 1e-300)."""
    from privkit.mechanisms.discrete.samplers import at_least

    sigma2 = float(at_least(mechanism.noise_scale**2, relative_precision_bits=20))
    half = int(40 * math.sqrt(sigma2)) + 2
    support = np.arange(-half, half + 2)
    log_mass = -support.astype(float) ** 2 / (2.0 * sigma2)
    mass = np.exp(log_mass - log_mass.max())
    mass /= mass.sum()
    shifted = np.roll(mass, 1)  # the law of 1 + noise (the top cell's mass is ~0)
    shifted[0] = 0.0
    return mass, shifted


def discrete_gaussian_pair_epsilon(mechanism: Any, *, delta: float) -> float:
    """The exact epsilon at ``delta`` of a discrete Gaussian on the pair (0, 1): the
    smallest epsilon with hockey-stick divergence ``sum_x max(P(x) - e^eps Q(x), 0) <=
    delta`` in both directions (Balle, Wang 2018, "Improving the Gaussian mechanism",
    Theorem 5, on the exact pmf). Below the claim wherever the claim is converted from
    zCDP, which is loose."""
    from scipy import optimize

    first, second = _discrete_gaussian_laws(mechanism)

    def excess(eps: float) -> float:
        return max(float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))
                   for p, q in ((first, second), (second, first))) - delta

    if excess(0.0) <= 0.0:
        return 0.0
    high = 1.0
    while excess(high) > 0.0:
        high *= 2.0
    return float(optimize.brentq(excess, 0.0, high, xtol=1e-10))


def discrete_gaussian_ceiling(mechanism: Any, *, epsilon: float, delta: float, trials: int,
                              confidence: float = 0.95) -> float:
    """The largest fraction of ``epsilon`` that the pair (0, 1) of a discrete Gaussian can
    certify at ``trials`` measured draws per side, for its exact output law
    (:func:`_discrete_gaussian_laws`): the best Clopper-Pearson bound
    (:func:`~privkit.audits.epsilon_lower_bound`, as the audit computes it) over every
    threshold set ``{x >= k}`` and ``{x <= k}``, with the counts at their expectations
    (an oracle that knows the best set; the audit chooses its set on separate draws, so
    it lands near this, above or below by the counts' noise). A statistical ceiling of
    the draws; the pair's own is :func:`discrete_gaussian_pair_epsilon` / ``epsilon``.
    """
    from privkit.audits.lower_bounds import epsilon_lower_bound

    first, second = _discrete_gaussian_laws(mechanism)

    def upper(p: Any) -> Any:  # P[x >= k] for each k of the support
        return np.cumsum(p[::-1])[::-1]

    best = 0.0
    for favoured, other in ((first, second), (second, first)):
        for tail, other_tail in ((upper(favoured), upper(other)),
                                 (np.cumsum(favoured), np.cumsum(other))):
            hits = np.minimum(np.round(tail * trials), trials)
            hits_other = np.minimum(np.round(other_tail * trials), trials)
            bounds = epsilon_lower_bound(hits, trials, hits_other, trials, delta=delta,
                                         confidence=confidence)
            best = max(best, float(np.max(bounds)))
    return min(1.0, best / epsilon)


def _has_worst_case(cls: type[Mechanism]) -> bool:
    return cls.worst_case.__func__ is not Mechanism.worst_case.__func__  # type: ignore[attr-defined]


class _Cases(Mapping[str, Callable[..., AuditCase]]):
    """Every registered mechanism with a worst case, and every registered system; read
    afresh on each access, so a mechanism defined after import is covered."""

    def _all(self) -> dict[str, Callable[..., AuditCase]]:
        # the estimators' rows declare themselves on import (here, not at the top: their
        # modules import this one)
        discover_algorithm_rows()
        found = {kind: mechanism_case(cls) for kind, cls in registered_mechanisms().items()
                 if _has_worst_case(cls)}
        found.update(_ALGORITHMS)
        return found

    def __getitem__(self, name: str) -> Callable[..., AuditCase]:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: ``CASES[name](epsilon=..., delta=...)``: every case ``privkit audit`` knows.
CASES: Mapping[str, Callable[..., AuditCase]] = _Cases()
