"""The claims chart: residual-stream norm against depth for three kinds of random branch."""

from __future__ import annotations

from typing import Any, Mapping

from site_builder.render.charts import Axis, Series, ValueLabel, exponent_ticks, line_chart
from .trace import FAMILIES, STREAM_DEPTHS, Trace

STYLE = {"independent": "identity", "tanh": "merge", "linear": "learned"}
SERIES_WORDS = {
    "independent": "squares, solid: branches that ignore the stream",
    "tanh": "triangles, dotted: tanh branches",
    "linear": "circles, dashed: linear branches",
}
NAMES = {"independent": "the branches that ignore the stream", "tanh": "the tanh branches", "linear": "the linear branches"}


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _stream_description(t: Trace) -> str:
    """Which families follow the square-root law, as the fitted exponents decided it."""
    follows = [NAMES[g.family] for g in t.growth if g.sqrt_law]
    departs = [NAMES[g.family] for g in t.growth if not g.sqrt_law]
    parts = ["Norm of the residual stream against the number of blocks, both axes logarithmic."]
    parts += [SERIES_WORDS[f].capitalize() + "." for f in FAMILIES]
    if follows:
        parts.append(f"{_join(follows).capitalize()} rise along a square-root slope.")
    if departs:
        parts.append(f"{_join(departs).capitalize()} do not follow the square-root law.")
    return " ".join(parts)


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
            description=_stream_description(t),
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
