"""The deep-stack chart: input-gradient norm against depth, plain and residual, on a log axis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Reference, Series, Value, decade_ticks, line_chart, linear_ticks

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    """The axes' ticks, derived from the data so that every point fits."""
    norms = [r.plain_norm for r in t.depths] + [r.residual_norm for r in t.depths] + [t.config.upstream_norm]
    return {
        "DERIVED.chart.depth-ticks": linear_ticks(0, max(r.depth for r in t.depths)),
        "DERIVED.chart.norm-ticks": decade_ticks(norms),
    }


def _gradient_summary(t: Trace) -> str:
    """What the chart shows, said only as far as the measured norms support it."""
    first, last = t.depths[0], t.depths[-1]
    plain = (
        "The plain stack's norm falls as the stack deepens"
        if last.plain_norm < first.plain_norm
        else "The plain stack's norm does not fall overall"
    )
    floor = min(r.residual_norm for r in t.depths) >= t.config.upstream_norm
    residual = (
        "the residual stack stays at or above the upstream norm at every depth shown."
        if floor
        else "the residual stack drops below the upstream norm at some depth."
    )
    return f"{plain}; {residual}"


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    at = f"DEPTH[{t.depths[-1].depth}]"
    return {
        "gradient": line_chart(
            facts,
            chart_id="deep-stack-gradient",
            title="Gradient norm at the input against depth, plain and residual",
            description=(
                "Input-gradient norm against the number of tanh layers, on a logarithmic scale. Squares joined by "
                "a solid line: the residual stack. Circles joined by a dashed line: the plain stack. A dotted "
                "line marks the norm of the upstream gradient. " + _gradient_summary(t)
            ),
            x=Axis("depth (tanh layers)", "DERIVED.chart.depth-ticks", "count"),
            y=Axis("input-gradient norm", "DERIVED.chart.norm-ticks", "pow10", kind="log"),
            series=(
                Series(
                    (
                        "residual stack: ",
                        Value(f"{at}.residual-norm", "six"),
                        " at depth ",
                        Value(f"{at}.depth", "count"),
                    ),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].residual-norm") for r in t.depths),
                    "identity",
                ),
                Series(
                    ("plain stack: ", Value(f"{at}.plain-norm", "sci"), " at depth ", Value(f"{at}.depth", "count")),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].plain-norm") for r in t.depths),
                    "learned",
                ),
            ),
            references=(Reference("CONFIG.upstream-norm", "short", "upstream gradient's norm"),),
        )
    }
