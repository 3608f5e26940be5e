"""Type stub of the compiled Lawson-Hanson solver (``_hull.pyx``)."""

import numpy as np
from numpy.typing import NDArray

def nnls_gram(H: NDArray[np.float64], u: NDArray[np.float64], order: NDArray[np.intc],
              R: NDArray[np.float64], excluded: NDArray[np.uint8], k: int, k_factored: int,
              max_iter: int, wtol: float, reject: float) -> tuple[int, int, bool]: ...

def gather_gram(G: NDArray[np.float64], keep: NDArray[np.intp],
                out: NDArray[np.float64]) -> None: ...
