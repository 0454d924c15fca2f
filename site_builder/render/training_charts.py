"""What the training pages' charts share: the mean training loss of every stack against the step.

Each training page's trace holds CURVE records, one per recorded step, with one loss field per stack (the mean over
the seeds), and FINAL records, one per seed. A page's chart of the loss against the step is one series per stack
read from the CURVE records, over the step ticks and the decade ticks of every loss the trace holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .charts import Axis, Series, Value, decade_ticks, line_chart, linear_ticks

STEP_AXIS = Axis("training step", "DERIVED.chart.step-ticks", "count")
LOSS_AXIS = Axis("training loss", "DERIVED.chart.loss-ticks", "pow10", kind="log")


def loss_ticks(trace: Any, columns: Sequence[str], steps: int) -> dict[str, Any]:
    """The step ticks and the loss ticks, the latter spanning every loss of ``trace``'s CURVE and FINAL records."""
    losses = [getattr(r, name) for r in (*trace.curves, *trace.finals) for name in columns]
    return {
        "DERIVED.chart.step-ticks": linear_ticks(0, steps),
        "DERIVED.chart.loss-ticks": decade_ticks(losses),
    }


def loss_series(label: str, field: str, style: str, recorded: Sequence[int]) -> Series:
    """One stack's mean loss (``field`` as the text names it: ``plain-32``) at every recorded step, labelled with
    its loss after the last step."""
    return Series(
        (f"{label}: ", Value(f"CURVE[{recorded[-1]}].{field}", "sci"), " at the end"),
        tuple((f"CURVE[{s}].step", f"CURVE[{s}].{field}") for s in recorded),
        style,
    )


def loss_chart(
    facts: Mapping[str, Any], *, chart_id: str, title: str, description: str, series: Sequence[Series]
) -> str:
    """The training loss against the step, on a logarithmic scale, one series per stack."""
    return line_chart(
        facts, chart_id=chart_id, title=title, description=description, x=STEP_AXIS, y=LOSS_AXIS, series=tuple(series)
    )
