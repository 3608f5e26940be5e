"""privkit's exceptions and warnings.

Errors caused by the caller (a bad argument, a spend over budget, plans that cannot be
composed) are kept apart from internal failures: every class here is raised because of
something the caller can change, and its message says what was wrong, the value received
and what is allowed; except that a private value (the data, a query answer, anything
computed from them: their entries, shapes or counts) is never shown, only what was
allowed (:func:`privkit._validation.private_fail`, issue 22): a message is part of what a
caller receives, and whether an error is raised depends on public things only.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "IncompatibleCompositionError",
    "InvalidParameterError",
    "LooseBoundWarning",
    "PluginError",
    "PrivacyLeakWarning",
    "PrivkitError",
    "UnaccountedSpendWarning",
    "UnsafeReleaseError",
    "UnsupportedPlanError",
]


class PrivkitError(Exception):
    """Base class of every error privkit raises on purpose.

    .. versionadded:: 0.1.0
    """


class InvalidParameterError(PrivkitError, ValueError, TypeError):
    """An argument is not what is allowed: a wrong value (epsilon <= 0, delta >= 1, NaN)
    or a wrong type (a string or a bool where a number is needed).

    Subclasses both ``ValueError`` and ``TypeError``, as scikit-learn's
    ``InvalidParameterError`` does, so that code written against either convention (and
    scikit-learn's estimator checks) catches it.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Also a ``TypeError``.
    """


class BudgetExceededError(PrivkitError):
    """A spend would take a :class:`~privkit.BudgetFilter` over its limit.

    When this is raised, the filter's state is exactly what it was before the call.

    .. versionadded:: 0.1.0
    """


class IncompatibleCompositionError(PrivkitError, ValueError):
    """Two blocks cannot be composed, e.g. they assume different neighbouring relations.

    .. versionadded:: 0.1.0
    """


class UnsupportedPlanError(PrivkitError, TypeError):
    """An accountant was asked to account for a plan node it has no analysis for.

    The message names the node and the accountants that can handle it.

    .. versionadded:: 0.1.0
    """


class PluginError(PrivkitError):
    """A plug-in could not be used: an entry point that fails to load or is refused (its
    kind is taken, it is not a mechanism or accountant), or a ``--import`` module that
    fails to import. The message names the entry point and its package.

    .. versionadded:: 0.3.0
    """


class UnsafeReleaseError(PrivkitError):
    """A mechanism would publish plain floating-point noise: its draws are floats and it
    defines no floating-point-safe path (:meth:`~privkit.Mechanism.safe_sample`), so its
    low-order bits could reveal the input (Mironov 2012). Derive additive noise from
    :class:`~privkit.AdditiveMechanism`, or override ``safe_sample``.

    .. versionadded:: 0.3.0
    """


class PrivacyLeakWarning(UserWarning):
    """A choice was derived from the private data (bounds, clipping norms, ...).

    .. versionadded:: 0.1.0
    """


class LooseBoundWarning(UserWarning):
    """A number is a valid bound but known to be loose, or an approximation, not a bound.

    .. versionadded:: 0.1.0
    """


class UnaccountedSpendWarning(UserWarning):
    """Privacy was spent where no budget filter counts it and the count is easy to lose:
    a privkit estimator fitted, without ``budget_filter``, many times on the same data by
    a scikit-learn search or cross-validation. Each fit spends its whole budget and each
    fitted model reports one fit; the message gives the number of fits and their total.

    .. versionadded:: 0.3.0
    """
