"""The compiled accelerators against their numpy paths, in one process (issue 24).

For each kernel privkit compiles, this times the compiled module and its numpy path
(:mod:`privkit.algorithms._accelerators` chooses between them) on the same inputs, alone and
through the public function that calls it, and checks that both give the same result:

* the Lawson-Hanson solver (``_hull`` / ``_hull_numpy``) inside
  :func:`privkit.algorithms.svdd.svdd.svdd_centre` on random Fourier features of 2,000 and
  6,000 Gaussian rows, F = 400 (working sets of 448 rows and the warm starts), and one
  cold ``nnls_gram`` on the Gram matrix of 448 rows;
* the feature map (``_rff.features`` / ``_rff_numpy.features``) through
  ``RandomFourierFeatures.transform`` on 20,000 rows of 10 features, F = 400;
* the equilibrium-point descent (``_rff.descend_rows``) through
  :func:`privkit.algorithms.svdd.equilibrium.descend` from 2,000 rows, Table 7.1's 20 steps.

``--previous DIR`` adds the compiled modules found in DIR (``_hull*.so``, ``_rff*.so``, for
example privkit 0.2.0's hand-vectorised build) as a third column. Run:
``OMP_NUM_THREADS=1 .venv/bin/python -P benchmarks/compiled.py``; writes
``benchmarks/results/compiled.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from privkit.algorithms._accelerators import _hull_numpy, _rff_numpy
from privkit.algorithms.kernels import random_features
from privkit.algorithms.kernels.random_features import RandomFourierFeatures
from privkit.algorithms.svdd import _equilibrium_dynamics, _svdd_dual
from privkit.algorithms.svdd.equilibrium import descend
from privkit.algorithms.svdd.svdd import svdd_centre

RESULTS = Path(__file__).resolve().parent / "results"


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _load(name: str, folder: Path | None) -> ModuleType | None:
    """The compiled module ``name`` (``_hull`` or ``_rff``): the built one, or the one in
    ``folder``; None if there is none."""
    if folder is None:
        try:
            return importlib.import_module(f"privkit.algorithms._accelerators.{name}")
        except ImportError:
            return None
    found = sorted(folder.glob(f"{name}.*.so")) + sorted(folder.glob(f"{name}.*.pyd"))
    if not found:
        return None
    spec = importlib.util.spec_from_file_location(f"privkit.algorithms._accelerators.{name}",
                                                  found[0])
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _with(hull: ModuleType, rff: ModuleType, fn: Callable[[], Any]) -> Any:
    """``fn()`` with the callers' kernels swapped for ``hull`` and ``rff``."""
    saved = (_svdd_dual._hull, _equilibrium_dynamics._rff, random_features._rff)
    _svdd_dual._hull = hull
    _equilibrium_dynamics._rff = random_features._rff = rff
    try:
        return fn()
    finally:
        _svdd_dual._hull, _equilibrium_dynamics._rff, random_features._rff = saved


def _cases(repeats: int) -> list[tuple[str, str, Callable[[], Any], int]]:
    """(row, what is compared, call, repeats) for every timed call."""
    rng = np.random.default_rng(0)
    out: list[tuple[str, str, Callable[[], Any], int]] = []
    for n in (2000, 6000):
        X = rng.normal(size=(n, 10))
        Phi = RandomFourierFeatures(400, 1.0, random_state=1).fit_transform(X)
        out.append((f"svdd_centre, {n:,} rows, F = 400", "hull",
                    lambda Phi=Phi: svdd_centre(Phi, 0.05).centre, max(1, repeats // 2)))
    Phi = RandomFourierFeatures(400, 1.0, random_state=2).fit_transform(
        rng.normal(size=(448, 10)))
    E = np.hstack([Phi, np.ones((448, 1))])
    H = np.ascontiguousarray(E @ E.T)

    def cold() -> Any:
        from privkit.algorithms.svdd import _svdd_dual as dual
        u, order = np.zeros(448), np.zeros(448, dtype=np.intc)
        R = np.zeros((402, 402))
        dual._hull.nnls_gram(H, u, order, R, np.zeros(448, dtype=np.uint8), 0, 0, 5000,
                             1e-13, 1e-12)
        return u

    out.append(("nnls_gram, cold, 448 rows, F = 400", "hull", cold, repeats))
    features = RandomFourierFeatures(400, 0.5, random_state=3).fit(np.zeros((1, 10)))
    X = rng.normal(size=(20000, 10))
    out.append(("transform, 20,000 rows, F = 400", "rff", lambda: features.transform(X),
                repeats))
    centre = rng.normal(size=400)
    centre /= np.linalg.norm(centre)
    starts = rng.normal(size=(2000, 10))
    out.append(("descend, 2,000 rows, F = 400, 20 steps", "rff",
                lambda: descend(features, centre, starts, 1e-3, 20), repeats))
    return out


def _difference(a: Any, b: Any, bitwise: bool) -> str:
    a, b = np.asarray(a), np.asarray(b)
    if bitwise:
        return "bit for bit" if a.tobytes() == b.tobytes() else "DIFFERENT BITS"
    return f"{float(np.max(np.abs(a - b))):.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--previous", type=Path, default=None,
                        help="a folder with another build's _hull and _rff modules")
    parser.add_argument("--out", type=Path, default=RESULTS / "compiled.md")
    args = parser.parse_args()
    hull, rff = _load("_hull", None), _load("_rff", None)
    if hull is None or rff is None:
        raise SystemExit("compiled.py: the accelerators are not built here; nothing to "
                         "compare (pip install . with a C compiler)")
    previous = (_load("_hull", args.previous), _load("_rff", args.previous)) \
        if args.previous else None
    head = ["call", "compiled ms", "numpy path ms", "numpy / compiled", "same result"]
    if previous:
        head += ["previous build ms", "previous / compiled"]
    rows = []
    for name, kind, call, repeats in _cases(args.repeats):
        bitwise = kind == "rff"
        compiled_result = _with(hull, rff, call)
        numpy_result = _with(_hull_numpy, _rff_numpy, call)
        t_c = _median_ms(lambda call=call: _with(hull, rff, call), repeats)
        t_n = _median_ms(lambda call=call: _with(_hull_numpy, _rff_numpy, call), repeats)
        row = [name, f"{t_c:.1f}", f"{t_n:.1f}", f"{t_n / t_c:.2f}",
               _difference(compiled_result, numpy_result, bitwise)]
        if previous:
            old = previous[0] if kind == "hull" else previous[1]
            if old is None:
                row += ["-", "-"]
            else:
                kernels = (old, rff) if kind == "hull" else (hull, old)
                t_p = _median_ms(lambda call=call, k=kernels: _with(*k, call), repeats)
                row += [f"{t_p:.1f}", f"{t_p / t_c:.2f}"]
        rows.append(row)
        print(" | ".join(row), flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    lines = [
        "# Compiled accelerators against their numpy paths",
        "",
        (f"`benchmarks/compiled.py` on commit {commit}, {platform.machine()}, "
        f"{os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}"
        f", median of {args.repeats} runs (half that for svdd_centre), one process. "
        "Same result: the random features bit for bit; the solver, the largest difference "
        "of the centres (or weights)."),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
