"""What a page's fixtures hand to the build: :class:`Run`, and :class:`FixtureError` when they must stop it.

A page folder's ``fixtures.py`` defines ``run() -> Run``::

    def run() -> Run:
        x = parameter([2.0, -1.0], name="input")
        ...
        return Run(
            Trace(forward=Forward(input=x.data, branch=f.data, output=y.data), ...),
            derived={"DERIVED.ratio": float(a / b)},
        )

The trace is filled with full-precision values (NumPy arrays, floats); the
build writes it once, by the trace's declared rules, and that text is the only
place where values are rounded. A NaN or an infinity stops the build with the
field's key. ``derived`` holds the values a page shows that are not trace
fields, each computed from full precision (a ratio, a gap, a fit) and named
``DERIVED.…`` or ``MEASURED.…``: numbers, booleans, strings or tuples of them.
``report`` is the learner report's text, for a page that publishes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import SiteBuilderError


class FixtureError(SiteBuilderError):
    """A fixture produced something that must never be published, or a property it verifies failed."""

    def __init__(self, fixture: str, message: str):
        self.fixture = fixture
        super().__init__(f"fixture {fixture!r}: {message}")


@dataclass(frozen=True)
class Run:
    """One run of a page's fixtures: the trace at full precision, derived values, and the report if any."""

    trace: Any
    derived: Mapping[str, Any] = field(default_factory=dict)
    report: str | None = None


def check_constants(fixture: str, constants: Any, *names: str) -> None:
    """Stop ``fixture`` before it computes anything when one of the named constants is not a finite number."""
    import math

    for name in names:
        value = getattr(constants, name)
        if not math.isfinite(value):
            raise FixtureError(fixture, f"the constant {name} is {value!r}, not a finite number")


def finite(fixture: str, what: str, value: Any) -> Any:
    """``value`` as a float64 array, after checking that no entry is NaN or infinite (NaN named first).

    The build refuses NaN in any trace field anyway; call this where a fixture goes on computing with a value.
    """
    import numpy as np

    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        bad = "NaN" if np.any(np.isnan(array)) else "an infinity"
        raise FixtureError(fixture, f"produced {bad} in {what}; NaN and infinities are never written")
    return array
