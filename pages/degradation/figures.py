"""The degradation charts: the mean training loss against the step at each depth, and the final loss against depth."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, line_chart
from site_builder.render.training_charts import LOSS_AXIS, loss_chart, loss_series, loss_ticks

from .trace import COLUMNS, DEPTHS, RECORDED, STEPS, Trace

STYLE = {"plain": "learned", "residual": "identity"}
LOOK = {"plain": "circles joined by a dashed line", "residual": "squares joined by a solid line"}
LAST = f"CURVE[{STEPS}]"


def key(kind: str, depth: int) -> str:
    """The text name of a stack's field in CURVE and FINAL records: ``plain-32``."""
    return f"{kind}-{depth}"


def chart_facts(t: Trace) -> dict[str, Any]:
    return {**loss_ticks(t, COLUMNS, STEPS), "DERIVED.chart.depth-ticks": DEPTHS}


def _mean_final(t: Trace, kind: str, depth: int) -> float:
    return float(getattr(t.curves[-1], f"{kind}_{depth}"))


def _curves_description(t: Trace, depth: int) -> str:
    plain, residual = _mean_final(t, "plain", depth), _mean_final(t, "residual", depth)
    if plain == residual:
        ends = "After the last step both have the same mean loss."
    else:
        ends = f"After the last step the {'residual' if residual < plain else 'plain'} stack has the lower mean loss."
    return (
        "Mean training loss over the seeds against the training step, on a logarithmic scale. "
        f"Residual stack: {LOOK['residual']}. Plain stack: {LOOK['plain']}. {ends}"
    )


def _depth_description(t: Trace) -> str:
    words = []
    for effect in t.effects:
        how = "rises" if effect.deep > effect.shallow else "falls"
        words.append(f"the {effect.kind} stacks' final loss {how} from the shallowest depth to the deepest")
    return (
        "Mean final training loss against the number of blocks, both axes logarithmic. "
        f"Residual stacks: {LOOK['residual']}. Plain stacks: {LOOK['plain']}. "
        f"From left to right, {words[0]}, and {words[1]}."
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for depth in DEPTHS:
        out[f"curves-{depth}"] = loss_chart(
            facts,
            chart_id=f"degradation-curves-{depth}",
            title="Training loss of the plain and the residual stack against the step",
            description=_curves_description(t, depth),
            series=[loss_series(kind, key(kind, depth), STYLE[kind], RECORDED) for kind in ("residual", "plain")],
        )
    last = DEPTHS[-1]
    out["depth"] = line_chart(
        facts,
        chart_id="degradation-depth",
        title="Final training loss against depth, plain and residual",
        description=_depth_description(t),
        x=Axis("depth (blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
        y=LOSS_AXIS,
        series=tuple(
            Series(
                (
                    f"{kind}: ",
                    Value(f"{LAST}.{key(kind, last)}", "sci"),
                    " at ",
                    Value(f"START[{last},{kind}].depth", "count"),
                    " blocks",
                ),
                tuple((f"START[{d},{kind}].depth", f"{LAST}.{key(kind, d)}") for d in DEPTHS),
                STYLE[kind],
            )
            for kind in ("residual", "plain")
        ),
    )
    return out
