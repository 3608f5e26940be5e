"""Private regularised ERM: output and objective perturbation (Chaudhuri et al. 2011).

van der Reijden 2019, Algorithms 1-2, and Wang et al. 2024,
Algorithm 3, train Huber-loss SVMs this way; logistic regression is the original case.
The objective is ``J(w) = Lambda/2 ||w||^2 + 1/n sum_i loss(y_i x_i . w)``.

Intercepts. Chaudhuri, Monteleoni, Sarwate, "Differentially private empirical risk
minimization" (JMLR 2011) analyse ``w . x`` with ``||x|| <= 1`` and the regulariser
``Lambda/2 ||w||^2``. An intercept is learnt by the augmentation the paper's analysis
already covers: each row becomes ``x~ = (x / B, a)`` (B the public row bound, a =
``intercept_scaling``), clipped onto the unit ball when its norm exceeds 1, and the
regulariser acts on the whole augmented vector ``(w, w_0)``. The map from a record to
``x~`` is per-record and public with ``||x~|| <= 1``, so neighbouring datasets stay
neighbouring and the objective is exactly of the paper's form in dimension d + 1:
Theorems 6 and 9 (and Corollary 8's sensitivity) hold unchanged. The intercept is
regularised, as in scikit-learn's liblinear solvers: an unregularised intercept would
break the strong convexity both proofs use. What the intercept cost was less its penalty
(centring the penalty at the label share's log-odds moves Adult's non-private accuracy
by under 0.05 points at Lambda 1e-3 and 1e-4) than the division of every row by
``sqrt(1 + a^2)`` that made room for it before 0.3.0: a row that leaves room for the
column (``||x / B||^2 <= 1 - a^2``) now keeps its scale, and the others lose less. On
Adult (``||x / B|| <= 0.88`` under its public bound) that is worth 0.1-0.7 points of
non-private accuracy at Lambda 1e-3 (``a = 1``: 0.8167 to 0.8207 logistic; ``a = 0.5``:
0.8234 logistic, 0.8293 Huber, against 0.8247); a smaller ``a`` penalises a large
intercept more, so ``intercept_scaling`` is worth tuning
(:class:`~privkit.algorithms.PrivateGridSearch`).

Neutral records. Under REPLACE_ONE (n public) a record privkit will not learn from (its
label is outside ``classes_``) is replaced by the zero augmented row ``x~ = 0``: its loss
``loss(y w . 0) = loss(0)`` is a constant, so it adds nothing to the gradient or the
Hessian of J at any w and leaves the minimiser where the other rows put it, while n, the
divisor of the paper's sensitivities, stays public. The zero row has norm 0 <= 1, so the
map of one record to it turns neighbouring datasets into neighbouring (or equal)
datasets, and every guarantee holds unchanged.

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   Intercepts (``fit_intercept``), a multinomial output-perturbation model for several
   classes, ``predict_proba``, sparse input, ``BudgetFilter`` spending in ``fit``, a
   solver tolerance ``tol`` that the output-perturbation sensitivity accounts for.
   Objective perturbation solves to ``tol`` and perturbs the approximate minimiser's
   residue (Iyengar et al. 2019) instead of solving to 1e-10 as if exact; both solvers
   polish with Newton steps. The default ``regularization`` is 1e-3 (was 0.01;
   :data:`DEFAULT_REGULARIZATION`).
.. versionchanged:: 0.3.0
   The transcript is the release (issue 22): ``classes=`` (or a label set released
   privately, with ``delta > 0``), neutral records for labels outside it, silent
   clipping of rows (no ``clip`` parameter, no ``ClippedRowsWarning``), non-finite rows
   mapped to the zero row, no check of the labels' kind, and ``transcript_case``.
   The augmented row is ``(x / B, a)`` clipped onto the unit ball (was: divided by
   ``sqrt(1 + a^2)``), so the features keep their scale where there is room (issue 27).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.ledger import record
from privkit.mechanisms import L2Laplace, ObjectivePerturbation
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Repeat, Sequential

from ._linear import LinearModel as LinearModel
from ._linear import labels_from_scores as labels_from_scores
from ._losses import MarginLoss
from ._private_linear import DEFAULT_REGULARIZATION as DEFAULT_REGULARIZATION
from ._private_linear import PrivateLinearClassifier
from ._solvers import solve_erm, solve_multinomial

__all__ = [
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "solve_erm",
    "solve_multinomial",
]

R = Neighbouring.REPLACE_ONE

#: Lipschitz constant, in the Frobenius norm of W, of the multinomial logistic loss
#: ``log sum_j exp(w_j . x) - w_y . x`` for ``||x|| <= 1``: its gradient is
#: ``(p - e_y) x^T`` and ``||p - e_y||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2 <= 2``.
MULTINOMIAL_LIPSCHITZ = math.sqrt(2.0)

#: Share of an objective-perturbation problem's epsilon spent on the L2-Laplace noise that
#: covers the solver's approximate minimiser (Iyengar et al. 2019; see
#: :class:`ObjectivePerturbationClassifier`).
RESIDUAL_SHARE = 0.01


class OutputPerturbationClassifier(PrivateLinearClassifier):
    """Regularised ERM, then L2-Laplace noise on the weights (Chaudhuri et al. 2011, Alg. 1).

    Parameters
    ----------
    epsilon : float
        The total budget (REPLACE_ONE): pure DP with ``classes`` declared.
    delta : float, default 0
        Used only without ``classes``: the label release's delta (the learning stage is
        pure); must then be > 0.
    classes : array-like or None, default None
        The public label set (at least 2 distinct labels), or ``None`` to release the
        label set privately (see "Public and private").
    loss : {"huber", "logistic"}
        Huber-loss SVM (``huber_h``; van der Reijden 2019 eq. 3, whose first case should read
        ``z > 1 + h``) or logistic regression.
    regularization : float, default 1e-3
        Lambda (it also regularises the intercept; see the module docstring). The
        default is a public constant (:data:`DEFAULT_REGULARIZATION` gives the reasoning).
    row_norm_bound : float
        A public bound B on every row's L2 norm; rows are divided by B (so the analysis'
        ``||x|| <= 1`` holds) and rows beyond it are clipped onto it, silently.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1
        a in the augmented row ``(x / B, a)``, clipped onto the unit ball (module
        docstring): a row with ``||x / B||^2 <= 1 - a^2`` keeps its scale.
    multi_class : {"auto", "ovr", "multinomial"}
        Several classes with ``loss="logistic"``: one multinomial model with one noise
        draw ("auto", "multinomial"); "ovr" (and the Huber loss) trains one model per
        class with ``epsilon / n_classes`` each.
    tol : float, default 1e-8
        The solver stops at an L2 gradient norm of at most ``tol`` (at least
        :data:`~privkit.algorithms.linear._solvers.MIN_TOL`); the sensitivity accounts for it
        (see Notes).
    random_state : int, Generator or None

    Public and private
    ------------------
    Neighbours differ in one record replaced (REPLACE_ONE), so the number of rows n is
    public, as are the number of features (the schema) and every parameter above.

    * Labels: with ``classes`` declared, ``classes_`` is that set, sorted, whatever the
      data hold. Without it, the labels of the data are released by a stability
      histogram (:mod:`privkit.algorithms._labels`) at ``LABEL_SHARE`` of epsilon and all
      of ``delta``, and the model is learnt at the rest of epsilon for whichever labels
      come out; ``guarantee_`` is the two by basic composition, ``plan_`` and ``ledger_``
      hold both. With fewer than 2 labels released no model is learnt (``predict``
      returns the one label, or raises when there is none).
    * A record whose label is not in ``classes_`` (or is NaN, or of another kind) becomes
      the zero augmented row, which moves no gradient (module docstring).
    * Rows beyond ``row_norm_bound`` are clipped onto it, and a row with a NaN or an
      infinity becomes the zero row (its label kept): silently, with no warning and no
      error, since either would reveal that such a row exists.
      :func:`~privkit.algorithms.inspect_rows` counts them for the data owner, outside
      any private computation.
    * Nothing about the solver's run (iterations, convergence) is published.
    * Queries (``predict``, ``decision_function``, ``predict_proba``) are not private and
      are checked strictly: a non-finite query row is an error.

    Notes
    -----
    The minimiser of a Lambda-strongly convex objective with an L-Lipschitz loss moves by
    at most ``2 L / (n Lambda)`` in L2 when one row is replaced (Chaudhuri et al. 2011,
    Corollary 8, whose proof, Lemma 7, scales with the gradient bound L), so L2-Laplace
    noise with ``beta = n Lambda eps / (2 L)`` gives eps-DP (van der Reijden 2019, Algorithm 1,
    L = 1).
    The solver returns a point whose gradient has norm at most ``tol``, which is within
    ``tol / Lambda`` of the exact minimiser (strong convexity), so privkit declares the
    sensitivity ``2 L / (n Lambda) + 2 tol / Lambda`` of what it actually computes.
    For several classes with the logistic loss the model is the multinomial (softmax)
    regression, whose loss is ``sqrt(2)``-Lipschitz in the Frobenius norm of W for
    ``||x|| <= 1`` (:data:`MULTINOMIAL_LIPSCHITZ`): one L2-Laplace draw of dimension
    ``k (d + 1)`` with sensitivity ``2 sqrt(2) / (n Lambda)`` replaces ``k`` draws at
    ``epsilon / k`` each. privkit's ledger records the block it runs, and ``guarantee_``
    is the tightest accountant's guarantee for it.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms import OutputPerturbationClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)) / 3
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = OutputPerturbationClassifier(epsilon=2.0, classes=[0, 1], random_state=0)
    >>> clf.fit(X, y).guarantee_, clf.ledger_.compare(clf.plan_).matches
    (PureDP(epsilon=2.0), True)

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.3.0
       ``classes`` and ``delta``; no ``clip`` (see "Public and private").
    """

    _method = "output"

    def _multinomial_allowed(self) -> bool:
        return self.loss == "logistic"

    def _multinomial_note(self) -> str:
        return "the multinomial model is the softmax (logistic) loss: set loss='logistic'"

    def _radius(self, lipschitz: float) -> float:
        """A public bound on the solver's output: ``||w*|| <= ||grad J(0)|| / Lambda <=
        L / Lambda`` (strong convexity, Boyd, Vandenberghe eq. 9.11), plus ``tol / Lambda``
        for the approximate minimiser."""
        return (lipschitz + float(self.tol)) / float(self.regularization)

    def _check_stage(self, stage: Block, n_unknowns: int, n_classes: int) -> None:
        """The weights, of norm at most :meth:`_radius`, must fit the floating-point-safe
        release's range (2^52 steps of its grid, set by the noise scale): otherwise
        ``release`` would refuse some datasets' weights and not others'. Public values
        only; only an extreme epsilon (about ``n epsilon > 10^9``) is refused."""
        from privkit.mechanisms._grid import grid_step

        multinomial = self._multinomial(n_classes)
        block = stage.block if isinstance(stage, Repeat) else stage
        assert isinstance(block, L2Laplace)
        dimension = n_unknowns * (n_classes if multinomial else 1)
        lipschitz = MULTINOMIAL_LIPSCHITZ if multinomial else 1.0
        step = grid_step(block.noise_scale, block.sensitivity.value, math.sqrt(dimension))
        if not self._radius(lipschitz) < 2.0**52 * step:
            raise check.fail("epsilon", self.epsilon, "small enough that the weights (norm "
                             f"at most {self._radius(lipschitz):.6g}) fit the floating-point"
                             "-safe release of noise scale "
                             f"{block.noise_scale:.3g}", type(self).__name__,
                             "use a smaller epsilon, or simulate() for experiments")

    def _released(self, block: Block, w: NDArray[np.float64], lipschitz: float,
                  rng: np.random.Generator) -> NDArray[np.float64]:
        """``w`` projected onto the public ball of :meth:`_radius` (where it already lies:
        a non-expansive map that keeps the sensitivity), then released."""
        assert isinstance(block, L2Laplace)
        norm = float(np.linalg.norm(w))
        radius = self._radius(lipschitz)
        if norm > radius:
            w = w * (radius / norm)
        released: NDArray[np.float64] = block.release(w, rng=rng)
        return released

    def _sensitivity(self, n_samples: int, lipschitz: float) -> float:
        lam = float(self.regularization)
        return 2.0 * lipschitz / (n_samples * lam) + 2.0 * float(self.tol) / lam

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        return L2Laplace.for_epsilon(epsilon, sensitivity=self._sensitivity(n_samples, 1.0),
                                     relation=R)

    def _multinomial_block(self, n_samples: int, epsilon: float) -> Block:
        return L2Laplace.for_epsilon(
            epsilon, sensitivity=self._sensitivity(n_samples, MULTINOMIAL_LIPSCHITZ),
            relation=R)

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        w = solve_erm(Z, y, loss, self.regularization, tol=self.tol)
        return self._released(self._block(Z.shape[0], epsilon, loss), w, 1.0, rng)

    def _fit_multinomial(self, Z: Any, labels: NDArray[np.int64], k: int, epsilon: float,
                         rng: np.random.Generator) -> NDArray[np.float64]:
        W = solve_multinomial(Z, labels, k, self.regularization, tol=self.tol)
        released = self._released(self._multinomial_block(Z.shape[0], epsilon), W.ravel(),
                                  MULTINOMIAL_LIPSCHITZ, rng)
        return released.reshape(W.shape)


class ObjectivePerturbationClassifier(PrivateLinearClassifier):
    """Minimise a randomly perturbed objective (Chaudhuri et al. 2011, Algorithm 2), to a
    gradient tolerance whose residue is itself perturbed (Iyengar et al. 2019).

    Parameters are those of :class:`OutputPerturbationClassifier`, except that several
    classes are learnt one-vs-rest (``epsilon / n_classes`` each): Theorem 9's proof
    bounds a Jacobian determinant using that each row's Hessian has rank one, which the
    multinomial loss does not have, so privkit offers no multinomial objective
    perturbation.

    Public and private
    ------------------
    As for :class:`OutputPerturbationClassifier`: REPLACE_ONE, n and the schema public;
    ``classes`` declared, or released privately with ``delta > 0``; a record whose label
    is outside ``classes_`` becomes the zero augmented row (its loss is the constant
    ``loss(0)``, so neither the perturbed objective's gradient nor its Hessian, and so
    neither Theorem 9's density ratio nor the minimiser, sees it); rows clipped onto
    ``row_norm_bound`` and non-finite rows zeroed, silently; nothing about the solver's
    run published; queries checked strictly.

    Notes
    -----
    Van der Reijden 2019 Algorithm 2 / Wang et al. 2024 Algorithm 3 lines 3-10: with c the
    loss's curvature bound, ``eps' = eps1 - log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``; if
    that is not positive, add ``Delta = c/(n (e^(eps1/4) - 1)) - Lambda`` and use
    ``eps' = eps1/2``; draw ``b`` with density ∝ exp(-eps'/2 ||b||) and minimise
    ``J(w) + b.w / n + Delta/2 ||w||^2``. The exact minimiser is eps1-DP under REPLACE_ONE
    by Chaudhuri et al. 2011, Theorem 9 (the loss must be twice differentiable with
    ``|l''| <= c``: Huber with ``c = 1 / (2h)``, logistic with ``c = 1/4``), with the
    intercept handled by the augmented rows of the module docstring.

    Approximate minimiser. Theorem 9 is about the exact minimiser, which no solver
    returns. privkit follows Iyengar, Near, Song, Thakkar, Thakurta, Wang, "Towards
    practical differentially private convex optimization" (IEEE S&P 2019), Algorithm 1
    (approximate minima perturbation), with L2-Laplace noise in place of their Gaussian
    so the result stays pure: the solver stops at a point ``w~`` whose gradient has L2
    norm at most ``tol``, so ``||w~ - w*|| <= tol / (Lambda + Delta)`` by strong convexity
    (Boyd, Vandenberghe, eq. 9.11), and privkit releases ``w~ + Z`` with ``Z``
    L2-Laplace of sensitivity ``2 tol / (Lambda + Delta)`` at ``eps2``. Proof sketch:
    write ``w~ = w* + r_D(w*)`` with ``||r_D|| <= tol / (Lambda + Delta)`` for every
    dataset D; the density of ``w*`` changes by at most ``e^eps1`` between neighbours
    (Theorem 9), and for each value of ``w*`` the two shifted L2-Laplace laws differ by at
    most ``e^eps2`` (their centres are within ``2 tol / (Lambda + Delta)``); integrating,
    the output is ``(eps1 + eps2)``-DP. privkit spends ``eps2 = RESIDUAL_SHARE * eps``
    (1%) on the residue and ``eps1 = eps - eps2`` on the objective: the plan is
    ``Sequential(ObjectivePerturbation(eps1), L2Laplace(eps2))`` per problem, and the
    tightest accountant certifies exactly ``eps``. With ``tol = 1e-8`` the residue's noise
    has norm about ``(d + 1) 2e-8 / ((Lambda + Delta) eps2)``, small beside the objective's
    own noise; the guarantee holds up to floating-point rounding of the gradient check.
    The residue's noise is drawn by the plain sampler (and recorded in the ledger): the
    weights are simulation-grade against floating-point attacks in any case (see
    :class:`~privkit.mechanisms.ObjectivePerturbation`), and at tight tolerances that
    noise is finer than the floating-point-safe grid of ``release`` can carry.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Solved to ``tol`` with the approximate-minimiser residue perturbed (was: solved to
       1e-10 and treated as exact).
    .. versionchanged:: 0.3.0
       ``classes`` and ``delta``; no ``clip``.
    """

    _method = "objective"

    def _multinomial_note(self) -> str:
        return ("objective perturbation's analysis (Chaudhuri et al. 2011, Theorem 9) needs "
                "per-row Hessians of rank one; use OutputPerturbationClassifier")

    def _parts(self, n_samples: int, epsilon: float, loss: MarginLoss
               ) -> tuple[ObjectivePerturbation, L2Laplace]:
        """The objective's block at ``(1 - RESIDUAL_SHARE) epsilon`` and the residue's
        L2-Laplace block at ``RESIDUAL_SHARE epsilon`` (see Notes)."""
        objective = ObjectivePerturbation.for_epsilon(
            (1.0 - RESIDUAL_SHARE) * epsilon, curvature=loss.curvature, n_samples=n_samples,
            regularization=self.regularization)
        strong_convexity = self.regularization + objective.extra_regularization
        residue = L2Laplace.for_epsilon(RESIDUAL_SHARE * epsilon,
                                        sensitivity=2.0 * float(self.tol) / strong_convexity,
                                        relation=R)
        return objective, residue

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        return Sequential(*self._parts(n_samples, epsilon, loss))

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        objective, residue = self._parts(Z.shape[0], epsilon, loss)
        b = objective.release(Z.shape[1], rng=rng)
        lam = self.regularization + objective.extra_regularization
        w = solve_erm(Z, y, loss, lam, linear=b / Z.shape[0], tol=self.tol)
        # The plain sampler, recorded by hand: the weights are computed in floating point
        # from b by an optimiser, so they are simulation-grade against floating-point
        # attacks whatever the residue's noise (see ObjectivePerturbation._sample), and
        # the residue's noise can be far finer than the grid of release() can carry.
        released: NDArray[np.float64] = np.asarray(residue.simulate(w, rng=rng))
        record(residue)
        return released
