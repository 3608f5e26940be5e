"""The transcript audit: recording a fit's transcript, the channel pairs, the table and
its distinguisher, and the audit itself on deliberately leaky toy estimators."""

import logging
import math
import warnings
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sklearn")  # the toy estimators use privkit.algorithms' label sets

from privkit import Neighbouring
from privkit.audits import AuditResult, NeighbouringPair, audit_channels, audit_estimator
from privkit.audits._recording import _part, public_attributes, record_transcript
from privkit.audits.channels import CHANNELS, channel_pair, channels
from privkit.audits.leaky import LEAKY, PrivateCentroids
from privkit.audits.lower_bounds import epsilon_lower_bound
from privkit.audits.transcript import TranscriptResult, table
from privkit.errors import InvalidParameterError


class Spy:
    """An estimator that records the random_state of every fit and publishes a bit of
    everything: an int, floats, a string, a generator, a nested object, a label array."""

    seeds: ClassVar[list] = []

    def __init__(self, random_state=None):
        self.random_state = random_state

    def get_params(self, deep=True):
        return {"random_state": self.random_state}

    def fit(self, X, y=None):
        Spy.seeds.append(self.random_state)
        rng = np.random.default_rng(self.random_state)
        self.count_ = 3
        self.noise_ = rng.normal(size=2)
        self.name_ = f"object at {hex(id(self))}"
        self.rng_ = rng
        self.seed_ = self.random_state
        self.nested_ = {"a": [1, 2.5], "b": (True, "x")}
        self._private = 7
        warnings.warn("careful", UserWarning, stacklevel=2)
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)

    def transform(self, X):
        raise ValueError("no transform today")


X3 = np.zeros((3, 2))


class TestRecordTranscript:
    def test_parts_of_a_fit(self):
        """Every public fitted attribute, the probe outputs, the exception of a query
        method and the warnings are parts; private attributes are not."""
        t = record_transcript(Spy(random_state=5), X3, probes=X3, random_state=5)
        assert set(t.names) == {"count_", "noise_", "name_", "rng_", "seed_", "nested_",
                                "predict(probes)", "transform(probes)", "warnings", "log",
                                "printed"}
        assert t["count_"].token == ("int", 3)
        assert t["noise_"].values.size == 2
        assert t["transform(probes)"].token == (
            "raised", (("builtins.ValueError", "no transform today"),))
        assert t["warnings"].token == (("builtins.UserWarning", "careful"),)

    def test_fit_to_fit_noise_stays_out_of_the_discrete_half(self):
        """Two fits with different seeds have the same discrete half: memory addresses
        are masked, the fit's own random_state is masked, generators are recorded by
        type only, and floats go to the continuous half."""
        a = record_transcript(Spy(random_state=5), X3, probes=X3, random_state=5)
        b = record_transcript(Spy(random_state=9), X3, probes=X3, random_state=9)
        assert a.discrete == b.discrete
        assert a["seed_"].token == "random_state"
        assert "0x?" in a["name_"].token[1]
        assert not np.array_equal(a.continuous, b.continuous)

    def test_a_nested_random_state_is_masked(self):
        """A sub-estimator seeded from the fit's generator has a random_state of its own
        on every fit: masked, so the discrete half stays the same."""

        class Nested(Spy):
            def fit(self, X, y=None):
                self.inner_ = Spy(random_state=int(np.random.default_rng(
                    self.random_state).integers(2**31)))
                return self

        a, b = (record_transcript(Nested(random_state=s), X3, random_state=s) for s in (1, 2))
        assert a["inner_"].token == b["inner_"].token
        assert "random_state" in a["inner_"].token[1][0]

    def test_a_failed_fit_still_shows_what_it_left(self):
        """fit's exception (with its chained cause) is a part; attributes set before it
        and query methods are still read, as a caller catching it could."""

        class Half(Spy):
            def fit(self, X, y=None):
                self.started_ = True
                try:
                    raise KeyError("inner 42")
                except KeyError as exc:
                    raise RuntimeError("outer") from exc

        t = record_transcript(Half(), X3, probes=X3)
        assert t["fit"].token == ("raised", (("builtins.RuntimeError", "outer"),
                                                    ("builtins.KeyError", "'inner 42'")))
        assert t["started_"].token == ("bool", True)
        assert "predict(probes)" in t.names

    def test_log_lines_are_recorded_and_logging_is_restored(self):
        """Log records reaching the root logger are a part (not printed); the root
        handlers, logging.disable and lastResort are restored afterwards."""

        class Logs(Spy):
            def fit(self, X, y=None):
                logging.getLogger("privkit.test").warning("n = %d", len(X))
                return self

        root = logging.getLogger()
        before = (root.handlers[:], logging.root.manager.disable, logging.lastResort)
        logging.disable(logging.WARNING)
        try:
            t = record_transcript(Logs(), X3)
            assert logging.root.manager.disable == logging.WARNING
        finally:
            logging.disable(before[1])
        assert t["log"].token == (("privkit.test", "WARNING", "n = 3"),)
        assert (root.handlers[:], logging.lastResort) == (before[0], before[2])

    def test_printed_text_is_recorded(self):
        """What fit prints to standard output or error is a part, not printed."""

        class Prints(Spy):
            def fit(self, X, y=None):
                print("rows:", len(X))
                return self

        assert record_transcript(Prints(), X3)["printed"].token == "rows: 3\n"

    def test_labels_are_discrete(self):
        """classes_ and a classifier's predictions are discrete even as floats."""

        class FloatLabels(Spy):
            def fit(self, X, y=None):
                self.classes_ = np.array([0.0, 1.5])
                return self

            def predict(self, X):
                return np.full(len(X), 1.5)

        t = record_transcript(FloatLabels(), X3, probes=X3)
        assert t["classes_"].values.size == 0
        assert t["predict(probes)"].values.size == 0
        assert t["classes_"].token != record_transcript(
            FloatLabels(), X3).discrete  # the values are in the token
        assert np.frombuffer(t["classes_"].token[3]).tolist() == [0.0, 1.5]

    def test_public_attributes_follow_scikit_learn(self):
        """Names ending in one underscore, not dunders, not private."""

        class Names:
            coef_ = 1
            _hidden_ = 2
            __dunder__ = 3
            plain = 4

        assert public_attributes(Names()) == ["coef_"]

    @settings(max_examples=60, deadline=None)
    @given(st.recursive(
        st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
        | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=12))
    def test_floats_go_to_the_continuous_half_in_order(self, value):
        """Property: the continuous half is exactly the floats of the value in traversal
        order, and the discrete half does not depend on them (every float replaced by
        another leaves the token unchanged)."""
        floats = []

        def walk(v, replace):
            if isinstance(v, float):
                floats.append(v)
                return replace
            if isinstance(v, list):
                return [walk(x, replace) for x in v]
            if isinstance(v, dict):
                return {k: walk(x, replace) for k, x in v.items()}
            return v

        other = walk(value, 7.25)
        part = _part("x", value, None)
        assert part.values.tolist() == floats
        assert _part("x", other, None).token == part.token


