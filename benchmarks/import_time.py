"""How long `import privkit` takes, and which heavy modules it pulls in.

Run: .venv/bin/python benchmarks/import_time.py

Measures the median wall time of `import privkit` in fresh interpreters (numpy's own
import, which privkit needs, is reported alongside as the baseline) and lists any of
torch, opacus, cvxpy, matplotlib, scikit-learn, scipy that got imported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

HEAVY = ("torch", "opacus", "cvxpy", "matplotlib", "sklearn", "scipy")
RUNS = 7


def timed(statement: str) -> float:
    code = ("import time; t = time.perf_counter(); " + statement +
            "; print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/")
    return float(out.stdout.strip())


def main() -> None:
    numpy = statistics.median(timed("import numpy") for _ in range(RUNS))
    privkit = statistics.median(timed("import privkit") for _ in range(RUNS))
    heavy = subprocess.run(
        [sys.executable, "-c",
         f"import sys, privkit; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"],
        capture_output=True, text=True, check=True, cwd="/").stdout.strip()
    print(f"import numpy   (baseline): {numpy * 1000:7.1f} ms (median of {RUNS})")
    print(f"import privkit (with numpy, attrs): {privkit * 1000:7.1f} ms")
    print(f"heavy modules imported: {heavy or 'none'}")


if __name__ == "__main__":
    main()
