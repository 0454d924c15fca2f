"""The identity-at-initialization chart: distance from the input against depth, both initializations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, line_chart

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.depth-ticks": tuple(r.depth for r in t.depths),
        "DERIVED.chart.deviation-ticks": decade_ticks([r.he_deviation for r in t.depths]),
    }


def _deviation_description(t: Trace) -> str:
    he = [r.he_deviation for r in t.depths]
    grows = all(a < b for a, b in zip(he, he[1:]))
    exact = all(r.zero_init_deviation == 0 for r in t.depths)
    return (
        "Distance between the stack's output and its input against the number of blocks, both axes "
        "logarithmic. Circles joined by a dashed line: He's ReLU scale on both layers, "
        + ("growing with depth. " if grows else "not growing at every step of depth. ")
        + "Squares on a row of their own below a break in the vertical axis: every block's second layer "
        + (
            "initialized to zero, where the distance is exactly zero at every depth, a value a logarithmic "
            "axis has no place for."
            if exact
            else "initialized to zero, where the distance is not zero at every depth."
        )
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    first, at = f"DEPTH[{t.depths[0].depth}]", f"DEPTH[{t.depths[-1].depth}]"
    return {
        "deviation": line_chart(
            facts,
            chart_id="identity-init-deviation",
            title="Distance of the output from the input against depth",
            description=_deviation_description(t),
            x=Axis("depth (residual blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis("distance of the output from the input", "DERIVED.chart.deviation-ticks", "pow10", kind="log"),
            series=(
                Series(
                    (
                        "He on both layers: ",
                        Value(f"{at}.he-deviation", "sci"),
                        " at depth ",
                        Value(f"{at}.depth", "count"),
                    ),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].he-deviation") for r in t.depths),
                    "learned",
                ),
                Series(
                    ("zero init: exactly ", Value(f"{first}.zero-init-deviation", "short"), " at every depth"),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].zero-init-deviation") for r in t.depths),
                    "identity",
                    floor=True,
                ),
            ),
        )
    }
