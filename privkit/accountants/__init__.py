"""Accountants: stateless maps from plans to certified guarantees.

================  ===========================================================  ========
name              analysis                                                     adaptive
================  ===========================================================  ========
``basic``         epsilons and deltas add; disjoint parts take the max          yes
``advanced``      Dwork-Rothblum-Vadhan / Kairouz-Oh-Viswanath bounds          yes
``optimal``       exact for k runs of one (eps, delta) block (KOV 2015)        no
``gdp``           Gaussian plans: mu's add in quadrature (Dong-Roth-Su)        no
``zcdp``          rho adds (Bun-Steinke 2016); CKS 2020 conversion             yes
``rdp``           RDP curves add on a grid of orders (Mironov 2017), with      no [*]_
                  subsampled Gaussians (MTZ 2019) and sampling without
                  replacement (WBK 2019)
``pld``           privacy loss distributions convolve (connect-the-dots grid)  no
================  ===========================================================  ========

.. [*] RDP composes under adaptivity at each fixed order, but choosing the best order
   after the fact needs the filter analysis of Feldman and Zrnic (2021), which
   :class:`~privkit.BudgetFilter` does not implement for RDP yet.

.. versionadded:: 0.1.0
"""

from privkit._validation import fail
from privkit.accountant import Accountant
from privkit.accountants.advanced import AdvancedAccountant
from privkit.accountants.basic import BasicAccountant
from privkit.accountants.gdp import GDPAccountant
from privkit.accountants.optimal import OptimalAccountant
from privkit.accountants.pld import PLDAccountant, PLDPair
from privkit.accountants.rdp import RDPAccountant, rdp_curve
from privkit.accountants.tightest import AccountingResult, tightest, tightest_delta
from privkit.accountants.zcdp import ZCDPAccountant, zcdp_rho

__all__ = [
    "Accountant",
    "AccountingResult",
    "AdvancedAccountant",
    "BasicAccountant",
    "GDPAccountant",
    "OptimalAccountant",
    "PLDAccountant",
    "PLDPair",
    "RDPAccountant",
    "ZCDPAccountant",
    "available_accountants",
    "get_accountant",
    "rdp_curve",
    "tightest",
    "tightest_delta",
    "zcdp_rho",
]


def available_accountants() -> tuple[Accountant, ...]:
    """One instance of every accountant privkit ships, in a fixed order."""
    return (BasicAccountant(), AdvancedAccountant(), OptimalAccountant(), ZCDPAccountant(),
            RDPAccountant(), GDPAccountant(), PLDAccountant())


def get_accountant(name: str) -> Accountant:
    """The accountant called ``name`` (see the table above)."""
    for accountant in available_accountants():
        if accountant.name == name:
            return accountant
    names = ", ".join(repr(a.name) for a in available_accountants())
    raise fail("name", name, f"one of {names}", "get_accountant")
