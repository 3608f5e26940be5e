"""Which estimators privkit audits on their whole transcript, and how ``privkit audit``
runs them.

Every class exported by :mod:`privkit.algorithms` whose ``transcript_case`` classmethod
builds an instance of that very class (not an inherited case of its parent) is audited,
and so is any class registered with :func:`register_estimator`; a classifier (a class
with a ``classes`` parameter) in both label modes, ``classes`` declared and learnt
privately. Every exported class with a ``fit`` method must have its own case unless
:data:`EXEMPT` gives the reason it needs none.

``privkit audit`` runs a compact tier (:func:`run_estimator`) on every audited
estimator: every channel of the case,
:data:`CLI_FITS` measured fits per side and :data:`CLI_SELECTION` selection fits, each
channel at confidence ``1 - (1 - confidence) / k`` for k channels, and one row per label
mode with the channel whose bound is largest (all k bounds hold together, so that one
does, at ``confidence``). The full tier (at least 200 fits per side, every channel, one
test each) runs in the test suite, ``tests/audits/test_transcript_estimators.py``.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import attrs

from privkit import _validation as check
from privkit.audits.channels import channels
from privkit.audits.transcript import TranscriptResult, audit_channels, threat_model

__all__ = ["CLI_FITS", "CLI_MAX_FITS", "CLI_SELECTION", "EXEMPT", "case_builders",
           "cli_selection", "estimators", "fits_to_certify", "has_case", "label_modes",
           "register_estimator", "requires_case", "run_estimator", "uncovered"]

#: Measured fits per side of each channel in ``privkit audit``'s transcript tier: a
#: screen, which a part that differs on every fit passes with ``log(0.7344 / 0.2656) =
#: 1.02`` (six channels, each at ``1 - 0.05 / 12``: see :func:`run_estimator`); its
#: second stage then proves more than the claim (the full tier's 200 fits at 95% certify
#: 3.98). Most of the tier's time goes to this screen of every channel.
CLI_FITS = 20
#: Selection fits per side of each channel in ``privkit audit``'s transcript tier.
CLI_SELECTION = 10
#: The most measured fits per side of a channel's second stage in ``privkit audit``
#: (see :func:`run_estimator`).
CLI_MAX_FITS = 400


def cli_selection(fits: int) -> int:
    """Selection fits per side for ``fits`` measured ones in ``privkit audit``:
    :data:`CLI_SELECTION`, or a quarter of ``fits`` if that is more."""
    return max(CLI_SELECTION, fits // 4)


_PUBLIC_MAP = ("public-bound preprocessing: fit learns only the number of features (the "
               "schema, public), and transform is a per-record map fixed by public "
               "parameters; it releases no statistic of the data")

#: Exported classes with a ``fit`` that need no transcript case, and why.
EXEMPT: dict[str, str] = {
    "PublicOneHotEncoder": _PUBLIC_MAP,
    "PublicRangeScaler": _PUBLIC_MAP,
    "PublicStandardScaler": _PUBLIC_MAP,
    "RowNormClipper": _PUBLIC_MAP,
    "RandomFourierFeatures": (
        "a data-independent feature map: fit draws its frequencies from random_state and "
        "the number of features, and reads no value of the data"),
    "FlowerFedDPDRDPMLClassifier": (
        "runs FedDPDRDPMLClassifier's protocol (the same code and child random streams, "
        "audited in the run) in Flower processes, one per participant; "
        "tests/algorithms/test_flower.py shows its transcript equals the in-process one "
        "bit for bit in both label modes; a fit starts about 13 processes, so hundreds of "
        "fits per side are out of reach"),
}

_REGISTERED: dict[str, type] = {}


def requires_case(cls: type) -> bool:
    """True for a class that fits to data (has ``fit``) and is not a warning or error."""
    return callable(getattr(cls, "fit", None)) and not issubclass(cls, BaseException)


def has_case(cls: type) -> bool:
    """True when ``cls.transcript_case()`` builds an instance of ``cls`` itself (a case
    inherited from a parent class audits the parent, not ``cls``)."""
    build = getattr(cls, "transcript_case", None)
    if not callable(build):
        return False
    return type(build().estimator) is cls


def register_estimator(cls: type) -> None:
    """Audit ``cls`` (which has its own ``transcript_case``) in ``privkit audit``'s
    transcript tier, as privkit's own estimators are."""
    if not isinstance(cls, type) or not callable(getattr(cls, "transcript_case", None)):
        raise check.fail("cls", cls, "a class with a transcript_case classmethod",
                         "register_estimator")
    _REGISTERED[cls.__name__] = cls


def estimators() -> dict[str, type]:
    """Every audited estimator class by name: privkit.algorithms' exported classes with
    their own case and no exemption, then the registered ones (imports scikit-learn)."""
    import privkit.algorithms as algorithms

    found = {}
    for name in algorithms.__all__:
        obj = getattr(algorithms, name)
        if isinstance(obj, type) and has_case(obj) and name not in EXEMPT:
            found[name] = obj
    return {**found, **_REGISTERED}


