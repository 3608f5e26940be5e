"""Shared helpers of the transcript tests of Park 2022's kernel-support estimators
(issue 22): everything a caller receives is the same on a channel's neighbouring
datasets, or differs only by accounted noise, and nothing names a private value."""

import warnings

import numpy as np

#: A value planted in private data; no exception, warning or log text may contain it.
SENTINEL = 987654.321


def public_attributes(model):
    """The fitted attributes a caller sees (trailing underscore), by name."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def shapes(model):
    """Every fitted attribute's type and, for arrays, shape: the part of the transcript
    that must not depend on private data beyond accounted noise."""
    out = {}
    for name, value in public_attributes(model).items():
        out[name] = (type(value).__name__, getattr(value, "shape", None))
    return out


def fit_quietly(model, *args, **kwargs):
    """Fit with every warning an error: no data-dependent warning may fire."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.fit(*args, **kwargs)


def blobs(n=60, seed=0):
    """n rows of three 2-D blobs (centres (0, 0), (3, 0), (0, 3)), labels 0, 1, 2 in turn."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])[y] + rng.normal(0, 0.5, (n, 2)), y
