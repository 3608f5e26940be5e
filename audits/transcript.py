"""The transcript audit: an estimator audited end to end on everything it returns.

privkit's promise covers the *transcript* of a fit, everything a caller receives
(issue 22, "The transcript is the release"): fitted attributes, classes, shapes and
counts, predictions, warnings, exception types and messages, and whether ``fit``
succeeds at all. :func:`audit_estimator` treats that whole transcript as the output of
the estimator and bounds its epsilon from below on a neighbouring pair of datasets:

1. the estimator is fitted ``fits + selection_fits`` times on each dataset of the pair
   (the two sides interleaved, each fit with a fresh ``random_state``, after one
   discarded warm-up fit), and each fit's transcript is recorded
   (:func:`~privkit.audits._recording.record_transcript`);
2. the transcripts become rows of numbers: one code per discrete part (a hash of its
   token: names, shapes, dtypes, labels, integers, texts; "absent" when a fit lacks the
   part), one for the whole discrete half, then every part's floating-point values
   (padded with zeros to the widest fit);
3. :func:`~privkit.audits.audit` measures them as draws of a system that replays them in
   order: a rejection set is chosen on the first ``selection_fits`` rows of each side by
   :class:`TranscriptParts` (the best, on held-out selection rows, of a likelihood-ratio
   set over the classes of each discrete part and of the whole discrete half, and a
   threshold or Fisher projection of each part's floating-point values; NaN and
   infinities are events), and its frequencies on the other ``fits`` rows become an
   epsilon lower bound with exact Clopper-Pearson confidence (Jagielski, Ullman, Oprea
   2020, "Auditing differentially private machine learning: how private is private
   SGD?", Algorithm 2).

A part that differs with certainty between the sides (``classes_ = np.unique(y)`` on a
record with a new label, a refusal that depends on n) separates every measured fit: at
200 fits per side and 95% that certifies ``log(0.9817 / 0.0183) = 3.98`` (at delta 0).

The pairs come from the estimator's :class:`~privkit.algorithms._audit_case.TranscriptCase`
(:mod:`privkit.audits.channels`); :func:`audit_channels` runs every channel of a case.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import time
from collections.abc import Hashable, Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.audits._recording import PROBE_METHODS, Part, Transcript, record_transcript
from privkit.audits.attacks import MIN_TRIALS, audit, seed_root
from privkit.audits.channels import CHANNELS, channel_pair, check_case
from privkit.audits.channels import channels as case_channels
from privkit.audits.distinguishers import Distinguisher, Histogram, Rule, Threshold, _ranked_bounds
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult
from privkit.audits.vectors import Projection

__all__ = ["CHANNELS", "DEFAULT_FITS", "PROBE_METHODS", "Part", "Transcript",
           "TranscriptParts", "TranscriptResult", "audit_channels", "audit_estimator",
           "case_channels", "channel_pair", "record_transcript"]

#: Measured fits per side of the full tier (the selection fits come on top).
DEFAULT_FITS = 200
#: Continuous parts wider than this are screened to their most different coordinates
#: (on the selection rows) before a projection is learnt: a Fisher direction in more
#: dimensions than there are fits only overfits, and its covariance grows quadratically.
_MAX_WIDTH = 32
_ABSENT: Hashable = ("absent",)


def _code(token: Hashable) -> float:
    """A 52-bit hash of a token, exact as a double (collisions: ~2^-52 per pair)."""
    digest = hashlib.blake2b(repr(token).encode(), digest_size=8).digest()
    return float(int.from_bytes(digest, "big") >> 12)


def _describe(token: Hashable) -> str:
    """A short text for a discrete part's token (arrays of labels written out)."""
    if token == _ABSENT:
        return "absent"
    if token == ():
        return "empty"
    if isinstance(token, tuple) and len(token) == 2 and token[0] in ("int", "bool", "str"):
        return repr(token[1])
    if isinstance(token, tuple) and len(token) == 2 and token[0] == "raised":
        kind, message = token[1][0]
        return f"raised {kind.rsplit('.', 1)[-1]}: {message}"[:100]
    if isinstance(token, tuple) and len(token) >= 3 and token[0] == "ndarray":
        if len(token) == 3:
            text = f"an array of shape {token[2]} and dtype {np.dtype(token[1])}"
        elif isinstance(token[3], bytes):
            values = np.frombuffer(token[3], dtype=np.dtype(token[1])).reshape(token[2])
            text = np.array2string(values, threshold=8, separator=", ")
        else:
            text = repr(list(token[3]))
    else:
        text = repr(token)
    return text if len(text) <= 100 else text[:97] + "..."