def uncovered() -> list[str]:
    """The exported classes of :mod:`privkit.algorithms` that fit to data and have no
    transcript case of their own, and no exemption (imports scikit-learn)."""
    import privkit.algorithms as algorithms

    return sorted(name for name in algorithms.__all__
                  if isinstance(cls := getattr(algorithms, name), type)
                  and requires_case(cls) and not has_case(cls) and name not in EXEMPT)


def label_modes(cls: type) -> tuple[bool, ...]:
    """``(True, False)`` (classes declared, learnt) for a classifier, whose case's
    estimator takes a ``classes`` parameter; ``(True,)`` otherwise (the flag is then
    ignored)."""
    from privkit.audits.transcript import label_mode

    case = cls.transcript_case(declare_classes=True)  # type: ignore[attr-defined]
    return (True,) if label_mode(case.estimator) is None else (True, False)


def case_builders(cls: type) -> dict[str, Any]:
    """``{row name: () -> TranscriptCase}`` for each label mode of ``cls``."""
    modes = label_modes(cls)
    out = {}
    for declared in modes:
        suffix = "" if len(modes) == 1 else (
            "[classes declared]" if declared else "[classes learnt]")
        out[f"transcript:{cls.__name__}{suffix}"] = (
            lambda declared=declared: cls.transcript_case(  # type: ignore[attr-defined]
                declare_classes=declared))
    return out


def fits_to_certify(*, epsilon: float, delta: float, confidence: float,
                    cap: int) -> int | None:
    """The fewest measured fits per side (at most ``cap``) at which transcripts that
    differ on every fit certify more than ``epsilon`` at ``confidence``; None if more
    than ``cap`` are needed."""
    from privkit.audits.lower_bounds import epsilon_lower_bound

    def certifies(n: int) -> bool:
        return float(epsilon_lower_bound(n, n, 0, n, delta=delta,
                                         confidence=confidence)) > epsilon

    if not certifies(cap):
        return None
    low, high = 1, cap  # certifies(high) holds, certifies(low) does not (one fit: bound 0)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if certifies(middle) else (middle, high)
    return high


def run_estimator(cls: type, *, fits: int = CLI_FITS, selection_fits: int = CLI_SELECTION,
                  max_fits: int = CLI_MAX_FITS, confidence: float = 0.95, rng: Any = None
                  ) -> list[TranscriptResult]:
    """``privkit audit``'s transcript tier for ``cls``: one row per label mode.

    Every channel of the mode's case is audited with ``fits`` measured fits per side.
    A channel whose transcripts differed on every measured fit without certifying more
    than the claim (too few fits to prove it) is audited again on fresh fits: twice as
    many as make such a separation certify more than the claim, at most ``max_fits``
    (none if even ``max_fits`` could not). Each of these audits runs at confidence
    ``1 - (1 - confidence) / (2 k)`` for k channels, so all of them hold together with
    probability ``confidence`` (Bonferroni) and so does the largest bound, which the row
    reports.
    """
    from privkit.audits.attacks import seed_root

    builders = case_builders(cls)
    seeds = seed_root(rng, "run_estimator").spawn(len(builders))
    rows = []
    for (name, build), seed in zip(builders.items(), seeds, strict=True):
        case = build()
        names = channels(case)
        each = 1.0 - (1.0 - confidence) / (2 * len(names))
        first, second = seed.spawn(2)
        results = audit_channels(case, fits=fits, selection_fits=selection_fits,
                                 confidence=each, rng=first)
        needed = fits_to_certify(epsilon=case.epsilon, delta=case.delta, confidence=each,
                                 cap=max_fits)
        more = None if needed is None else min(max_fits, 2 * needed)
        again = [r.channel for r in results
                 if r.separated and r.verdict != "violation" and more is not None]
        if again and more is not None:
            results += audit_channels(case, channels=again, fits=more,
                                      selection_fits=selection_fits, confidence=each,
                                      rng=second)
        best = max(results, key=lambda r: r.lower_bound)
        seconds = sum(r.seconds_per_fit for r in results) / len(results)
        text = threat_model(case, f"{len(names)} channels ({', '.join(names)}), each at "
                            f"{each:.4g} (Bonferroni over the channels and a second stage)"
                            f", {fits} + {selection_fits} fits per side each"
                            + (f", again with {more} for {', '.join(again)}" if again else "")
                            + f"; the largest bound shown: {best.channel}; "
                            f"{1e3 * seconds:.2g} ms per fit")
        rows.append(attrs.evolve(best, name=name, confidence=confidence, threat_model=text,
                                 seconds_per_fit=seconds, channels=len(names),
                                 fits_run=sum(r.fits_run for r in results)))
    return rows
