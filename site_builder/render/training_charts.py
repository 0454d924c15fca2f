"""What the charts of measured results share: a line of medians per arm, over its seeds' band, in either language.

The trained pages (degradation, pre-norm, initializations, skip patterns, the claims) each draw measured results
against a step, a block or a depth: one line per arm through the medians over the seeds, a shaded band from the
lowest to the highest seed, a legend entry that shows the arm's last median in the page's language, and one style
per arm on every chart of the page. :func:`measured_chart` draws such a chart from :class:`Curve` s, and
:func:`measured_ticks` gives a logarithmic axis that holds every band, median and bound the chart draws.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..trace.numbers import Measurement, bound, standing_median, stands
from .charts import (
    MEASURED,
    PLOT_HEIGHT,
    WIDTH,
    Axis,
    ChartError,
    Guide,
    Series,
    Value,
    Words,
    decade_ticks,
    in_language,
    language,
    line_chart,
)

__all__ = ["Curve", "in_language", "measured_chart", "measured_ticks", "step_curve"]


@dataclass(frozen=True)
class Curve:
    """One arm on a chart of measured results: its label, its style, its points ``(x key, y key)`` and the
    legend's words, ``label: MEDIAN`` of the point ``shown`` (the last one by default) followed by ``after``."""

    label: str
    style: str
    points: tuple[tuple[str, str], ...]
    shown: str = ""
    after: tuple[str | Value, ...] = ()

    def series(self, lang: str) -> Series:
        shown = self.shown or self.points[-1][1]
        words: Words = (f"{self.label}: ", Value(shown, MEASURED[language(lang)]), *self.after)
        return Series(words, self.points, self.style, band=True)


def step_curve(label: str, style: str, field: str, recorded: Sequence[int], record: str = "CURVE") -> Curve:
    """An arm's median at every recorded step: ``CURVE[STEP].step`` against ``CURVE[STEP].FIELD`` (``field`` as the
    trace text names it, ``plain-8``), its legend showing the median after the last step."""
    return Curve(label, style, tuple((f"{record}[{s}].step", f"{record}[{s}].{field}") for s in recorded))


def measured_ticks(measurements: Iterable[Measurement]) -> tuple[float, ...]:
    """Decade ticks for a logarithmic axis that holds every seed's band, every median and every bound drawn in
    place of a median (:func:`site_builder.render.charts.line_chart`), and no more."""
    values: list[float] = []
    for m in measurements:
        values += [m.low, m.high, m.median]
        if not stands(m) and standing_median(m)[0] == 0:
            values.append(float(bound(m)))
    return decade_ticks([v for v in values if v > 0])


def measured_chart(
    facts: Mapping[str, Any],
    lang: str,
    *,
    chart_id: str,
    title: str,
    description: str,
    x: Axis,
    y: Axis,
    curves: Sequence[Curve],
    others: Sequence[Series] = (),
    guides: Sequence[Guide] = (),
    width: float = WIDTH,
    height: float = PLOT_HEIGHT,
) -> str:
    """A line of medians over its seeds' band per curve (then ``others``, series of exact values), every arm in its
    own style, the legend's words and medians in ``lang``."""
    if len({c.style for c in curves}) != len(curves):
        raise ChartError(f"chart {chart_id}: two arms share a style, so only their labels would tell them apart")
    return line_chart(
        facts,
        chart_id=chart_id,
        title=title,
        description=description,
        x=x,
        y=y,
        series=(*(c.series(lang) for c in curves), *others),
        guides=guides,
        width=width,
        height=height,
        lang=language(lang),
    )