@attrs.frozen
class Layout:
    """Where each part of the transcripts sits in a row of the audit's table."""

    #: The discrete parts, one column each (columns 0..k-1), then the whole discrete half.
    discrete: tuple[str, ...]
    #: Per discrete column: the codes seen and their texts.
    texts: tuple[dict[float, str], ...] = attrs.field(eq=False)
    #: The continuous parts: (name, first column, width).
    blocks: tuple[tuple[str, int, int], ...]


def table(first: Sequence[Transcript], second: Sequence[Transcript]
          ) -> tuple[NDArray[np.float64], NDArray[np.float64], Layout]:
    """The transcripts of both sides as rows of numbers (see the module docstring)."""
    # sorted names: the order of the candidates (and so the tie-breaking) then depends on
    # which parts exist, not on which fit showed one first (a measured fit, perhaps)
    order = sorted({name for transcript in (*first, *second) for name in transcript.names})
    widths = dict.fromkeys(order, 0)
    for transcript in (*first, *second):
        for part in transcript.parts:
            widths[part.name] = max(widths[part.name], part.values.size)
    blocks, start = [], len(order) + 1
    for name in order:
        if widths[name]:
            blocks.append((name, start, widths[name]))
            start += widths[name]
    texts: list[dict[float, str]] = [{} for _ in range(len(order) + 1)]

    def row(transcript: Transcript) -> NDArray[np.float64]:
        out = np.zeros(start)
        parts: dict[str, Part] = {p.name: p for p in transcript.parts}
        for j, name in enumerate(order):
            token = parts[name].token if name in parts else _ABSENT
            out[j] = _code(token)
            if out[j] not in texts[j]:
                texts[j][out[j]] = _describe(token)
        whole = transcript.discrete
        out[len(order)] = _code(whole)
        texts[len(order)].setdefault(out[len(order)], f"transcript class {len(texts[-1])}")
        for name, begin, _ in blocks:
            if name in parts:
                values = parts[name].values
                out[begin:begin + values.size] = values
        return out

    rows = [np.array([row(t) for t in side]).reshape(len(side), start)
            for side in (first, second)]
    layout = Layout(discrete=(*order, "the whole discrete half"), texts=tuple(texts),
                    blocks=tuple(blocks))
    return rows[0], rows[1], layout


class _Columns(Distinguisher):
    """``inner`` on some columns of the table, described by the part they hold."""

    def __init__(self, label: str, columns: Sequence[int], inner: Distinguisher,
                 texts: dict[float, str] | None = None) -> None:
        super().__init__()
        self.label, self.columns, self.inner, self.texts = label, list(columns), inner, texts
        self.name = f"{inner.name} on {label}"

    def for_trials(self, trials: int) -> Distinguisher:
        return _Columns(self.label, self.columns, self.inner.for_trials(trials), self.texts)

    def _view(self, x: NDArray[Any], columns: list[int]) -> NDArray[Any]:
        a = np.asarray(x, dtype=float)
        return a[:, columns[0]] if self.texts is not None else a[:, columns]

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        columns, centre, scale = self.columns, 0.0, 1.0
        if self.texts is None:
            # floating-point values: the varying columns, standardised on these rows (a
            # fixed affine map once chosen), screened to the most different ones if many
            a, b = (np.asarray(s, dtype=float)[:, columns] for s in (first, second))
            pooled = np.concatenate([a, b])
            keep = np.flatnonzero(np.ptp(pooled, axis=0) > 0)
            if keep.size > _MAX_WIDTH:
                spread = np.sqrt((a.var(axis=0) + b.var(axis=0)) / 2.0)[keep] + 1e-300
                score = np.abs(a.mean(axis=0) - b.mean(axis=0))[keep] / spread
                keep = keep[np.argsort(-score, kind="stable")[:_MAX_WIDTH]]
            columns = [columns[i] for i in keep] or columns[:1]
            centre = pooled[:, keep].mean(axis=0) if keep.size else 0.0
            scale = pooled[:, keep].std(axis=0) if keep.size else 1.0

        def view(x: NDArray[Any]) -> NDArray[Any]:
            return (self._view(x, columns) - centre) / scale

        try:
            rule = self.inner.fit(view(first), view(second), delta=delta,
                                  confidence=confidence)
        except np.linalg.LinAlgError:  # collinear values: no projection, the empty set
            return Rule(contains=lambda x: np.zeros(len(x), dtype=bool),
                        description=f"{self.label}: no projection (collinear values)")

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            result: NDArray[np.bool_] = np.asarray(rule.contains(view(x)),
                                                   dtype=bool).reshape(len(x))
            return result

        if self.texts is not None:
            chosen = [text for code, text in self.texts.items()
                      if bool(rule.contains(np.array([code]))[0])]
            shown = " or ".join(chosen[:3]) + (f" or {len(chosen) - 3} more"
                                                if len(chosen) > 3 else "")
            description = f"{self.label} is {shown}"
        else:
            description = f"{self.label}: {rule.description}"
        return Rule(contains=contains, description=description, swapped=rule.swapped)


