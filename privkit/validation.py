"""The validators a mechanism, accountant or estimator written outside privkit needs.

These are privkit's own checkers (they live in ``privkit._validation``, which may change);
the names below are the public, stable ones. Each takes the parameter's ``name`` and the
``owner`` (the class or function the value is for), so that messages read like
"`delta` must be in [0, 1) for ApproxDP (got 1.5)", and raises
:class:`~privkit.errors.InvalidParameterError`.

Public parameters (epsilon, a noise scale, a count of candidates) are checked by
:func:`positive_finite`, :func:`nonnegative_finite`, :func:`nonnegative`, :func:`real`,
:func:`delta`, :func:`open_unit`, :func:`rate`, :func:`positive_int` and
:func:`instance`, or refused by hand with :func:`fail`; :func:`attrs_validator` turns a
checker into an attrs field validator (``attrs.field(validator=attrs_validator(
positive_finite))``).

Private values (a query answer in a mechanism's ``prepare`` hook, data) are checked by
:func:`private_array` and :func:`private_nan`, or refused by hand with
:func:`private_fail`: those messages never show the value, its shape or any part of it
(the transcript is the release: an error message is part of what a caller receives).
:func:`privkit.mechanism.as_value` is the usual ``prepare``: it does both and clamps.

Examples
--------
>>> from privkit import validation as check
>>> check.positive_finite("noise_scale", 2, "MyNoise")
2.0
>>> check.positive_finite("noise_scale", -1.0, "MyNoise")
Traceback (most recent call last):
...
privkit.errors.InvalidParameterError: `noise_scale` must be a finite number > 0 ... (got -1.0)
>>> check.private_array("value", ["secret"], "MyNoise.release")
Traceback (most recent call last):
...
privkit.errors.InvalidParameterError: `value` must be a real number ... (the value is not shown...)

.. versionadded:: 0.3.0
"""

from privkit._validation import (
    NOT_SHOWN,
    attrs_validator,
    delta,
    fail,
    instance,
    nonnegative,
    nonnegative_finite,
    open_unit,
    positive_finite,
    positive_int,
    private_array,
    private_fail,
    private_nan,
    rate,
    real,
)

__all__ = [
    "NOT_SHOWN",
    "attrs_validator",
    "delta",
    "fail",
    "instance",
    "nonnegative",
    "nonnegative_finite",
    "open_unit",
    "positive_finite",
    "positive_int",
    "private_array",
    "private_fail",
    "private_nan",
    "rate",
    "real",
]
