"""``privkit reproduce``: one runner per source paper, each writing an output folder of
tables (Markdown and CSV) and figures (PNG) whose header records the command, the commit,
the machine and the load (:mod:`privkit.algorithms.reproduce._report`).

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
