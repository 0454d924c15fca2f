"""What every page's fixtures share: the error that stops a build, and the finite-value checks.

A value reaches a trace only through these checks: NaN and infinities stop the
build with a :class:`FixtureError` naming the fixture and the value, and a
finite value is kept as the trace prints it, so a page and its trace never
disagree in a digit. A build error names the page's fixtures file that called
a check, not this file: the fixture runner passes over this file's frames.
"""

from __future__ import annotations

import numpy as np

from .trace import format_real, format_sci


class FixtureError(RuntimeError):
    """A fixture produced something that must never be published."""

    def __init__(self, fixture: str, message: str):
        self.fixture = fixture
        super().__init__(f"fixture {fixture!r}: {message}")


def finite(fixture: str, what: str, value) -> np.ndarray:
    """``value`` as a float64 array, after checking that no entry is NaN or infinite (NaN named first)."""
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        bad = "NaN" if np.any(np.isnan(array)) else "an infinity"
        raise FixtureError(fixture, f"produced {bad} in {what}; NaN and infinities are never written")
    return array


def printed_real(fixture: str, what: str, value) -> float:
    """A finite scalar as the trace prints it with six decimals."""
    return float(format_real(float(finite(fixture, what, value))))


def printed_sci(fixture: str, what: str, value) -> float:
    """A finite scalar as the trace prints it in scientific notation."""
    return float(format_sci(float(finite(fixture, what, value))))


def printed_vector(fixture: str, what: str, value) -> tuple[float, ...]:
    """Finite values, flattened, each as the trace prints it with six decimals."""
    return tuple(float(format_real(v)) for v in finite(fixture, what, value).reshape(-1))
