"""Type stub of the compiled random Fourier feature kernels (``_rff.pyx``)."""

import numpy as np
from numpy.typing import NDArray

lanes: int
rows: int

def descend_rows(phase: NDArray[np.float32], steps: NDArray[np.float32],
                 x: NDArray[np.float32], n_iter: int, decay_from: int) -> None: ...

def features(proj: NDArray[np.float64], out: NDArray[np.float64]) -> None: ...
