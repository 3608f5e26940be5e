"""The equilibrium-point classifier (Park 2022, chapters 5-6) and its accounting."""


import numpy as np
import pytest

from privkit.algorithms.kernels.random_features import RandomFourierFeatures
from privkit.algorithms.svdd.audit_cases import audit_case, audit_case_paper
from privkit.algorithms.svdd.equilibrium import EquilibriumPointClassifier, descend
from privkit.errors import InvalidParameterError


def _blobs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    return centres[y] + rng.normal(0, 0.4, (n, 2)), y


def _support(rff, a, z):
    """f(z) = 1 - 2 phi(z).a + ||a||^2 (Park 2022, eq. 4.6) with eq. 4.5's map written out
    in float64 (cosines first, then sines), independently of RandomFourierFeatures."""
    P = z @ rff.frequencies_.T
    F = a.size
    phi = np.sqrt(2.0 / F) * np.concatenate([np.cos(P), np.sin(P)], axis=1)
    return 1 - 2 * phi @ a + a @ a


def _descend_reference(rff, a, X, lr, n_iter, decay_at=0.8, decay=0.2):
    """Eq. 5.2 by explicit Euler steps in float64, the gradient of eq. 4.6 written from
    eq. 4.5 term by term: grad f = -2 sqrt(2/F) sum_j (s_j cos<w_j,x> - c_j sin<w_j,x>) w_j."""
    W = rff.frequencies_
    h = W.shape[0]
    c, s = a[:h], a[h:]
    x = np.array(X, dtype=np.float64)
    for t in range(n_iter):
        step = lr if t < np.floor(decay_at * n_iter) else lr * decay
        P = x @ W.T
        grad = -2 * np.sqrt(2.0 / (2 * h)) * ((s * np.cos(P) - c * np.sin(P)) @ W)
        x = x - step * grad
    return x


def test_descend_follows_the_gradient_of_the_support_function():
    """One step of size lr moves x by -lr grad f; compare with a central-difference
    gradient of f(x) = 1 - 2 phi(x).a + ||a||^2 in float64."""
    rff = RandomFourierFeatures(50, 1.0, random_state=0).fit(np.zeros((1, 2)))
    a = np.random.default_rng(1).normal(size=50) / 10
    x = np.array([[0.3, -0.2]])
    step = descend(rff, a, x, learning_rate=1e-3, n_iter=1, decay_at=1.0) - x

    h = 1e-6
    ex, ey = np.array([[h, 0.0]]), np.array([[0.0, h]])
    grad = np.array([(_support(rff, a, x + ex) - _support(rff, a, x - ex))[0] / (2 * h),
                     (_support(rff, a, x + ey) - _support(rff, a, x - ey))[0] / (2 * h)])
    assert np.abs(grad).min() > 0.1  # a step large enough to test
    assert np.allclose(step[0], -1e-3 * grad, rtol=1e-3, atol=1e-8)


