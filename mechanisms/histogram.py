"""Counts and histograms: the sensitivities of counting, and counting itself.

A noisy histogram is a count vector plus noise from any additive mechanism calibrated
with :func:`histogram_sensitivity`; each mechanism has a ``for_histogram`` constructor
(``Laplace``, ``DiscreteLaplace`` (geometric), ``Gaussian``). Seed 000 (Park 2022), eq.
5.5, counts the votes of the equilibrium-point classifier this way.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

__all__ = ["counts", "histogram_sensitivity"]


def histogram_sensitivity(norm: Norm | str, relation: Neighbouring | str) -> Sensitivity:
    """How far a histogram of one-record-one-count moves between neighbours.

    Adding or removing a record changes one count by 1 (every norm: 1). Replacing a
    record moves one unit from one bin to another: L1 2, L2 sqrt(2), L-infinity 1.

    Examples
    --------
    >>> from privkit import Norm, Neighbouring
    >>> from privkit.mechanisms import histogram_sensitivity
    >>> histogram_sensitivity(Norm.L1, Neighbouring.REPLACE_ONE).value
    2.0
    """
    n = Norm.parse(norm, owner="histogram_sensitivity")
    rel = Neighbouring.parse(relation, owner="histogram_sensitivity")
    if rel is Neighbouring.ADD_REMOVE or n is Norm.LINF:
        value = 1.0
    else:
        value = 2.0 if n is Norm.L1 else math.sqrt(2.0)
    return Sensitivity(value=value, norm=n, relation=rel)


def counts(labels: ArrayLike, n_categories: int) -> NDArray[np.int64]:
    """The histogram of integer labels in ``[0, n_categories)`` (exact, not private).

    The labels are private records. A label that is not an integer in
    ``[0, n_categories)`` (out of range, fractional, NaN or infinite) is dropped, by a
    public rule applied record by record, never refused or reported: removing the records
    that match a public predicate keeps ADD_REMOVE neighbours neighbours (or equal), and
    under REPLACE_ONE a replacement into or out of the dropped records moves one count by
    1, within the histogram's sensitivity (:func:`histogram_sensitivity`). Only the dtype
    (integer or float: public) can be refused, and the message never shows the labels.

    Examples
    --------
    >>> from privkit.mechanisms import counts
    >>> counts([0, 2, 2, 7, -1], n_categories=3).tolist()
    [1, 0, 2]
    """
    owner = "counts"
    k = check.positive_int("n_categories", n_categories, owner)
    x = check.private_array("labels", labels, owner, allowed="integer labels").ravel()
    keep = (x >= 0) & (x < k)  # False for NaN
    if x.dtype.kind == "f":
        keep &= x == np.rint(x)
    return np.bincount(x[keep].astype(np.int64), minlength=k).astype(np.int64)
