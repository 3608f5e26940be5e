"""Audit results and reports.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

__all__ = ["AuditResult", "Verdict", "report"]

Verdict = Literal["violation", "consistent", "inconclusive"]


@attrs.frozen(kw_only=True)
class AuditResult:
    """What an audit measured and what it concludes about a claim.

    Attributes
    ----------
    name : str
        What was audited.
    claim_epsilon, claim_delta : float
        The claim tested.
    lower_bound : float
        An epsilon lower bound at ``claim_delta`` that holds with probability at least
        ``confidence`` (Clopper-Pearson, on draws not used to choose the rejection set).
    confidence : float
    trials : int
        Draws per side used for the bound (the selection draws are extra).
    selection_trials : int
        Extra draws per side that chose the rejection set (each side was drawn
        ``trials + selection_trials`` times).
    hits, hits_other : int
        How many of those draws of M(D), M(D') fell in the rejection set (after
        orientation: ``hits`` is the side S favours).
    rule : str
        The rejection set, e.g. ``x > 3.1``.
    distinguisher : str
    pair : NeighbouringPair
        The pair that was attacked.
    gdp_mu_lower : float
        The f-DP (Gaussian) lower bound on mu from the same counts (Nasr et al. 2023),
        valid only under the assumption that the mechanism is Gaussian-like.
    threat_model : str
        What the adversary is assumed to see ("" for a mechanism's output).
    ceiling : float
        The largest fraction of the claim the attacked pair can certify, where it is
        known not to reach it (1.0 otherwise).
    ceiling_basis : {"pair", "draws"}
        What limits ``ceiling``: the pair's own largest privacy loss, or the number of
        draws (the best bound an oracle that knows the optimal set certifies at this many
        draws for the exact output law; reported with a "(draws)" label).
    stages : int
        For a sequential audit, the number of stages run (1 otherwise).
    verdict : {"violation", "consistent", "inconclusive"}
        "violation" only when the lower bound exceeds the claim; "inconclusive" when the
        attack certified nothing (lower bound 0); "consistent" otherwise.
    """

    name: str
    claim_epsilon: float
    claim_delta: float
    lower_bound: float
    confidence: float
    trials: int
    hits: int
    hits_other: int
    rule: str
    distinguisher: str
    gdp_mu_lower: float = 0.0
    pair: Any = attrs.field(default=None, eq=False, repr=False)
    selection_trials: int = 0
    threat_model: str = ""
    ceiling: float = 1.0
    stages: int = 1
    ceiling_basis: str = "pair"

    @property
    def draws_per_side(self) -> int:
        """Every draw made on each input, selection draws included."""
        return self.trials + self.selection_trials

    @property
    def gdp_epsilon_lower(self) -> float:
        """The epsilon at ``claim_delta`` implied by ``gdp_mu_lower``: a lower bound
        *only if the mechanism is Gaussian-like* (Nasr et al. 2023); labelled as such in
        reports, never used for the verdict."""
        from privkit.guarantees import GDP

        if self.gdp_mu_lower <= 0.0 or self.claim_delta <= 0.0:
            return 0.0
        return GDP(mu=self.gdp_mu_lower).epsilon_at(self.claim_delta)

    @property
    def verdict(self) -> Verdict:
        if self.lower_bound > self.claim_epsilon:
            return "violation"
        if self.lower_bound <= 0.0:
            return "inconclusive"
        return "consistent"

    def __str__(self) -> str:
        return (f"{self.name}: claim ({self.claim_epsilon:.4g}, {self.claim_delta:.3g}), "
                f"lower bound {self.lower_bound:.4f} at {self.confidence:.0%} -> "
                f"{self.verdict}")


def report(results: Sequence[AuditResult], *, markdown: bool = False) -> str:
    """A table of results: claim, measured lower bound, ratio, verdict.

    The "if Gaussian-like" column is the f-DP bound of Nasr et al. 2023 at the claimed
    delta, valid only for mechanisms whose trade-off curve is Gaussian; it never decides
    the verdict. "draws/side" counts every draw on each input, the selection draws
    included. "pair ceiling" is the largest fraction of the claim the pair can certify
    where it is below 1; marked "(draws)" when the limit is the number of draws, not the
    pair (:attr:`AuditResult.ceiling_basis`). Threat models, where a result states one,
    are listed under the table.
    """
    header = ["audit", "claim eps", "claim delta", "lower bound", "bound/claim",
              "pair ceiling", "if Gaussian-like", "draws/side", "verdict"]
    rows = [[r.name, f"{r.claim_epsilon:.4g}", f"{r.claim_delta:.3g}", f"{r.lower_bound:.4f}",
             f"{r.lower_bound / r.claim_epsilon:.3f}",
             _ceiling_text(r),
             f"{r.gdp_epsilon_lower:.4f}" if r.claim_delta > 0 else "-",
             f"{r.draws_per_side:,}", r.verdict] for r in results]
    notes = [f"{r.name}: {r.threat_model}" for r in results if r.threat_model]
    legend = ("(draws): a statistical ceiling, the best bound an oracle that knows the "
              "optimal set certifies at these draws per side for the exact output law; "
              "the pair's own limit is higher (stated in the row's note)")
    drawn = any(r.ceiling_basis == "draws" and r.ceiling < 0.9995 for r in results)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        if drawn:
            lines += ["", legend]
        if notes:
            lines += ["", "Threat models:", ""] + [f"- {n}" for n in notes]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    if drawn:
        lines += ["", legend]
    if notes:
        lines += ["", "threat models:"] + [f"  {n}" for n in notes]
    return "\n".join(lines)


def _ceiling_text(r: AuditResult) -> str:
    if r.ceiling >= 0.9995:
        return "-"
    return f"{r.ceiling:.3f}" + (" (draws)" if r.ceiling_basis == "draws" else "")
