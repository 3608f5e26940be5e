"""``privkit reproduce``: one runner per source paper, each writing an output folder of
tables (Markdown and CSV) and figures (PNG) whose header records the command, the commit,
the machine and the load (:mod:`privkit.algorithms.reproduce._report`).

`CATALOGUE` is what ``privkit reproduce --list`` prints: per paper, its command name,
title, authors, what the runner reproduces and the two commands. Importing this package
imports nothing beyond the standard library (the runners are loaded by name).

====================  =============================================================
name                  paper
====================  =============================================================
``park2022``          Park 2022, equilibrium points (:mod:`.park2022`)
``dpksvmel``          DPKSVMEL, exponential + Laplace hybrid (:mod:`.dpksvmel`)
``lee-nystrom``       Lee, Ahn, Park, K-means Nyström (:mod:`.lee_nystrom`)
``vanderreijden2019`` van der Reijden 2019, LP-SVMs (:mod:`.vanderreijden2019`)
``wang2024``          Wang et al. 2024, FedDPDR-DPML (:mod:`.wang2024`)
====================  =============================================================

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUE", "Entry", "listing"]


@dataclass(frozen=True)
class Entry:
    """One reproducible paper: its command name, runner module, title, authors and what
    the runner reproduces."""

    name: str
    module: str
    title: str
    authors: str
    reproduces: str

    def commands(self) -> tuple[str, str]:
        """The quick and the full command (data from ``$PRIVKIT_DATA`` or ``--data``)."""
        base = f"privkit reproduce {self.name}"
        return f"{base} --quick --data DIR", f"{base} --full --data DIR"


CATALOGUE: tuple[Entry, ...] = (
    Entry("park2022", "privkit.algorithms.reproduce.park2022",
          "Differentially private multi-class classification using kernel supports and "
          "equilibrium points (SNU master's thesis, 2022)", "J. Park",
          "Table 7.3 (shuttle at 10% and 30%, with verdicts against the thesis' numbers; "
          "exact-kernel SVM OUTPUT and SEMI, a noise-free column), Figure 7.1 (accuracy "
          "against epsilon on eight data sets), Table 7.2 as same-machine ratios (privkit "
          "against cvxopt's dense-QP SVDD and the baselines)"),
    Entry("dpksvmel", "privkit.algorithms.reproduce.dpksvmel",
          "Differentially private kernel support vector machines based on the exponential "
          "and Laplace hybrid mechanism (Security and Communication Networks, 2021)",
          "Z. Sun, J. Yang, X. Li, J. Zhang",
          "accuracy and AUC on the eight libsvm data sets against epsilon, k and LLs, "
          "the faithful method and privkit's corrected variant against the non-private SVM "
          "(the paper's Figures 6-15; its tables are images)"),
    Entry("lee-nystrom", "privkit.algorithms.reproduce.lee_nystrom",
          "Differential privacy in scalable general kernel learning via K-means Nyström "
          "random features (poster)", "B. Lee, J. Ahn, C. Park",
          "accuracy and fit time of DP K-means -> Nyström -> DP linear learning against "
          "private linear learning and the non-private kernel SVM (the poster's figures)"),
    Entry("vanderreijden2019", "privkit.algorithms.reproduce.vanderreijden2019",
          "Solving linear programs to train SVMs under differential privacy (Erasmus "
          "master's thesis, 2019)", "P. van der Reijden",
          "Table 1 (non-private test errors, with verdicts) and the test error against "
          "epsilon of objective perturbation and the private DMW LP-SVM on Adult and KDD "
          "Cup 99 (the thesis' figures)"),
    Entry("wang2024", "privkit.algorithms.reproduce.wang2024",
          "Differentially private SVMs with knowledge aggregation (CMC 2024)",
          "T. Wang et al.",
          "Figures 2-5 on MNIST and Fashion-MNIST: Non-Priv, DPML, DPDR-DPML and "
          "FedDPDR-DPML against epsilon, k, n and uneven participant sizes"),
)


def listing() -> str:
    """The text ``privkit reproduce --list`` prints."""
    out = []
    for e in CATALOGUE:
        quick, full = e.commands()
        out += [f"{e.name}", f"  \"{e.title}\"", f"  by {e.authors}",
                f"  reproduces: {e.reproduces}",
                f"  quick: {quick}", f"  full:  {full}", ""]
    return "\n".join(out).rstrip() + "\n"