def test_descend_matches_a_float64_reference_of_eq_5_2():
    """Many rows, many steps, the decay: the float32 descent (one sine per frequency, the
    phase folded into the product) stays within float32 accuracy of the float64
    reference, while every row moves by far more, so a wrong sign, factor or schedule
    fails."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    rff = RandomFourierFeatures(60, 0.5, random_state=1).fit(X)
    a = rng.normal(size=60)
    a /= np.linalg.norm(a)
    ends = descend(rff, a, X, learning_rate=0.05, n_iter=12)
    ref = _descend_reference(rff, a, X, 0.05, 12)
    moved = np.abs(ref - X).max(axis=1)
    assert moved.min() > 1e-2
    assert np.abs(ends - ref).max() < 1e-5
    # the decay is applied: the same run without it ends elsewhere
    assert np.abs(_descend_reference(rff, a, X, 0.05, 12, decay=1.0) - ends).max() > 1e-3


def test_schedule_decays_after_80_percent():
    rff = RandomFourierFeatures(8, 1.0, random_state=0).fit(np.zeros((1, 1)))
    a = np.zeros(8)
    a[4] = 1.0  # f decreases linearly-ish; movements compared with and without decay
    x = np.zeros((1, 1))
    full = descend(rff, a, x, 1e-4, 10, decay=1.0) - x
    decayed = descend(rff, a, x, 1e-4, 10) - x
    assert np.allclose(decayed, full * (8 + 2 * 0.2) / 10, rtol=1e-3)


def test_private_mode_accounting_and_accuracy():
    X, y = _blobs()
    clf = EquilibriumPointClassifier(epsilon=8.0, delta=1e-5, nu=0.05, gamma=1.0,
                                     n_components=100, r_max=0.5, random_state=0).fit(X, y)
    assert clf.guarantee_.epsilon_at(1e-5) == pytest.approx(8.0, rel=1e-6)
    assert np.mean(clf.predict(X) == y) > 0.9
    # cubes are public grid cells: centres are multiples of 2 r_max
    assert np.allclose(clf.cells_ / 1.0, np.round(clf.cells_ / 1.0))


def test_paper_mode_has_no_guarantee_but_keeps_the_claim():
    X, y = _blobs(120)
    clf = EquilibriumPointClassifier(epsilon=1.0, mode="paper", n_components=50,
                                     classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.guarantee_ is None
    assert clf.paper_claim_.epsilon == 1.0
    # its released EPs are within lr * iters * sup|grad f| of the training rows
    assert np.abs(clf.equilibria_ - X).max() < 0.05


def test_vote_noise_doubles_under_replace_one():
    r = EquilibriumPointClassifier(epsilon=2.0, relation="replace_one")
    a = EquilibriumPointClassifier(epsilon=2.0, relation="add_remove")
    from privkit.neighbouring import Neighbouring

    assert r._vote_scale(Neighbouring.REPLACE_ONE) == pytest.approx(
        2 * a._vote_scale(Neighbouring.ADD_REMOVE))


def test_ledger_matches_the_plan_in_private_mode():
    """What ran (the noisy centre, the stability histogram) is what the plan declares."""
    X, y = _blobs(120)
    model = EquilibriumPointClassifier(epsilon=2.0, delta=1e-5, random_state=0).fit(X, y)
    assert model.ledger_.compare(model.plan_).matches


def test_bad_parameters_are_named():
    X, y = _blobs(60)
    with pytest.raises(InvalidParameterError, match="delta"):
        EquilibriumPointClassifier(delta=0.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="mode"):
        EquilibriumPointClassifier(mode="fast").fit(X, y)


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_audit_case_certifies_half_the_claim_and_never_more_than_guarantee(epsilon):
    """The registered case (the noisy centre, a marginal of the transcript) certifies
    >= 0.5 of the claim, which is the guarantee_ of the estimator fitted on the pair with
    the case's parameters, and never exceeds it. Seeded; an exact audit's bound exceeds
    the truth with probability <= 5% (its confidence)."""
    from privkit.audits import audit

    case = audit_case(epsilon=epsilon)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=200_000, rng=0)
    data = np.asarray(case.pair.first)
    model = EquilibriumPointClassifier(epsilon=epsilon, delta=1e-5, nu=0.5, gamma=1.0,
                                       n_components=2, centre_share=0.9, r_max=0.5,
                                       classes=[0.0, 1.0],
                                       random_state=0).fit(data[:, :1], data[:, 1])
    bound = model.guarantee_.epsilon_at(case.delta)
    assert case.epsilon == pytest.approx(bound)
    assert 0.5 * bound <= result.lower_bound <= bound
    assert result.lower_bound <= case.ceiling * case.epsilon + 1e-9
    assert "marginal" in case.threat_model


@pytest.mark.slow
def test_paper_audit_case_breaks_the_claim():
    """The thesis' PureDP(eps) claim for the paper-faithful mode is violated (the
    released EPs follow a single row)."""
    from privkit.audits import audit

    paper = audit_case_paper(epsilon=1.0)
    broken = audit(paper.system, paper.pair, epsilon=paper.epsilon, delta=paper.delta,
                   trials=50_000, rng=0)
    assert broken.lower_bound > paper.epsilon  # the thesis' claim is violated


def test_unique_rows_is_numpys_row_unique():
    """Same rows, same (lexicographic) order, same inverse as np.unique(axis=0), on small
    ranges (the mixed-radix path) and on extreme ones (the byte path)."""
    from privkit.algorithms.svdd._equilibrium_dynamics import unique_rows

    rng = np.random.default_rng(0)
    big = np.array([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max])
    for keys in (rng.integers(-3, 3, size=(200, 4)), rng.integers(-3, 3, size=(1, 1)),
                 rng.choice(big, size=(100, 3)), rng.integers(-2**40, 2**40, size=(50, 2))):
        uniq, inverse = unique_rows(keys)
        want, want_inverse = np.unique(keys, axis=0, return_inverse=True)
        assert np.array_equal(uniq, want)
        assert np.array_equal(inverse, want_inverse.ravel())


@pytest.mark.parametrize("mode", ["private", "paper"])
def test_predict_looks_up_the_cell_of_each_end_point(mode):
    """predict's vectorised lookup agrees with a per-row dictionary of the released cells,
    and rows whose cell was not released go to the nearest released cell."""
    from privkit.algorithms.svdd._equilibrium_dynamics import cubes

    X, y = _blobs(240)
    clf = EquilibriumPointClassifier(epsilon=50.0, delta=1e-5, n_components=60, r_max=0.25,
                                     mode=mode, random_state=0).fit(X, y)
    Q = np.random.default_rng(1).uniform(-1, 4, size=(150, 2))
    ends = descend(clf.features_, clf.centre_, Q, clf.learning_rate, clf.n_iter)
    keys = cubes(ends, 0.25)
    index = {tuple(k): i for i, k in enumerate(clf.cell_keys_)}
    hit = np.array([index.get(tuple(k), -1) for k in keys])
    assert 0 < (hit >= 0).sum() < hit.size  # both branches are exercised
    pred = clf.predict(Q)
    assert np.array_equal(pred[hit >= 0], clf.classes_[clf.cell_labels_[hit[hit >= 0]]])
    miss = ends[hit < 0]
    nearest = np.argmin(((miss[:, None, :] - clf.cells_[None]) ** 2).sum(-1), axis=1)
    assert np.array_equal(pred[hit < 0], clf.classes_[clf.cell_labels_[nearest]])


def test_plain_arrays_and_other_inputs_fit_the_same_model():
    """Float64 arrays and integer labels fit what lists, float labels and string labels
    fit (the private label set released from them included); what scikit-learn refused
    by value is now a neutral record (issue 22), and only the schema is refused."""
    X, y = _blobs(90)
    params = dict(epsilon=20.0, n_components=40, r_max=0.5, random_state=0)
    fast = EquilibriumPointClassifier(**params).fit(X, y)
    for X2, y2, classes in ((X.tolist(), y.tolist(), fast.classes_),
                            (X, y.astype(float), fast.classes_.astype(float)),
                            (X, np.array(["a", "b", "c"])[y], np.array(["a", "b", "c"]))):
        slow = EquilibriumPointClassifier(**params).fit(X2, y2)
        assert np.array_equal(slow.classes_, classes)
        assert np.array_equal(slow.cell_keys_, fast.cell_keys_)
        assert np.array_equal(slow.cell_labels_, fast.cell_labels_)
        assert np.array_equal(slow.predict(X[:20]), classes[np.searchsorted(
            fast.classes_, fast.predict(X[:20]))])
    assert fast.n_features_in_ == 2
    # labels outside the declared set: every record neutral, no cell, a constant answer
    outside = EquilibriumPointClassifier(**params, classes=[0, 1, 2]).fit(X, y + 0.5)
    assert outside.classes_.tolist() == [0, 1, 2]
    assert outside.cell_keys_.shape == (0, 2)
    assert outside.predict(X[:3]).tolist() == [0, 0, 0]
    # rows with NaN are removed: the model fitted without them
    holes = np.where(X > 3, np.nan, X)
    kept = ~np.isnan(holes).any(axis=1)
    assert 0 < kept.sum() < len(X)
    a = EquilibriumPointClassifier(**params, classes=[0, 1, 2]).fit(holes, y)
    b = EquilibriumPointClassifier(**params, classes=[0, 1, 2]).fit(X[kept], y[kept])
    assert np.array_equal(a.cell_keys_, b.cell_keys_)
    assert np.array_equal(a.centre_, b.centre_)
    with pytest.raises(ValueError, match="features"):
        fast.predict(X[:, :1])
    with pytest.raises(InvalidParameterError, match="one label per row"):
        EquilibriumPointClassifier(**params).fit(X, y[:-1])


def test_plain_array_fast_path_keeps_scikit_learns_fitted_and_feature_name_checks():
    """fit and predict skip scikit-learn's validation for plain float64 arrays only where
    it has nothing to do: an unfitted model still raises NotFittedError, a refit on an
    array drops feature names of an earlier fit, and a model with feature names still
    warns when it predicts on an array without them (scikit-learn's own messages)."""
    from sklearn.exceptions import NotFittedError

    X, y = _blobs(60)
    model = EquilibriumPointClassifier(epsilon=20.0, n_components=20, r_max=0.5,
                                       random_state=0)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.feature_names_in_ = np.array(["a", "b"], dtype=object)  # as a DataFrame fit sets
    model.fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    model.feature_names_in_ = np.array(["a", "b"], dtype=object)
    with pytest.warns(UserWarning, match="feature names"):
        model.predict(X)


def test_plans_are_memoised_on_every_parameter_but_the_seed():
    """Two estimators with equal parameters share one plan object; a change of any
    parameter the plan depends on gives the plan built afresh."""
    from privkit.neighbouring import Neighbouring

    X, y = _blobs(60)
    a = EquilibriumPointClassifier(epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    b = EquilibriumPointClassifier(epsilon=3.0, classes=[0, 1, 2], random_state=1).fit(X, y)
    assert a.plan_ is b.plan_
    for change in ({"epsilon": 2.0}, {"delta": 1e-6}, {"nu": 0.1}, {"centre_share": 0.3},
                   {"relation": "add_remove"}, {"centre_noise": "gaussian"},
                   {"mode": "paper"}, {"n_components": 40}):
        c = EquilibriumPointClassifier(**{"epsilon": 3.0, "random_state": 0,
                                          "classes": [0, 1, 2], **change})
        plan = c.plan(n_samples=60, n_features=2, n_classes=3)
        assert plan != a.plan_
        relation = Neighbouring.parse(c.relation)
        assert plan == c._build_plan_parts(relation, 3, *c._stage_budget())[2]
    four = EquilibriumPointClassifier(epsilon=3.0, classes=[0, 1, 2, 3])
    assert four.plan(n_samples=60, n_features=2) != a.plan_
    # without classes, the plan starts with the label release and the stage gets the rest
    private = EquilibriumPointClassifier(epsilon=3.0).plan(n_samples=60, n_features=2,
                                                           n_classes=3)
    assert private.steps[0].n_classes == 1  # the label set's stability histogram
    assert private.steps[1] != a.plan_


def test_a_rows_end_point_does_not_depend_on_the_other_rows():
    """Bit for bit: the private mode's stability histogram needs each row's cube to be a
    function of that row alone. A fixed row gets the same end point alone, at any
    position of any block of the kernel's rows, and in batches of sizes on both sides of
    the block size and of the sizes BLAS rounds differently; also with a row whose phases
    leave the polynomial's range (that row alone takes libm's sine)."""
    from privkit.algorithms._accelerators import rff as _rff

    rng = np.random.default_rng(11)
    rff = RandomFourierFeatures(400, 1.0, random_state=2).fit(np.zeros((1, 19)))
    a = rng.normal(size=400)
    a /= np.linalg.norm(a)
    row = rng.normal(size=(1, 19))
    b = _rff.rows
    # Table 7.1's rate, and one large enough that a sine's last bit moves the end point
    for rate in (1e-3, 50.0):
        alone = descend(rff, a, row, rate, 20)
        for size in (2, 5, b - 1, b, b + 1, 15, 16, 17, 127, 128, 129, 300, 1232):
            others = rng.normal(size=(size, 19))
            others[-1] *= 1e6  # phases far beyond 1e5: libm's sine for that row
            for at in {0, size // 2, size - 2} if size > 2 else {0}:
                batch = others.copy()
                batch[at] = row[0]
                assert np.array_equal(descend(rff, a, batch, rate, 20)[at], alone[0])


def test_descend_takes_libms_sine_for_phases_beyond_the_polynomials_range():
    """Phases beyond 1e5 (where the kernel's reduction by pi/2 stops being exact, and
    beyond 2^22 where its rounding trick fails) go to libm's sinf: from x = 0 the phases
    are exactly the given float32 values, so one unit step adds their sines' sum."""
    from privkit.algorithms._accelerators import rff as _rff

    lanes = _rff.lanes
    rng = np.random.default_rng(8)
    for low, high in ((-1e4, 1e4), (2e5, 1e6), (1e7, 1e9)):
        phase = np.zeros((2, lanes), dtype=np.float32)
        phase[1] = rng.uniform(low, high, lanes).astype(np.float32)
        steps = np.zeros((2, 1, lanes), dtype=np.float32)
        steps[0, 0] = 1.0
        x = np.zeros((_rff.rows, 1), dtype=np.float32)
        _rff.descend_rows(phase, steps, x, 1, 1)
        expected = np.sin(phase[1].astype(np.float64)).sum()
        assert np.abs(x[:, 0] - expected).max() < 1e-5, (low, high)


def test_the_kernels_sine_and_cosine_are_within_float32_accuracy_everywhere():
    """The feature map's float32 trigonometry (Cephes' polynomials after reduction by
    pi/2) against float64 numpy on a dense grid over [-pi, pi] and far beyond: the
    transform reduces to [-pi, pi] first, so every argument is covered."""
    from privkit.algorithms._accelerators import rff as _rff

    t = np.concatenate([np.linspace(-np.pi, np.pi, 100_001), [0.0, np.pi / 2, -np.pi / 4]])
    P = t.reshape(-1, 1)
    out = np.empty((P.shape[0], 2))
    _rff.features(P, out)
    # one frequency: the row [cos t, sin t] is divided by its own norm (about 1)
    assert np.abs(out[:, 0] - np.cos(t)).max() < 2e-7
    assert np.abs(out[:, 1] - np.sin(t)).max() < 2e-7
    # a wrong quadrant or sign would be off by about 1
    P = np.linspace(-1e4, 1e4, 20_001).reshape(-1, 1)
    out = np.empty((P.shape[0], 2))
    _rff.features(P, out)
    assert np.abs(out[:, 0] - np.cos(P[:, 0])).max() < 1e-5
    assert np.abs(out[:, 1] - np.sin(P[:, 0])).max() < 1e-5


def test_the_kernels_reject_shapes_they_cannot_take():
    from privkit.algorithms._accelerators import rff as _rff

    lanes, rows = _rff.lanes, _rff.rows
    with pytest.raises(ValueError, match="multiple"):
        _rff.descend_rows(np.zeros((3, lanes + 1), np.float32),
                          np.zeros((2, 2, lanes + 1), np.float32),
                          np.zeros((rows, 2), np.float32), 1, 1)
    with pytest.raises(ValueError, match="multiple"):
        _rff.descend_rows(np.zeros((3, lanes), np.float32), np.zeros((2, 2, lanes), np.float32),
                          np.zeros((rows + 1, 2), np.float32), 1, 1)
    with pytest.raises(ValueError, match="out"):
        _rff.features(np.zeros((3, 4)), np.zeros((3, 7)))