def _case(relation=Neighbouring.REPLACE_ONE, y=None, new_label=2, worst=None):
    case = PrivateCentroids.transcript_case()
    import attrs

    changes = {"relation": relation, "new_label": new_label, "worst_case": worst}
    if y is not None:
        changes["y"] = y
    return attrs.evolve(case, **changes)


class TestChannels:
    @pytest.mark.parametrize("relation", [Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE])
    @pytest.mark.parametrize("channel", ["new_label", "record", "non_finite", "at_bound",
                                         "beyond_bound"])
    def test_each_pair_differs_in_one_record(self, channel, relation):
        """Add-remove appends the channel's record to D; replace-one puts it in place of
        D's first record; nothing else changes."""
        case = _case(relation)
        pair = channel_pair(case, channel)
        (X, y), (X2, y2) = pair.first, pair.second
        assert pair.relation is relation
        np.testing.assert_array_equal(X, case.X)
        expected = {"new_label": case.record, "record": case.record,
                    "non_finite": [np.nan, case.record[1]], "at_bound": case.at_bound,
                    "beyond_bound": case.beyond_bound}[channel]
        label = case.new_label if channel == "new_label" else case.label
        if relation is Neighbouring.ADD_REMOVE:
            np.testing.assert_array_equal(X2[:-1], X)
            np.testing.assert_array_equal(X2[-1], expected)
            assert y2[-1] == label
            assert np.array_equal(y2[:-1], y)
        else:
            np.testing.assert_array_equal(X2[1:], X[1:])
            np.testing.assert_array_equal(X2[0], expected)
            assert y2[0] == label
            assert np.array_equal(y2[1:], y[1:])

    def test_string_labels_keep_one_dtype(self):
        """A new label longer than the others is neither truncated nor a dtype change
        between the sides."""
        case = _case(y=np.repeat(["ab", "cd"], 100), new_label="longer")
        (_, y), (_, y2) = channel_pair(case, "new_label").first, channel_pair(
            case, "new_label").second
        assert y.dtype == y2.dtype
        assert y2[0] == "longer"

    def test_channels_that_apply(self):
        """new_label needs labels and a new label; worst_case a declared pair."""
        assert channels(_case(new_label=None)) == ["record", "non_finite", "at_bound",
                                                   "beyond_bound"]
        assert channels(PrivateCentroids.transcript_case()) == list(CHANNELS)

    def test_worst_case_is_the_declared_pair(self):
        case = PrivateCentroids.transcript_case()
        pair = channel_pair(case, "worst_case")
        assert pair.first[0] is case.worst_case[0][0]


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: channel_pair(c, "teleport"), "`channel` must be one of new_label"),
    (lambda c: channel_pair(_case(new_label=None), "new_label"),
     "the new_label channel needs labels and a new_label"),
    (lambda c: channel_pair(_case(worst=None), "worst_case"), "needs a worst_case pair"),
    (lambda c: audit_estimator(c, "record", fits=5), "`fits` must be an integer >= 10"),
    (lambda c: audit_estimator(c, "record", selection_fits=1),
     "`selection_fits` must be an integer >= 2"),
    (lambda c: audit_estimator(c, "record", confidence=1.0), "`confidence` must be in (0, 1)"),
    (lambda c: audit_estimator("case", "record"), "`case` must be a TranscriptCase"),
    (lambda c: audit_estimator(__import__("attrs").evolve(c, probes=np.zeros((2, 3))),
                               "record"), "`case.probes` must be a 2-D array of query points"),
    (lambda c: audit_estimator(__import__("attrs").evolve(c, record=np.zeros(3)), "record"),
     "`case.record` must be one numeric record of shape (2,)"),
    (lambda c: audit_channels(c, channels=[]), "`channels` must be a non-empty list"),
])
def test_invalid_arguments_are_refused_by_name(call, message):
    """Bad arguments raise InvalidParameterError naming the parameter, before any fit."""
    Spy.seeds = []
    with pytest.raises(InvalidParameterError) as info:
        call(PrivateCentroids.transcript_case())
    assert message in str(info.value)


