"""Park 2022's "non-private" column with no noise at all, for ``privkit reproduce
park2022``: the same models as the private rows, every noisy release replaced by its
exact value (the thesis' Figure 7.1: "each non-private model in the graph measures the
baseline accuracy without adding noise").

* The proposed method (both modes): the exact SVDD centre, the same dynamics and cells,
  each cell labelled by its majority vote (no Laplace votes, no stability threshold:
  every non-empty cell is kept).
* SVM WEIGHT and the random-feature SVM OUTPUT / SEMI: the one-vs-rest hinge SVM on the
  same 400 random features, its weights used as they are.
* The exact-kernel SVM OUTPUT and SEMI: ``epsilon=None`` in
  :mod:`privkit.algorithms.reproduce._exact_kernel`.

None of these is private; they are the reference the private rows are compared with.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.algorithms.svdd._equilibrium_dynamics import Descent, unique_rows
from privkit.algorithms.svdd.equilibrium import EquilibriumPointClassifier
from privkit.algorithms.svdd.svdd import clip_to_ball, svdd_centre
from privkit.neighbouring import Neighbouring
from privkit.plan import Block

__all__ = ["NoiseFreeEquilibrium", "rff_svm_predict"]


class NoiseFreeEquilibrium(EquilibriumPointClassifier):
    """`EquilibriumPointClassifier` with phases I-III run without noise (module
    docstring); its ``guarantee_`` describes the private model it mirrors, not this one."""

    def _learn(self, relation: Neighbouring, X: NDArray[np.float64],
               Phi: NDArray[np.float64], codes: NDArray[np.int64],
               rng: np.random.Generator) -> Block:
        c = self.classes_.size
        _, _, plan = self._plan_parts(relation, c, *self._stage_budget())
        exact = svdd_centre(Phi, self.nu, tol=self.tol).centre
        centre = clip_to_ball(exact, 1.0) if self.clip_centre else exact
        self._descent = Descent(self.features_, centre, self.learning_rate, self.n_iter)
        ends = self._descent(X)
        uniq, cell_of = unique_rows(self._cell_keys(ends))
        votes = np.bincount(cell_of * c + codes, minlength=uniq.shape[0] * c).reshape(-1, c)
        labels = np.argmax(votes, axis=1)
        self.cell_keys_, self.cell_labels_ = uniq, labels
        if self.mode == "private":
            r = self.r_max if self.r_max is not None else self.default_r
            self.cells_ = 2.0 * r * uniq.astype(np.float64)
        else:
            self.cells_ = (uniq.astype(np.float64) * self.ep_tol if self.r_max is None
                           else 2.0 * self.r_max * uniq.astype(np.float64))
            self.equilibria_ = ends
            self.equilibrium_labels_ = labels[cell_of]
        self.centre_ = centre
        return plan


def rff_svm_predict(X_tr: NDArray[np.float64], y_tr: NDArray[Any], X_te: NDArray[np.float64],
                    classes: NDArray[Any], nu: float, gamma: float, seed: int,
                    n_components: int = 400) -> NDArray[Any]:
    """Labels of ``X_te`` by the noise-free one-vs-rest hinge SVM on random Fourier
    features (what SVM WEIGHT, and OUTPUT / SEMI on random features, perturb)."""
    from privkit.algorithms.kernels.random_features import RandomFourierFeatures
    from privkit.algorithms.svdd._hinge_ovr import hinge_svm, hinge_svm_ovr

    features = RandomFourierFeatures(n_components, gamma=gamma, random_state=seed).fit(X_tr)
    Phi = features.transform(X_tr)
    codes = np.searchsorted(classes, y_tr)
    c = classes.size
    W = (hinge_svm(Phi, np.where(codes == 1, 1.0, -1.0), nu)[None, :] if c == 2
         else hinge_svm_ovr(Phi, codes, nu, c))
    scores = features.transform(X_te) @ W.T
    if c == 2:
        out: NDArray[Any] = classes[(scores[:, 0] > 0).astype(int)]
        return out
    out = classes[np.argmax(scores, axis=1)]
    return out
