"""The tests' own gradient: a central difference of a raw-NumPy objective, independent of the engine."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

STEP = 1e-6


def numeric_grad(f: Callable[..., float], arrays: list[np.ndarray], wrt: int, h: float = STEP) -> np.ndarray:
    """Central difference of the raw-NumPy scalar ``f(*arrays)`` w.r.t. ``arrays[wrt]``."""
    base = [np.array(a, dtype=np.float64, copy=True) for a in arrays]
    grad = np.zeros_like(base[wrt])
    for idx in np.ndindex(base[wrt].shape):
        plus = [a.copy() for a in base]
        minus = [a.copy() for a in base]
        plus[wrt][idx] += h
        minus[wrt][idx] -= h
        grad[idx] = (float(f(*plus)) - float(f(*minus))) / (2.0 * h)
    return grad