def test_table_codes_match_tokens():
    """Equal tokens get equal codes, different ones different codes; a part a fit lacks
    is coded "absent"; floats are padded with zeros to the widest fit."""
    a = record_transcript(Spy(random_state=1), X3, probes=X3, random_state=1)
    b = record_transcript(Spy(random_state=2), X3, probes=X3, random_state=2)

    class Fewer(Spy):
        def fit(self, X, y=None):
            self.count_ = 4
            return self

    c = record_transcript(Fewer(), X3, probes=X3)
    first, second, layout = table([a, b], [c])
    column = layout.discrete.index("count_")
    assert first[0, column] == first[1, column] != second[0, column]
    noise = layout.discrete.index("noise_")
    assert layout.texts[noise][second[0, noise]] == "absent"
    _name, start, width = next(block for block in layout.blocks if block[0] == "noise_")
    np.testing.assert_array_equal(first[0, start:start + width], a["noise_"].values)
    np.testing.assert_array_equal(second[0, start:start + width], [0.0, 0.0])


def test_fits_are_fresh_interleaved_and_reproducible():
    """Each fit gets its own random_state; the same rng gives the same result."""
    case = PrivateCentroids.transcript_case()
    case = __import__("attrs").evolve(case, estimator=Spy())
    Spy.seeds = []
    first = audit_estimator(case, "record", fits=10, selection_fits=4, rng=3)
    seeds = Spy.seeds[1:]  # after the warm-up fit
    assert len(seeds) == 2 * 14
    assert len(set(seeds)) == len(seeds)
    assert first == audit_estimator(case, "record", fits=10, selection_fits=4, rng=3)
    assert isinstance(first, TranscriptResult)
    assert isinstance(first, AuditResult)


