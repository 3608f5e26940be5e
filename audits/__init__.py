"""privkit.audits: empirical tests of privacy claims.

Attacks on neighbouring datasets that turn samples into statistically valid lower bounds
on epsilon, sensitivity checks and property-based testing helpers land here. This
release ships none yet.

.. versionadded:: 0.1.0
"""

__all__: list[str] = []
