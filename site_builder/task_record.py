"""The spirals task as a trace records it.

Apart from :mod:`site_builder.tasks` (which trains, and so imports NumPy and
the engine) so that a page's trace declarations load without NumPy: rendering
a page from its cached fixture results never imports it.
"""

from __future__ import annotations

from .trace import Int, Real, record


@record("TASK")
class TaskRecord:
    """The task as a trace records it: the spirals' constants, and the loss of a model that has learned nothing."""

    points_per_arm: Int
    turns: Real
    noise: Real
    inner_radius: Real
    seed: Int
    chance_loss: Real  # ln 2: both classes get the same score