def test_a_certain_difference_certifies_the_closed_form():
    """Transcripts that differ on every fit give hits n of n against 0 of n, whose
    Clopper-Pearson bound is ``log((q - delta) / (1 - q))`` with ``q = (alpha/2)^(1/n)``
    (Clopper, Pearson 1934, at the edges): 3.98 at 200 fits per side and 95%, delta 0."""
    import attrs

    case = attrs.evolve(LEAKY["CountsRows"].transcript_case(), delta=0.0)
    result = audit_estimator(case, "record", fits=200, rng=1)
    q = 0.025 ** (1 / 200)
    assert result.separated
    assert result.verdict == "violation"
    assert result.lower_bound == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
    assert result.lower_bound == pytest.approx(3.9838, abs=1e-4)
    assert "n_samples_ is 200" in result.rule
    assert float(epsilon_lower_bound(200, 200, 0, 200, delta=0.0, confidence=0.95)) == (
        pytest.approx(result.lower_bound))


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(LEAKY))
@pytest.mark.parametrize("declared", [True, False])
def test_every_leaky_toy_is_flagged_on_its_channel(name, declared):
    """Each toy's mistake makes a part of its transcript differ on every fit of its
    channel's pair, so at 200 fits per side the bound is near 3.97 (delta 0.01) against
    the claim of 2 (seeded: deterministic; a leak this certain is missed only if the
    held-out selection rows fail to separate, probability below 1e-9), in both label
    modes."""
    cls = LEAKY[name]
    result = audit_estimator(cls.transcript_case(declare_classes=declared), cls.channel,
                             fits=200, rng=[22, declared])
    assert result.verdict == "violation", f"{result}: {result.rule}"
    assert result.lower_bound > 3.9


@pytest.mark.statistical
@pytest.mark.parametrize("declared", [True, False])
def test_the_correct_toy_is_not_flagged_on_any_channel(declared):
    """PrivateCentroids is (2, 0.01)-DP on its whole transcript: on every channel, at 200
    fits per side, no bound exceeds the claim. The six channels run at 95% familywise
    (Bonferroni), so a DP estimator fails this test with probability at most 5% per
    label mode (seeded: deterministic); its true epsilon on these pairs is at most 2."""
    case = PrivateCentroids.transcript_case(declare_classes=declared)
    results = audit_channels(case, fits=200, familywise=True, rng=[23, declared])
    assert [r.channel for r in results] == list(CHANNELS)
    for result in results:
        assert result.verdict != "violation", f"{result}: {result.rule}"
        assert result.confidence == pytest.approx(1 - 0.05 / 6)


def test_a_pair_of_your_own():
    """A NeighbouringPair of datasets is audited as given, with its description."""
    case = LEAKY["UniqueLabels"].transcript_case()
    (X, y), (X2, y2) = channel_pair(case, "new_label").first, channel_pair(
        case, "new_label").second
    pair = NeighbouringPair(first=(X, y), second=(X2, y2), relation=case.relation,
                            description="mine")
    result = audit_estimator(case, pair, fits=20, rng=0)
    assert result.channel == "mine"
    assert result.separated
    assert "pair: mine: mine" in result.threat_model


def test_each_fit_gets_its_own_copy_of_the_data():
    """A fit that overwrites its input in place does not change what later fits see."""

    class Overwrites(Spy):
        def fit(self, X, y=None):
            self.first_ = float(X[0, 0])
            X[:] = -1.0
            return self

    case = __import__("attrs").evolve(PrivateCentroids.transcript_case(),
                                      estimator=Overwrites())
    result = audit_estimator(case, "record", fits=10, selection_fits=4, rng=0)
    assert result.lower_bound == 0.0  # first_ is the same on every fit of each side


def test_fits_to_certify_is_the_fewest_that_certify():
    """fits_to_certify(eps) is the smallest n at which n of n against 0 of n certifies
    more than eps (checked by brute force), or None beyond the cap; the CLI tier's first
    stage certifies at most 1.02 on six channels, each at 1 - 0.05 / 12 (the closed form
    log(q / (1 - q)), q = (0.05 / 24)^(1/20), quoted in privkit.audits.estimators)."""
    from privkit.audits.estimators import CLI_FITS, fits_to_certify

    for eps, delta, conf in ((1.0, 0.0, 0.95), (2.0, 1e-2, 1 - 0.05 / 12), (0.3, 1e-5, 0.9)):
        n = fits_to_certify(epsilon=eps, delta=delta, confidence=conf, cap=400)
        brute = next(k for k in range(1, 401) if float(epsilon_lower_bound(
            k, k, 0, k, delta=delta, confidence=conf)) > eps)
        assert n == brute
    assert fits_to_certify(epsilon=8.0, delta=0.0, confidence=0.95, cap=400) is None
    q = (0.05 / 24) ** (1 / CLI_FITS)
    assert math.log(q / (1 - q)) == pytest.approx(1.02, abs=0.005)
    assert float(epsilon_lower_bound(CLI_FITS, CLI_FITS, 0, CLI_FITS, delta=0.0,
                                     confidence=1 - 0.05 / 12)) == pytest.approx(
        math.log(q / (1 - q)))
