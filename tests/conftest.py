"""Test configuration: make the shared hypothesis strategies importable."""

import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# Deterministic property tests: the same examples on every run and every machine.
settings.register_profile("privkit", derandomize=True, deadline=None, max_examples=60)
settings.load_profile("privkit")
