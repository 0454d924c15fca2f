"""The pre-norm charts: the gradient profile at initialization for each depth, and the training loss for each depth trained."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, line_chart, linear_ticks
from site_builder.render.training_charts import loss_chart, loss_series, loss_ticks

from .trace import COLUMNS, PROFILE_DEPTHS, RECORDED, STEPS, TRAIN_DEPTHS, Trace

STYLE = {"pre": "identity", "post": "merge"}
LOOK = {"pre": "squares joined by a solid line", "post": "triangles joined by a dotted line"}


def chart_facts(t: Trace) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "DERIVED.chart.gradient-ticks": decade_ticks([v for p in t.profiles for v in (p.pre, p.post)]),
        **loss_ticks(t, COLUMNS, STEPS),
    }
    for depth in PROFILE_DEPTHS:
        facts[f"DERIVED.chart.block-ticks-{depth}"] = linear_ticks(0, depth)
    return facts


def _profile_description(t: Trace, depth: int) -> str:
    rows = [p for p in t.profiles if p.depth == depth]
    words = []
    for layout in ("pre", "post"):
        first, last = getattr(rows[0], layout), getattr(rows[-1], layout)
        trend = "larger" if last > first else "smaller"
        words.append(f"in the {layout}-norm stack the last block's gradient is {trend} than the first block's")
    return (
        "Gradient norm reaching each block's weights at initialization against the block's position, counted from "
        f"the input, on a logarithmic scale. Pre-norm: {LOOK['pre']}. Post-norm: {LOOK['post']}. "
        f"{words[0].capitalize()}; {words[1]}."
    )


def _loss_description(t: Trace, depth: int) -> str:
    pre, post = getattr(t.curves[-1], f"pre_{depth}"), getattr(t.curves[-1], f"post_{depth}")
    lower = "pre-norm" if pre < post else "post-norm"
    return (
        "Mean training loss over the seeds against the training step, on a logarithmic scale. "
        f"Pre-norm: {LOOK['pre']}. Post-norm: {LOOK['post']}. After the last step the {lower} stack has the lower loss."
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for depth in PROFILE_DEPTHS:
        out[f"profile-{depth}"] = line_chart(
            facts,
            chart_id=f"prenorm-profile-{depth}",
            title="Gradient reaching each block at initialization, pre-norm and post-norm",
            description=_profile_description(t, depth),
            x=Axis("block (counted from the input)", f"DERIVED.chart.block-ticks-{depth}", "count"),
            y=Axis("gradient norm", "DERIVED.chart.gradient-ticks", "pow10", kind="log"),
            series=tuple(
                Series(
                    (f"{layout}-norm: ", Value(f"PROFILE[{depth},{depth}].{layout}", "sci"), " at the last block"),
                    tuple(
                        (f"PROFILE[{depth},{b}].block", f"PROFILE[{depth},{b}].{layout}") for b in range(1, depth + 1)
                    ),
                    STYLE[layout],
                )
                for layout in ("pre", "post")
            ),
        )
    for depth in TRAIN_DEPTHS:
        out[f"loss-{depth}"] = loss_chart(
            facts,
            chart_id=f"prenorm-loss-{depth}",
            title="Training loss against the step, pre-norm and post-norm",
            description=_loss_description(t, depth),
            series=[
                loss_series(f"{layout}-norm", f"{layout}-{depth}", STYLE[layout], RECORDED)
                for layout in ("pre", "post")
            ],
        )
    return out
