"""Gradient checking by central differences on an independent objective.

The numeric side never touches the autograd engine: it evaluates a plain
NumPy function, so a bug in the engine cannot hide in both answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# The objective gets a fresh dict of copies for every evaluation, so one written for a dict (or any mapping) fits.
Objective = Callable[[dict[str, np.ndarray]], float]


@dataclass(frozen=True)
class GradCheck:
    """One sampled coordinate: analytic (engine) against numeric (finite difference)."""

    parameter: str
    index: tuple[int, ...]
    analytic: float
    numeric: float
    error: float
    passed: bool


@dataclass(frozen=True)
class GradCheckResult:
    step: float
    tolerance: float
    checks: tuple[GradCheck, ...]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def count(self, parameter: str) -> int:
        return sum(1 for c in self.checks if c.parameter == parameter)

    @property
    def max_error(self) -> float:
        return max((c.error for c in self.checks), default=0.0)


def central_difference(
    objective: Objective, values: Mapping[str, np.ndarray], parameter: str, index: tuple[int, ...], step: float
) -> float:
    """(f(p + h) - f(p - h)) / 2h for one coordinate of one named array."""
    plus = {k: np.array(v, dtype=np.float64, copy=True) for k, v in values.items()}
    minus = {k: np.array(v, dtype=np.float64, copy=True) for k, v in values.items()}
    plus[parameter][index] += step
    minus[parameter][index] -= step
    return (float(objective(plus)) - float(objective(minus))) / (2.0 * step)


def check_gradients(
    objective: Objective,
    values: Mapping[str, np.ndarray],
    analytic: Mapping[str, np.ndarray],
    samples: Mapping[str, Sequence[tuple[int, ...]]],
    *,
    step: float,
    tolerance: float,
) -> GradCheckResult:
    """Compare ``analytic[name][index]`` with a central difference at each sampled index.

    ``samples`` fixes the coordinates, in order, so the result is deterministic.
    A check passes when the absolute difference is at most ``tolerance``.
    """
    checks: list[GradCheck] = []
    for name, indices in samples.items():
        for index in indices:
            index = tuple(int(i) for i in index)
            a = float(analytic[name][index])
            n = central_difference(objective, values, name, index, step)
            err = abs(a - n)
            checks.append(GradCheck(name, index, a, n, err, bool(np.isfinite(err) and err <= tolerance)))
    return GradCheckResult(step=step, tolerance=tolerance, checks=tuple(checks))
