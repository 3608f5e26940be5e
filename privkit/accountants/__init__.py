"""Accountants: stateless maps from plans to their native guarantees.

================  ===========================================================  ========
name              analysis (native guarantee)                                  filter
================  ===========================================================  ========
``basic``         epsilons and deltas add; disjoint parts take the max          yes
                  (``PureDP`` or :class:`BasicComposition`)
``advanced``      Dwork-Rothblum-Vadhan / Kairouz-Oh-Viswanath bounds          no [*]_
                  (:class:`AdvancedComposition`)
``optimal``       exact for k runs of one (eps, delta) block (KOV 2015)        no
                  (:class:`OptimalComposition`)
``zcdp``          rho adds (Bun-Steinke 2016) (``ZCDP``)                       yes
``rdp``           RDP curves add on a grid of orders (Mironov 2017), with      no [*]_
                  subsampled Gaussians (MTZ 2019) and sampling without
                  replacement (WBK 2019) (``RDP``)
``gdp``           Gaussian plans: mu's add in quadrature (Dong-Roth-Su)        no
                  (``GDP``)
``pld``           privacy loss distributions convolve (connect-the-dots grid)  no
                  (:class:`~privkit.pld.PLDGuarantee`)
================  ===========================================================  ========

"filter" is each accountant's ``valid_for_adaptive_filter``: whether a
:class:`~privkit.BudgetFilter` may use it when blocks *and their parameters* are chosen
after seeing earlier outputs; ``adaptive_filter_note`` gives the citation.

.. [*] Advanced composition holds for adaptively chosen blocks whose parameters are fixed
   in advance (Dwork, Rothblum, Vadhan 2010); with adaptively chosen parameters it needs
   the filter of Rogers, Roth, Ullman, Vadhan (2016), with larger constants. RDP composes
   under adaptivity at each fixed order, but choosing the best order after the fact needs
   the filter analysis of Feldman and Zrnic (2021), not implemented for RDP here.

This package registers the built-in accountants, in the order above, with
:func:`privkit.accountant.register_accountant`; third parties register theirs the same way.

.. versionadded:: 0.1.0
"""

from privkit.accountant import (
    Accountant,
    available_accountants,
    get_accountant,
    register_accountant,
    unregister_accountant,
)
from privkit.accountants.advanced import AdvancedAccountant, AdvancedComposition
from privkit.accountants.basic import BasicAccountant, BasicComposition
from privkit.accountants.gdp import GDPAccountant
from privkit.accountants.optimal import OptimalAccountant, OptimalComposition
from privkit.accountants.pld import PLDAccountant
from privkit.accountants.rdp import RDPAccountant, rdp_curve
from privkit.accountants.tightest import AccountingResult, tightest, tightest_delta
from privkit.accountants.zcdp import ZCDPAccountant, zcdp_rho

for _name, _factory in (("basic", BasicAccountant), ("advanced", AdvancedAccountant),
                        ("optimal", OptimalAccountant), ("zcdp", ZCDPAccountant),
                        ("rdp", RDPAccountant), ("gdp", GDPAccountant),
                        ("pld", PLDAccountant)):
    register_accountant(_name, _factory, replace=True)

__all__ = [
    "Accountant",
    "AccountingResult",
    "AdvancedAccountant",
    "AdvancedComposition",
    "BasicAccountant",
    "BasicComposition",
    "GDPAccountant",
    "OptimalAccountant",
    "OptimalComposition",
    "PLDAccountant",
    "RDPAccountant",
    "ZCDPAccountant",
    "available_accountants",
    "get_accountant",
    "rdp_curve",
    "register_accountant",
    "tightest",
    "tightest_delta",
    "unregister_accountant",
    "zcdp_rho",
]
