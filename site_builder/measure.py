"""Measuring a trained result: over seeds, and over float paths.

A training run amplifies rounding. Two runs that differ in one initial weight
by one unit in the last place (or that sum in another order, on another BLAS
kernel) follow the same path for a while and then part, so the last digits of
a final loss are a fact about one float path, not about the experiment. A page
that trains therefore runs every seed twice, side by side: once as drawn, and
once with one initial weight nudged by one ulp (:func:`nudge`). What it reports
of an arm is a :class:`~site_builder.trace.numbers.Measurement`:

- the median over the seeds (at least :data:`MIN_SEEDS`), the smallest and the largest seed;
- the uncertainty the choice of seeds leaves on the median: half the width of the
  distribution-free confidence interval ``[x(j), x(n+1-j)]`` of the median
  (order statistics; at least 90 % for any distribution of the runs);
- the float-path uncertainty: the largest change of any seed's value between its
  two runs. The median, the smallest and the largest value of a set each move by at
  most the largest move of one member, so this bounds how far each of them moved.

The trace writes a measurement with only the digits these leave standing, and a
page shows it only through the ``measured`` formats (``site_builder/facts.py``).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from .trace.numbers import Measurement, reach, settled

MIN_SEEDS = 8  # the fewest seeds a compared arm is measured over
COVERAGE = 0.9  # the least probability that the median's interval holds the median of the runs' distribution

Order = Literal["lower", "higher", "indistinguishable"]


def nudge(weights: np.ndarray) -> np.ndarray:
    """A copy of ``weights`` with its first entry moved up by one unit in the last place."""
    out = np.array(weights, dtype=np.float64)
    flat = out.reshape(-1)
    flat[0] = np.nextafter(flat[0], np.inf)
    return out


def interval_rank(n: int) -> int:
    """The largest ``j`` for which ``[x(j), x(n+1-j)]`` of ``n`` sorted runs holds their distribution's median
    with probability at least :data:`COVERAGE` (each run falls below the median with probability one half)."""
    best = 1
    for j in range(1, n // 2 + 1):
        outside = 2 * sum(math.comb(n, k) for k in range(j)) / 2**n  # fewer than j runs below, or above
        if 1.0 - outside >= COVERAGE:
            best = j
    return best


def measure(values: np.ndarray, nudged: np.ndarray, *, what: str) -> Measurement:
    """One arm's result over its seeds (``values``, one per seed) and their nudged twins (``nudged``, in order)."""
    runs = np.asarray(values, dtype=np.float64)
    twins = np.asarray(nudged, dtype=np.float64)
    if runs.ndim != 1 or runs.shape != twins.shape:
        raise ValueError(f"{what}: one value per seed and one per twin, got shapes {runs.shape} and {twins.shape}")
    if len(runs) < MIN_SEEDS:
        raise ValueError(f"{what}: a measured result needs at least {MIN_SEEDS} seeds, got {len(runs)}")
    if not (np.all(np.isfinite(runs)) and np.all(np.isfinite(twins))):
        raise ValueError(f"{what}: a run ended NaN or infinite")
    ordered = np.sort(runs)
    median = float(np.median(runs))
    j = interval_rank(len(runs))
    seeds = max(median - float(ordered[j - 1]), float(ordered[-j]) - median)
    float_path = float(np.max(np.abs(runs - twins)))
    return Measurement(median, float(ordered[0]), float(ordered[-1]), seeds, float_path)


def compare(a: Measurement, b: Measurement) -> Order:
    """``a`` against ``b``: lower or higher only when their shown medians differ by more than both can move.

    It compares them as the trace writes them (:func:`~site_builder.trace.numbers.settled`), each median as far
    as half its last place and its uncertainty let it move (:func:`~site_builder.trace.numbers.reach`), so that a
    verdict follows from the numbers a reader sees and reads back the same from the trace.
    """
    gap = reach(a) + reach(b)
    a_median, b_median = settled(a).median, settled(b).median
    if a_median + gap < b_median:
        return "lower"
    if a_median - gap > b_median:
        return "higher"
    return "indistinguishable"