class TranscriptParts(Distinguisher):
    """The rejection set for transcript rows laid out by ``layout`` (:func:`table`), the
    best on held-out selection rows of

    * a likelihood-ratio set (:class:`~privkit.audits.Histogram`) over the classes of
      each discrete part, and over the classes of the whole discrete half;
    * a threshold (one value) or a Fisher projection (several; standardised, and
      screened to the 32 most different coordinates) of each part's floating-point
      values, and of all of them together.

    Only parts that vary among the selection rows are candidates, on the columns that
    vary there: the table's layout is computed from every fit, but what a candidate reads
    and in which order the candidates come (the parts' sorted names) depend on the
    selection rows alone, so the rule is fixed before any measured fit is looked at. As in
    :class:`~privkit.audits.Best`, each is fitted on 3/4 of the selection rows, scored on
    the other 1/4, and the winner refitted on all of them. The score is the candidate's
    bound on the held-out rows projected to the measured size, then (where that is 0 for
    every candidate, as it is on a few held-out rows) the log ratio of its two held-out
    frequencies with half a count added: a part that separates the held-out rows wins
    even when there are too few of them to certify anything. Ties go to the first
    candidate: the discrete parts come first (their rules read best: "classes_ is
    [0, 1, 2]").
    """

    name = "transcript parts"

    def __init__(self, layout: Layout, trials: int | None = None) -> None:
        super().__init__(trials)
        self.layout = layout

    def candidates(self, pooled: NDArray[np.float64]) -> list[Distinguisher]:
        """The candidates for these (pooled selection) rows: the discrete parts, then the
        floating-point ones, the projection of all of them last."""
        found: list[Distinguisher] = [
            _Columns(label, [j], Histogram(), self.layout.texts[j])
            for j, label in enumerate(self.layout.discrete)
            if np.unique(pooled[:, j]).size > 1]
        varying: list[int] = []
        for label, start, width in self.layout.blocks:
            columns = [c for c in range(start, start + width) if np.ptp(pooled[:, c]) > 0]
            if columns:
                varying += columns
                inner = Threshold() if len(columns) == 1 else Projection()
                found.append(_Columns(label, columns, inner))
        if len(varying) > 1:
            found.append(_Columns("every floating-point value", varying, Projection()))
        return found

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
        found = self.candidates(np.concatenate([a, b]))
        if self.trials is not None:
            found = [c.for_trials(self.trials) for c in found]
        if not found:
            return Rule(contains=lambda x: np.zeros(len(x), dtype=bool),
                        description="no part of the transcript varies: the empty set")
        cut_a, cut_b = (3 * len(a)) // 4, (3 * len(b)) // 4
        scores = []
        for candidate in found:
            rule = candidate.fit(a[:cut_a], b[:cut_b], delta=delta, confidence=confidence)
            counts = [int(np.sum(rule.contains(side))) for side in (a[cut_a:], b[cut_b:])]
            sizes = [len(a) - cut_a, len(b) - cut_b]
            h, o = (1, 0) if rule.swapped else (0, 1)
            bound = float(_ranked_bounds(counts[h], sizes[h], counts[o], sizes[o], delta=delta,
                                         confidence=confidence, trials=self.trials))
            smoothed = (np.log(max((counts[h] + 0.5) / (sizes[h] + 1.0) - delta, 1e-300))
                        - np.log((counts[o] + 0.5) / (sizes[o] + 1.0)))
            scores.append((bound, float(smoothed)))
        winner = scores.index(max(scores))
        return found[winner].fit(a, b, delta=delta, confidence=confidence)


