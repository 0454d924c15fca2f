"""What every page's fixtures share: the error that stops a build.

Each page checks its values where it computes them and raises there, so a
build error names the page's own fixtures file; the wording of the error is
shared.
"""

from __future__ import annotations

import numpy as np


class FixtureError(RuntimeError):
    """A fixture produced something that must never be published."""

    def __init__(self, fixture: str, message: str):
        self.fixture = fixture
        super().__init__(f"fixture {fixture!r}: {message}")

    @classmethod
    def non_finite(cls, fixture: str, what: str, value) -> FixtureError:
        """The error for ``what`` holding NaN or an infinity (NaN named first)."""
        bad = "NaN" if np.any(np.isnan(value)) else "an infinity"
        return cls(fixture, f"produced {bad} in {what}; NaN and infinities are never written")
