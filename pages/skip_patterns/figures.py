"""The skip-pattern charts: weights against depth, a gradient's growth against depth, and the training loss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, line_chart
from site_builder.render.training_charts import loss_chart, loss_series, loss_ticks

from .trace import DEPTHS, PATTERNS, RECORDED, STEPS, Trace

STYLE = {"residual": "identity", "highway": "merge", "dense": "learned"}
LOOK = {
    "residual": "squares joined by a solid line",
    "highway": "triangles joined by a dotted line",
    "dense": "circles joined by a dashed line",
}
CARRY = "carry power"


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.parameter-ticks": decade_ticks([s.parameters for s in t.shapes]),
        "DERIVED.chart.growth-ticks": decade_ticks([s.backward for s in t.shapes]),
        **loss_ticks(t, PATTERNS, STEPS),
    }


def _series(field: str, fmt: str) -> tuple[Series, ...]:
    deep = DEPTHS[-1]
    return tuple(
        Series(
            (
                f"{p}: ",
                Value(f"SHAPE[{p},{deep}].{field}", fmt),
                " at ",
                Value(f"SHAPE[{p},{deep}].depth", "count"),
                " blocks",
            ),
            tuple((f"SHAPE[{p},{d}].depth", f"SHAPE[{p},{d}].{field}") for d in DEPTHS),
            STYLE[p],
        )
        for p in PATTERNS
    )


def _looks() -> str:
    return " ".join(f"{p.capitalize()}: {LOOK[p]}." for p in PATTERNS)


def _parameters_description(t: Trace) -> str:
    rows = {(s.pattern, s.depth): s.parameters for s in t.shapes}
    first, last = DEPTHS[0], DEPTHS[-1]
    fastest = max(PATTERNS, key=lambda p: rows[p, last] / rows[p, first])
    return (
        f"Weights in the blocks against the number of blocks, both axes logarithmic. {_looks()} "
        f"From the shallowest stack to the deepest, the {fastest} stack's count grows the most."
    )


def _growth_description(t: Trace) -> str:
    rows = {(s.pattern, s.depth): s.backward for s in t.shapes}
    falls = [p for p in PATTERNS if rows[p, DEPTHS[-1]] < rows[p, DEPTHS[0]] / 2]
    said = (
        f"The {' and '.join(falls)} stack's factor falls with depth."
        if falls
        else "No stack's factor falls by half with depth."
    )
    return (
        "How many times each stack multiplies a gradient on its way down at initialization, against the number of "
        f"blocks, both axes logarithmic. {_looks()} Diamonds joined by a dotted line, carry power: the highway gate's carry at initialization raised to the number of blocks. {said}"
    )


def _loss_description(t: Trace) -> str:
    last = t.curves[-1]
    lowest = min(PATTERNS, key=lambda p: getattr(last, p))
    return (
        f"Mean training loss over the seeds against the training step, on a logarithmic scale. {_looks()} "
        f"After the last step the {lowest} stack has the lowest loss."
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    depth = Axis("depth (blocks)", "DERIVED.chart.depths", "count", kind="log")
    carry = Series(
        (
            f"{CARRY}: ",
            Value(f"DERIVED.depth-{DEPTHS[-1]}.carry-power", "sci"),
            " at ",
            Value(f"SHAPE[highway,{DEPTHS[-1]}].depth", "count"),
            " blocks",
        ),
        tuple((f"SHAPE[highway,{d}].depth", f"DERIVED.depth-{d}.carry-power") for d in DEPTHS),
        "plain",
    )
    return {
        "parameters": line_chart(
            facts,
            chart_id="skip-patterns-parameters",
            title="Weights in the blocks against depth",
            description=_parameters_description(t),
            x=depth,
            y=Axis("weights", "DERIVED.chart.parameter-ticks", "pow10", kind="log"),
            series=_series("parameters", "count"),
        ),
        "growth": line_chart(
            facts,
            chart_id="skip-patterns-growth",
            title="How much each stack multiplies a gradient at initialization, against depth",
            description=_growth_description(t),
            x=depth,
            y=Axis("factor", "DERIVED.chart.growth-ticks", "pow10", kind="log"),
            series=(*_series("backward", "sci"), carry),
        ),
        "loss": loss_chart(
            facts,
            chart_id="skip-patterns-loss",
            title="Training loss against the step, three skip patterns",
            description=_loss_description(t),
            series=[loss_series(p, p, STYLE[p], RECORDED) for p in PATTERNS],
        ),
    }