@attrs.frozen(kw_only=True)
class TranscriptResult(AuditResult):
    """An :class:`~privkit.audits.AuditResult` of a transcript audit, with the estimator,
    the channel, the label mode and the mean seconds per fit."""

    estimator: str = ""
    channel: str = ""
    #: True: ``classes`` declared; False: learnt privately; None: not a classifier.
    classes_declared: bool | None = None
    #: Whose claim: "privkit" (a violation is a bug) or "paper" (see TranscriptCase).
    claim: str = "privkit"
    seconds_per_fit: float = attrs.field(default=0.0, eq=False)
    #: How many channels the result stands for (one, or all of a case's in the rows of
    #: ``privkit audit``, :func:`privkit.audits.estimators.run_estimator`).
    channels: int = 1
    #: Every fit made for the result, on both sides (the warm-up fits excepted).
    fits_run: int = 0

    @property
    def separated(self) -> bool:
        """Every measured fit of the favoured side fell in the set, and none of the
        other side's: the transcripts differed on every fit."""
        return self.hits == self.trials and self.hits_other == 0 and self.trials > 0


def _fresh(estimator: Any, seed: int, owner: str) -> Any:
    """An unfitted copy of ``estimator`` with ``random_state=seed`` (scikit-learn's
    ``clone`` without importing scikit-learn: ``get_params`` rebuilt, or a deep copy)."""
    if hasattr(estimator, "get_params"):
        params = copy.deepcopy(estimator.get_params(deep=False))
        if "random_state" not in params:
            raise check.fail("case.estimator", type(estimator).__name__, "an estimator "
                             "with a random_state parameter", owner)
        params["random_state"] = seed
        return type(estimator)(**params)
    fresh = copy.deepcopy(estimator)
    fresh.random_state = seed
    return fresh


def _record(case: Any, data: tuple[Any, Any], seed: int, owner: str) -> Transcript:
    """One fit's transcript, on copies of the data and probes (a fit that changed its
    input in place would otherwise change every later fit's)."""
    X, y = (None if a is None else np.array(a, copy=True) for a in data)
    probes = np.array(case.probes, copy=True)
    return record_transcript(_fresh(case.estimator, seed, owner), X, y, probes=probes,
                             fit_params=case.fit_params, methods=case.methods,
                             random_state=seed)


def single_threaded() -> contextlib.AbstractContextManager[Any]:
    """One BLAS/OpenMP thread while audits fit small models (2 ran L-BFGS-B 2-7x slower)."""
    try:
        from threadpoolctl import threadpool_limits
    except ModuleNotFoundError:  # scikit-learn's dependency: without it, nothing to limit
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)  # type: ignore[no-any-return]


def _transcripts(case: Any, pair: NeighbouringPair, total: int,
                 root: np.random.SeedSequence, owner: str
                 ) -> tuple[list[Transcript], list[Transcript], float]:
    """``total`` transcripts per side, the sides interleaved (so that nothing that drifts
    over a run, or happens on a first call, falls on one side), and seconds per fit."""
    seeds = [np.random.default_rng(s).integers(0, 2**32, size=total) for s in root.spawn(2)]
    out: tuple[list[Transcript], list[Transcript]] = ([], [])
    with single_threaded():
        _record(case, pair.first, 0, owner)  # warm-up: imports and caches of a first fit
        start = time.perf_counter()
        for i in range(total):
            for side, data in enumerate((pair.first, pair.second)):
                out[side].append(_record(case, data, int(seeds[side][i]), owner))
    return out[0], out[1], (time.perf_counter() - start) / (2 * total)


