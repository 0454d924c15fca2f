"""The path-expansion charts: how many paths of each length, and how much each length contributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, BarGroup, bar_chart, linear_ticks

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    norms = [k.sum_norm for k in t.lengths] + [k.mean_path_norm for k in t.lengths]
    return {
        "DERIVED.chart.lengths": tuple(k.length for k in t.lengths),
        "DERIVED.chart.count-ticks": linear_ticks(0, max(k.count for k in t.lengths)),
        "DERIVED.chart.norm-ticks": linear_ticks(0, max(norms)),
    }


def _single_path_summary(t: Trace) -> str:
    means = [k.mean_path_norm for k in t.lengths]
    if all(a > b for a, b in zip(means, means[1:])):
        return "A single path is weaker with every extra branch it passes through"
    return "A single path is not always weaker when it passes through one more branch"


def charts(t: Trace, facts: Mapping[str, Any]) -> dict[str, str]:
    lengths = [k.length for k in t.lengths]
    return {
        "counts": bar_chart(
            facts,
            chart_id="path-expansion-counts",
            title="Number of paths of each length",
            description=(
                "One bar per path length, from the path through no branch to the path through every branch. "
                "The counts are the binomial coefficients: most paths have a middle length."
            ),
            categories_key="DERIVED.chart.lengths",
            category_format="count",
            x_label="path length (branches passed through)",
            y=Axis("paths", "DERIVED.chart.count-ticks", "count"),
            groups=(
                BarGroup("paths of that length", tuple(f"LENGTH[{n}].count" for n in lengths), "count", "identity"),
            ),
            height=180,
        ),
        "contributions": bar_chart(
            facts,
            chart_id="path-expansion-contributions",
            title="Contribution of each path length to the Jacobian",
            description=(
                "For each path length, a solid bar for the Frobenius norm of the sum of all its paths and an "
                "outlined bar for the mean norm of a single path of that length. "
                + _single_path_summary(t)
                + "; the sum depends on how many paths there are and how they combine."
            ),
            categories_key="DERIVED.chart.lengths",
            category_format="count",
            x_label="path length (branches passed through)",
            y=Axis("Frobenius norm", "DERIVED.chart.norm-ticks", "short"),
            groups=(
                BarGroup(
                    "sum of the paths of that length", tuple(f"LENGTH[{n}].sum-norm" for n in lengths), None, "identity"
                ),
                BarGroup(
                    "one path of that length, on average",
                    tuple(f"LENGTH[{n}].mean-path-norm" for n in lengths),
                    None,
                    "learned",
                    filled=False,
                ),
            ),
        ),
    }
