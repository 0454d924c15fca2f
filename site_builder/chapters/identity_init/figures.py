"""The identity-at-initialization chart: distance from the input against depth, both initializations."""

from __future__ import annotations

from typing import Any, Mapping

from ..chart import Axis, Series, ValueLabel, exponent_ticks, line_chart
from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.depth-ticks": tuple(r.depth for r in t.depths),
        "DERIVED.chart.deviation-exponents": exponent_ticks([r.he_deviation for r in t.depths]),
    }


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    at = f"DEPTH[{t.depths[-1].depth}]"
    return {
        "deviation": line_chart(
            facts,
            chart_id="identity-init-deviation",
            title="Distance of the output from the input against depth",
            description=(
                "Distance between the stack's output and its input against the number of blocks, both axes "
                "logarithmic. Circles joined by a dashed line: He initialization, growing with depth. Squares "
                "along the floor of the chart: every block's second layer initialized to zero, where the "
                "distance is exactly zero at every depth, which a logarithmic axis cannot place, so it is drawn "
                "on the floor."
            ),
            x=Axis("depth (residual blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis("log₁₀ of the distance from the input", "DERIVED.chart.deviation-exponents", "int", kind="exponent"),
            series=(
                Series("He init", tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].he-deviation") for r in t.depths), "learned"),
                Series(
                    "zero init",
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].zero-init-deviation") for r in t.depths),
                    "identity",
                    floor=True,
                ),
            ),
            labels=(ValueLabel(f"{at}.he-deviation", "sci", f"{at}.depth", f"{at}.he-deviation", dx=-8, dy=-4, anchor="end"),),
        )
    }
