"""privkit: differential privacy you can compose, account exactly and audit empirically.

Build an algorithm from mechanism blocks (:mod:`privkit.mechanisms`), declare how they
compose as a plan (:mod:`privkit.plan`), get its tightest certified guarantee from the
accountants (:func:`tightest`), spend it through a :class:`BudgetFilter`, record what ran
in a :class:`Ledger`, and test any privacy claim with :mod:`privkit.audits`.

Glossary
--------
neighbouring relation
    Which datasets count as neighbours: ``Neighbouring.ADD_REMOVE`` (one record added
    or removed) or ``Neighbouring.REPLACE_ONE`` (one record replaced). Always explicit.
sensitivity
    A declared bound on how far a function moves between neighbours, in a norm
    (``l1_sensitivity``, ``l2_sensitivity``): :class:`Sensitivity`.
noise_scale, noise_multiplier
    The noise's absolute scale (Laplace b, Gaussian sigma) and that scale divided by the
    sensitivity.
sampling_rate
    The probability that a record is kept by Poisson subsampling.
orders
    The Renyi orders ``a > 1`` at which an RDP curve is given.
guarantee
    What a block promises: :class:`PureDP`, :class:`ApproxDP`, :class:`ZCDP`,
    :class:`RDP`, :class:`GDP`, :class:`BoundedRange`, :class:`LaplaceDP`. Their parameters
    are public fields (``g.epsilon``, ``g.rho``, ``g.mu``); ``g.epsilon_at(delta)`` and
    ``g.delta_at(epsilon)`` convert. Epsilon is in nats.
block
    A leaf of a plan: a mechanism or a :class:`Claimed` guarantee.
plan
    A tree of blocks: :class:`Sequential`, :class:`Parallel`, :class:`Repeat`,
    :class:`PostProcess`, :class:`PoissonSubsample`, :class:`SampleWithoutReplacement`.
accountant
    A map from plans to certified guarantees (:mod:`privkit.accountants`).
release / simulate
    A mechanism's floating-point-safe output for publication / its plain-float output
    for experiments.
spend / can_spend
    Charge a block to a :class:`BudgetFilter` / ask whether it would fit.

.. versionadded:: 0.1.0
"""

from privkit import _layout
from privkit.accountant import Accountant
from privkit.accountants import (
    AccountingResult,
    AdvancedAccountant,
    AdvancedComposition,
    BasicAccountant,
    BasicComposition,
    GDPAccountant,
    OptimalAccountant,
    OptimalComposition,
    PLDAccountant,
    RDPAccountant,
    ZCDPAccountant,
    available_accountants,
    get_accountant,
    register_accountant,
    tightest,
    tightest_delta,
    unregister_accountant,
)
from privkit.errors import (
    BudgetExceededError,
    IncompatibleCompositionError,
    InvalidParameterError,
    LooseBoundWarning,
    PluginError,
    PrivacyLeakWarning,
    PrivkitError,
    UnaccountedSpendWarning,
    UnsafeReleaseError,
    UnsupportedPlanError,
)
from privkit.filter import Budget, BudgetFilter, FilterEntry
from privkit.guarantees import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    BoundedRange,
    Guarantee,
    LaplaceDP,
    PureDP,
)
from privkit.ledger import Ledger, LedgerComparison, LedgerEntry, carry_context, record
from privkit.mechanism import AdditiveMechanism, Mechanism, WorstCase, registered_mechanisms
from privkit.neighbouring import AddRemove, Neighbouring, Norm, ReplaceOne, Sensitivity
from privkit.plan import (
    Block,
    Claimed,
    Leaf,
    Parallel,
    PlanNode,
    PoissonSubsample,
    PostProcess,
    Repeat,
    SampleWithoutReplacement,
    Sequential,
)
from privkit.plan_spec import load_plan, plan_from_spec, plan_to_spec
from privkit.pld import PLDGuarantee
from privkit.rng import as_generator, secure_generator
from privkit.shared_filter import SharedBudgetFilter

__version__ = "0.2.0"

__all__ = [
    "GDP",
    "RDP",
    "ZCDP",
    "Accountant",
    "AccountingResult",
    "AddRemove",
    "AdditiveMechanism",
    "AdvancedAccountant",
    "AdvancedComposition",
    "ApproxDP",
    "BasicAccountant",
    "BasicComposition",
    "Block",
    "BoundedRange",
    "Budget",
    "BudgetExceededError",
    "BudgetFilter",
    "Claimed",
    "FilterEntry",
    "GDPAccountant",
    "Guarantee",
    "IncompatibleCompositionError",
    "InvalidParameterError",
    "LaplaceDP",
    "Leaf",
    "Ledger",
    "LedgerComparison",
    "LedgerEntry",
    "LooseBoundWarning",
    "Mechanism",
    "Neighbouring",
    "Norm",
    "OptimalAccountant",
    "OptimalComposition",
    "PLDAccountant",
    "PLDGuarantee",
    "Parallel",
    "PlanNode",
    "PluginError",
    "PoissonSubsample",
    "PostProcess",
    "PrivacyLeakWarning",
    "PrivkitError",
    "PureDP",
    "RDPAccountant",
    "Repeat",
    "ReplaceOne",
    "SampleWithoutReplacement",
    "Sensitivity",
    "Sequential",
    "SharedBudgetFilter",
    "UnaccountedSpendWarning",
    "UnsafeReleaseError",
    "UnsupportedPlanError",
    "WorstCase",
    "ZCDPAccountant",
    "__version__",
    "as_generator",
    "available_accountants",
    "carry_context",
    "get_accountant",
    "load_plan",
    "plan_from_spec",
    "plan_to_spec",
    "record",
    "register_accountant",
    "registered_mechanisms",
    "secure_generator",
    "tightest",
    "tightest_delta",
    "unregister_accountant",
]

# From a source checkout, make privkit.mechanisms/.algorithms/.audits importable too.
_layout.install(__file__)
