"""A privkit-style estimator in miniature, importable by name in loky workers."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import Neighbouring
from privkit.algorithms._spend import charge
from privkit.mechanisms import Laplace


class TinyPrivateEstimator(ClassifierMixin, BaseEstimator):
    """A privkit-style estimator in miniature: ``fit`` charges one Laplace block through
    ``_spend.charge`` (as every privkit estimator's fit does), then releases it."""

    def __init__(self, epsilon=1.0, c=0.0):
        self.epsilon = epsilon
        self.c = c

    def fit(self, X, y, budget_filter=None):
        block = Laplace.for_epsilon(self.epsilon, sensitivity=1.0,
                                    relation=Neighbouring.ADD_REMOVE)
        charge(self, block, budget_filter)
        self.classes_ = np.unique(np.asarray(y))
        self.noise_ = float(block.release(0.0, rng=0))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])
