"""The degradation charts: every arm's training loss against the step at each depth, its seeds' range as a band."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Series, Value, decade_ticks, linear_ticks
from site_builder.render.training_charts import loss_chart

from .trace import ARMS, COLUMNS, DEPTHS, RECORDED, STEPS, Trace

STYLE = {"plain": "plain", "normalized-plain": "merge", "residual": "learned", "scaled-residual": "identity"}
LOOK = {
    "plain": "diamonds joined by a dotted line",
    "normalized-plain": "triangles joined by a dotted line",
    "residual": "circles joined by a dashed line",
    "scaled-residual": "squares joined by a solid line",
}
LABEL = {
    "plain": "plain",
    "normalized-plain": "normalized plain",
    "residual": "residual",
    "scaled-residual": "scaled residual",
}


SHORT = {"plain": "plain", "normalized-plain": "normalized", "residual": "residual", "scaled-residual": "scaled"}


def key(arm: str, depth: int) -> str:
    """The text name of an arm's field in CURVE records: ``normalized-plain-12``."""
    return f"{arm}-{depth}"


def chart_facts(t: Trace) -> dict[str, Any]:
    ends = [v for r in t.curves for name in COLUMNS for m in [getattr(r, name)] for v in (m.low, m.high) if v > 0]
    return {"DERIVED.chart.step-ticks": linear_ticks(0, STEPS), "DERIVED.chart.loss-ticks": decade_ticks(ends)}


def _description(t: Trace, depth: int) -> str:
    looks = " ".join(f"{LABEL[arm].capitalize()}: {LOOK[arm]}." for arm in ARMS)
    ranked = sorted(ARMS, key=lambda arm: getattr(t.curves[-1], key(arm, depth).replace("-", "_")).median)
    return (
        "Median training loss over the seeds against the training step, on a logarithmic scale, each stack at its "
        f"own best learning rate; a shaded band spans the seeds from the lowest to the highest; the legend gives "
        f"each median after the last step. {looks} "
        f"After the last step the lowest median belongs to the {LABEL[ranked[0]]} stack and the highest to the "
        f"{LABEL[ranked[-1]]} stack; the table below says which differences exceed the spread."
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for depth in DEPTHS:
        series = [
            Series(
                (f"{SHORT[arm]}: ", Value(f"CURVE[{STEPS}].{key(arm, depth)}", "measured")),
                tuple((f"CURVE[{s}].step", f"CURVE[{s}].{key(arm, depth)}") for s in RECORDED),
                STYLE[arm],
                band=True,
            )
            for arm in ARMS
        ]
        out[f"curves-{depth}"] = loss_chart(
            facts,
            chart_id=f"degradation-curves-{depth}",
            title="Training loss of four stacks against the step",
            description=_description(t, depth),
            series=series,
        )
    return out
