"""The initialization charts: growth through the stack against depth, and the training loss of every scheme."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, BarGroup, ChartError, Series, Value, bar_chart, decade_ticks, line_chart
from site_builder.render.training_charts import LOSS_AXIS, loss_chart, loss_series, loss_ticks

from .trace import COLUMNS, DEPTHS, RECORDED, SCHEMES, STEPS, Trace, column

# Schemes whose growth equals zero-last's at every depth are drawn as one line (the table lists each).
GROWTH_STYLE = {"he": "plain", "scaled-last": "learned", "zero-last": "identity"}
CURVE_GROUPS = {
    "scaled": (("zero-last", "identity"), ("he", "plain"), ("scaled-last", "learned")),
    "identity": (("zero-last", "identity"), ("rezero", "merge"), ("fixup", "learned")),
}
LOOK = {
    "identity": "squares joined by a solid line",
    "plain": "diamonds joined by a dotted line",
    "learned": "circles joined by a dashed line",
    "merge": "triangles joined by a dotted line",
}


def chart_facts(t: Trace) -> dict[str, Any]:
    growth = [v for s in t.starts for v in (s.forward, s.backward)]
    return {
        "DERIVED.chart.depth-ticks": DEPTHS,
        "DERIVED.chart.growth-ticks": decade_ticks(growth),
        **loss_ticks(t, COLUMNS, STEPS),
    }


def same_as_zero_last(t: Trace, scheme: str) -> bool:
    """Whether a scheme's growth equals zero-last's, both ways, at every depth."""
    rows = {(s.scheme, s.depth): s for s in t.starts}
    return all(
        (rows[scheme, d].forward, rows[scheme, d].backward)
        == (rows["zero-last", d].forward, rows["zero-last", d].backward)
        for d in DEPTHS
    )


def hidden_under_zero_last(t: Trace) -> list[str]:
    """The schemes not drawn on the growth charts because their values equal zero-last's exactly."""
    return [s for s in SCHEMES if s not in GROWTH_STYLE and same_as_zero_last(t, s)]


def _growth_description(t: Trace, field: str) -> str:
    rows = {(s.scheme, s.depth): getattr(s, field) for s in t.starts}
    he_rises = rows["he", DEPTHS[-1]] > rows["he", DEPTHS[0]]
    what = "the stream's size" if field == "forward" else "a gradient's size"
    return (
        f"How many times the stack multiplies {what}, against the number of blocks, both axes logarithmic. "
        f"he: {LOOK['plain']}. scaled-last: {LOOK['learned']}. zero-last: {LOOK['identity']}"
        + "".join(f"; {s} has exactly the same values" for s in hidden_under_zero_last(t))
        + f". The he line {'rises' if he_rises else 'does not rise'} with depth."
    )


def _curves_description(t: Trace, group: str) -> str:
    last = t.curves[-1]
    lowest = min((scheme for scheme, _ in CURVE_GROUPS[group]), key=lambda s: getattr(last, column(s)))
    looks = ". ".join(f"{scheme}: {LOOK[style]}" for scheme, style in CURVE_GROUPS[group])
    return (
        "Mean training loss over the seeds against the training step, on a logarithmic scale. "
        f"{looks}. After the last step {lowest} has the lowest of these losses."
    )


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    hidden = [s for s in SCHEMES if s not in GROWTH_STYLE]
    if hidden != hidden_under_zero_last(t):
        raise ChartError(f"the growth charts draw {', '.join(hidden)} under zero-last's line, but their values differ")
    out: dict[str, str] = {}
    for field, words in (("forward", "the stream"), ("backward", "a gradient")):
        out[field] = line_chart(
            facts,
            chart_id=f"init-schemes-{field}",
            title=f"How much the stack multiplies {words} at initialization, against depth",
            description=_growth_description(t, field),
            x=Axis("depth (blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis("factor", "DERIVED.chart.growth-ticks", "pow10", kind="log"),
            series=tuple(
                Series(
                    (
                        f"{scheme}: ",
                        Value(f"START[{scheme},{DEPTHS[-1]}].{field}", "sci"),
                        " at ",
                        Value(f"START[{scheme},{DEPTHS[-1]}].depth", "count"),
                        " blocks",
                    ),
                    tuple((f"START[{scheme},{d}].depth", f"START[{scheme},{d}].{field}") for d in DEPTHS),
                    style,
                )
                for scheme, style in GROWTH_STYLE.items()
            ),
        )
    for group, members in CURVE_GROUPS.items():
        out[f"curves-{group}"] = loss_chart(
            facts,
            chart_id=f"init-schemes-curves-{group}",
            title="Training loss against the step for three initializations",
            description=_curves_description(t, group),
            series=[loss_series(scheme, scheme, style, RECORDED) for scheme, style in members],
        )
    out["final"] = bar_chart(
        facts,
        chart_id="init-schemes-final",
        title="Mean training loss after the last step, scheme by scheme",
        description=(
            "One bar per initialization scheme, its height the mean training loss over the seeds after the last "
            "step, on a logarithmic scale; the value is written above each bar. Lowest first: "
            + ", then ".join(sorted(SCHEMES, key=lambda s: getattr(t.curves[-1], column(s))))
            + "."
        ),
        categories_key="DERIVED.schemes",
        category_format="name",
        x_label="initialization",
        y=LOSS_AXIS,
        groups=(
            BarGroup("mean loss over the seeds", tuple(f"CURVE[{STEPS}].{s}" for s in SCHEMES), "short", "identity"),
        ),
    )
    return out
