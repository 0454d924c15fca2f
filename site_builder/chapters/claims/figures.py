"""The claims chart: residual-stream norm against depth for three kinds of random branch."""

from __future__ import annotations

from typing import Any, Mapping

from ..chart import Axis, Series, ValueLabel, exponent_ticks, line_chart
from .trace import FAMILIES, STREAM_DEPTHS, Trace

STYLE = {"independent": "identity", "tanh": "merge", "linear": "learned"}


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.depth-ticks": STREAM_DEPTHS,
        "DERIVED.chart.norm-exponents": exponent_ticks([r.norm for r in t.streams]),
    }


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    last = STREAM_DEPTHS[-1]
    return {
        "stream": line_chart(
            facts,
            chart_id="claims-stream-growth",
            title="Residual-stream norm against depth for three kinds of branch",
            description=(
                "Norm of the residual stream against the number of blocks, both axes logarithmic. Squares, solid: "
                "branches that ignore the stream. Triangles, dotted: tanh branches. Circles, dashed: linear "
                "branches. The first two rise along a square-root slope; the linear branches grow geometrically."
            ),
            x=Axis("depth (residual blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis("log₁₀ of the stream norm", "DERIVED.chart.norm-exponents", "int", kind="exponent"),
            series=tuple(
                Series(family, tuple((f"STREAM[{family},{d}].depth", f"STREAM[{family},{d}].norm") for d in STREAM_DEPTHS), STYLE[family])
                for family in FAMILIES
            ),
            labels=tuple(
                ValueLabel(f"STREAM[{family},{last}].norm", "sci", f"STREAM[{family},{last}].depth", f"STREAM[{family},{last}].norm",
                           dx=-8, dy=dy, anchor="end")
                for family, dy in (("independent", -10), ("tanh", 16), ("linear", 4))
            ),
        )
    }