def _replay(rows: tuple[NDArray[np.float64], NDArray[np.float64]]) -> Any:
    """A batched system whose draws on input ``side`` (0 or 1) are that side's rows, in
    order: :func:`~privkit.audits.audit` takes the first ones as its selection draws."""
    cursor = [0, 0]

    def system(side: int, rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        begin = cursor[side]
        cursor[side] += size
        return rows[side][begin:begin + size]

    return system


def label_mode(estimator: Any) -> bool | None:
    """True when ``estimator`` declares its label set (``classes`` given), False when it
    learns it privately (``classes=None``), None when it takes no ``classes``."""
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "classes" not in params and not hasattr(estimator, "classes"):
        return None
    return params.get("classes", getattr(estimator, "classes", None)) is not None


def threat_model(case: Any, description: str) -> str:
    """The threat-model text of a transcript audit on a pair described by
    ``description``."""
    return (f"the whole transcript: attributes, predictions on {len(case.probes)} probes, "
            f"warnings, exceptions; pair: {description}")


def audit_estimator(case: Any, channel: str | NeighbouringPair, *, fits: int = DEFAULT_FITS,
                    selection_fits: int | None = None, confidence: float = 0.95,
                    rng: Any = None, name: str | None = None,
                    distinguisher: Distinguisher | None = None) -> TranscriptResult:
    """Bound the epsilon of ``case.estimator``'s whole transcript on ``channel``'s pair.

    Parameters
    ----------
    case : TranscriptCase
        The estimator's case (``cls.transcript_case(...)``).
    channel : str or NeighbouringPair
        A channel of :data:`CHANNELS` (the pair :func:`channel_pair` builds), or a pair
        of datasets ``(X, y)`` of your own.
    fits : int, default 200
        Measured fits per side (at least 10), each with a fresh ``random_state``.
    selection_fits : int, optional
        Fits per side that choose the rejection set, on top (default ``fits // 4``).
    confidence : float
        The probability that the reported lower bound is valid.
    rng : seed, SeedSequence or Generator
        The root of every ``random_state`` given to the fits.
    distinguisher : Distinguisher, optional
        Chooses the rejection set from the table's rows (default :class:`TranscriptParts`
        for the table's layout).

    Returns
    -------
    TranscriptResult
        Against the case's claim ``(case.epsilon, case.delta)``; ``verdict`` is
        "violation" only when the lower bound exceeds it.

    Examples
    --------
    A toy classifier that publishes ``classes_ = np.unique(y)``, on a record with a label
    no other record has:

    >>> from privkit.audits.leaky import UniqueLabels
    >>> result = audit_estimator(UniqueLabels.transcript_case(), "new_label", rng=0)
    >>> result.verdict, result.separated, round(result.lower_bound, 2)
    ('violation', True, 3.97)
    """
    owner = "audit_estimator"
    check_case(case, owner)
    n = check.positive_int("fits", fits, owner)
    if n < MIN_TRIALS:
        raise check.fail("fits", fits, f"an integer >= {MIN_TRIALS} (fits per side)", owner)
    select = max(2, n // 4) if selection_fits is None else check.positive_int(
        "selection_fits", selection_fits, owner)
    if select < 2:
        raise check.fail("selection_fits", selection_fits, "an integer >= 2", owner)
    conf = check.open_unit("confidence", confidence, owner)
    if isinstance(channel, NeighbouringPair):
        pair, label = channel, channel.description or "a pair of datasets"
    else:
        pair, label = channel_pair(case, channel), channel
    if distinguisher is not None:
        check.instance("distinguisher", distinguisher, Distinguisher, owner)
    root = seed_root(rng, owner)
    fit_seeds, audit_seed = root.spawn(2)
    first, second, seconds = _transcripts(case, pair, n + select, fit_seeds, owner)
    rows_first, rows_second, layout = table(first, second)
    declared = label_mode(case.estimator)
    estimator = type(case.estimator).__name__
    mode = "" if declared is None else (
        "[classes declared]" if declared else "[classes learnt]")
    result = audit(_replay((rows_first, rows_second)),
                   NeighbouringPair(first=0, second=1, relation=case.relation),
                   epsilon=case.epsilon, delta=case.delta, trials=n, selection_trials=select,
                   confidence=conf, distinguisher=distinguisher or TranscriptParts(layout),
                   rng=audit_seed, name=name or f"{estimator}{mode} {label}",
                   threat_model=threat_model(case, f"{label}: {pair.description}"))
    fields = {f.name: getattr(result, f.name) for f in attrs.fields(AuditResult)}
    fields["pair"] = pair
    return TranscriptResult(**fields, estimator=estimator, channel=label,
                            classes_declared=declared, claim=case.claim,
                            seconds_per_fit=seconds, fits_run=2 * (n + select))


def audit_channels(case: Any, *, channels: Sequence[str] | None = None,
                   fits: int = DEFAULT_FITS, selection_fits: int | None = None,
                   confidence: float = 0.95, familywise: bool = False, rng: Any = None
                   ) -> list[TranscriptResult]:
    """:func:`audit_estimator` on every channel of ``case`` (or those named), each from
    its own stream of ``rng``.

    With ``familywise=True`` each channel is audited at confidence
    ``1 - (1 - confidence) / k`` for k channels (Bonferroni), so that all k bounds, and
    so their largest, hold together with probability ``confidence``.
    """
    owner = "audit_channels"
    check_case(case, owner)
    names = case_channels(case) if channels is None else list(channels)
    if not names:
        raise check.fail("channels", channels, "a non-empty list of channels", owner)
    conf = check.open_unit("confidence", confidence, owner)
    each = 1.0 - (1.0 - conf) / len(names) if familywise else conf
    seeds = seed_root(rng, owner).spawn(len(names))
    return [audit_estimator(case, name, fits=fits, selection_fits=selection_fits,
                            confidence=each, rng=seed) for name, seed in zip(names, seeds,
                                                                             strict=True)]
