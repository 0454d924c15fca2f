"""The claims charts: residual-stream norm against depth, one panel per scale.

Branches of bounded size keep the stream within a few hundred; linear
branches take it past ten to the thirty. One axis for both would flatten the
first two families into a line along the floor, so the linear family gets a
panel of its own. Both panels draw the two rates the claim names, the square
root of the depth and the depth itself, as guide lines from the first point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Guide, Series, Value, decade_ticks, line_chart, linear_ticks, log_ticks

from .trace import FAMILIES, LINEAR_LAW_EXPONENT, SQRT_LAW_EXPONENT, STREAM_DEPTHS, Trace

# Families whose branch output cannot grow with the stream (a fixed vector, a tanh), and the one whose can.
BOUNDED = ("independent", "tanh")
UNBOUNDED = tuple(f for f in FAMILIES if f not in BOUNDED)
STYLE = {"independent": "identity", "tanh": "merge", "linear": "learned"}
SERIES_WORDS = {
    "independent": "squares, solid: branches that ignore the stream",
    "tanh": "triangles, dotted: tanh branches",
    "linear": "circles, dashed: linear branches",
}
NAMES = {
    "independent": "the branches that ignore the stream",
    "tanh": "the tanh branches",
    "linear": "the linear branches",
}
# How the deepest norm is written in a legend: short where it stays readable, scientific where it does not.
LEGEND_FORMAT = {"independent": "short", "tanh": "short", "linear": "sci"}
GUIDE_WORDS = "Thin grey lines start at the first point and grow as the square root of the depth (dotted) and as the depth itself (dash-dotted)."


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _stream_description(t: Trace, families: tuple[str, ...]) -> str:
    """Which of ``families`` follow the square-root law, as the fitted slopes decided it."""
    growth = [g for g in t.growth if g.family in families]
    follows = [NAMES[g.family] for g in growth if g.sqrt_law]
    departs = [NAMES[g.family] for g in growth if not g.sqrt_law]
    parts = ["Norm of the residual stream against the number of blocks, both axes logarithmic."]
    parts += [SERIES_WORDS[f].capitalize() + "." for f in families]
    parts.append(GUIDE_WORDS)
    if follows:
        parts.append(f"{_join(follows).capitalize()} rise along the square-root guide.")
    if departs:
        parts.append(f"{_join(departs).capitalize()} do not follow the square-root law.")
    return " ".join(parts)


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.depth-ticks": STREAM_DEPTHS,
        "DERIVED.chart.bounded-norm-ticks": log_ticks([r.norm for r in t.streams if r.family in BOUNDED]),
        "DERIVED.chart.unbounded-norm-ticks": decade_ticks([r.norm for r in t.streams if r.family in UNBOUNDED]),
        "DERIVED.chart.slice-ticks": linear_ticks(t.slice[0].alpha, t.slice[-1].alpha),
        "DERIVED.chart.slice-loss-ticks": decade_ticks(
            [v for p in t.slice for v in (p.loss.low, p.loss.high) if v > 0]
        ),
    }


def _slice_description(t: Trace) -> str:
    """The loss along the slice, and whether it bends downward anywhere, as the second differences decided."""
    shape = (
        "It falls to the trained point and rises from it like a bowl, and further out it bends the other way."
        if t.landscape.bending_seeds
        else "It never bends downward, as a convex function would not."
    )
    return (
        "Median training loss over the seeds of the trained residual stacks at their trained weights plus a times "
        "one filter-normalized direction, against a, on a logarithmic scale; a shaded band spans the seeds from "
        f"the lowest to the highest. {shape}"
    )


def _slice(t: Trace, facts: Mapping[str, Any]) -> str:
    middle = f"SLICE[{len(t.slice) // 2}]"
    return line_chart(
        facts,
        chart_id="claims-loss-slice",
        title="Training loss along one line through the trained weights",
        description=_slice_description(t),
        x=Axis("a, the step along the direction", "DERIVED.chart.slice-ticks", "short"),
        y=Axis("training loss", "DERIVED.chart.slice-loss-ticks", "pow10", kind="log"),
        series=(
            Series(
                ("at the trained weights: ", Value(f"{middle}.loss", "measured")),
                tuple((f"SLICE[{p.point}].alpha", f"SLICE[{p.point}].loss") for p in t.slice),
                "identity",
                band=True,
            ),
        ),
    )


def _panel(t: Trace, facts: Mapping[str, Any], families: tuple[str, ...], chart_id: str, title: str, y: Axis) -> str:
    last, first = STREAM_DEPTHS[-1], STREAM_DEPTHS[0]
    anchor = f"STREAM[{families[0]},{first}]"
    return line_chart(
        facts,
        chart_id=chart_id,
        title=title,
        description=_stream_description(t, families),
        x=Axis("depth (residual blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
        y=y,
        series=tuple(
            Series(
                (
                    f"{family}: ",
                    Value(f"STREAM[{family},{last}].norm", LEGEND_FORMAT[family]),
                    " at depth ",
                    Value(f"STREAM[{family},{last}].depth", "count"),
                ),
                tuple((f"STREAM[{family},{d}].depth", f"STREAM[{family},{d}].norm") for d in STREAM_DEPTHS),
                STYLE[family],
            )
            for family in families
        ),
        guides=(
            Guide("grows as the square root of depth", SQRT_LAW_EXPONENT, f"{anchor}.depth", f"{anchor}.norm"),
            Guide(
                "grows in proportion to depth", LINEAR_LAW_EXPONENT, f"{anchor}.depth", f"{anchor}.norm", "guide-long"
            ),
        ),
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    return {
        "bounded": _panel(
            t,
            facts,
            BOUNDED,
            "claims-stream-bounded",
            "Residual-stream norm against depth, branches of bounded size",
            Axis("stream norm", "DERIVED.chart.bounded-norm-ticks", "short", kind="log"),
        ),
        "unbounded": _panel(
            t,
            facts,
            UNBOUNDED,
            "claims-stream-linear",
            "Residual-stream norm against depth, linear branches",
            Axis("stream norm", "DERIVED.chart.unbounded-norm-ticks", "pow10", kind="log"),
        ),
        "slice": _slice(t, facts),
    }
