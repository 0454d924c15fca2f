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
from site_builder.render.training_charts import Curve, measured_chart, measured_ticks

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
# The same words in Russian, for the Russian page's charts.
SERIES_WORDS_RU = {
    "independent": "квадраты, сплошная: ветви, не читающие поток",
    "tanh": "треугольники, пунктир: ветви с tanh",
    "linear": "круги, штрихи: линейные ветви",
}
NAMES_RU = {
    "independent": "ветви, не читающие поток,",
    "tanh": "ветви с tanh",
    "linear": "линейные ветви",
}
GUIDE_WORDS_RU = (
    "Тонкие серые линии начинаются в первой точке и растут как квадратный корень из глубины (пунктир) "
    "и пропорционально глубине (штрихпунктир)."
)
RU = {
    "stream": "Норма остаточного потока в зависимости от числа блоков, обе оси логарифмические.",
    "follow": "растут вдоль направляющей квадратного корня.",
    "depart": "не следуют закону квадратного корня.",
    "bowl": "Она падает к обученной точке и поднимается от неё, как чаша, а дальше изгибается в другую сторону.",
    "convex": "Она нигде не изгибается вниз, как и выпуклая функция.",
    "slice": "Медиана обучающих потерь по сидам для обученных остаточных стеков в их обученных весах плюс a, "
    "умноженное на одно направление, нормированное по фильтрам, в зависимости от a, в логарифмическом масштабе; "
    "закрашенная полоса охватывает сиды от наименьшего до наибольшего.",
    "slice-title": "Обучающие потери вдоль одной прямой через обученные веса",
    "slice-x": "a, шаг вдоль направления",
    "slice-y": "обучающие потери",
    "slice-legend": "в обученных весах",
    "depth-x": "глубина (остаточные блоки)",
    "at-depth": " на глубине ",
    "sqrt-guide": "растёт как корень из глубины",
    "linear-guide": "растёт пропорционально глубине",
    "norm-y": "норма потока",
    "bounded-title": "Норма остаточного потока против глубины, ветви ограниченного размера",
    "linear-title": "Норма остаточного потока против глубины, линейные ветви",
}

# How the deepest norm is written in a legend: short where it stays readable, scientific where it does not.
LEGEND_FORMAT = {"independent": "short", "tanh": "short", "linear": "sci"}
GUIDE_WORDS = "Thin grey lines start at the first point and grow as the square root of the depth (dotted) and as the depth itself (dash-dotted)."


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _join_ru(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " и " + names[-1]


def _stream_description(t: Trace, families: tuple[str, ...], lang: str = "en") -> str:
    """Which of ``families`` follow the square-root law, as the fitted slopes decided it."""
    growth = [g for g in t.growth if g.family in families]
    names = NAMES_RU if lang == "ru" else NAMES
    follows = [names[g.family] for g in growth if g.sqrt_law]
    departs = [names[g.family] for g in growth if not g.sqrt_law]
    if lang == "ru":
        parts = [RU["stream"], *(SERIES_WORDS_RU[f].capitalize() + "." for f in families), GUIDE_WORDS_RU]
        if follows:
            parts.append(f"{_join_ru(follows).capitalize().rstrip(',')} {RU['follow']}")
        if departs:
            parts.append(f"{_join_ru(departs).capitalize().rstrip(',')} {RU['depart']}")
        return " ".join(parts)
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
        "DERIVED.chart.slice-loss-ticks": measured_ticks(p.loss for p in t.slice),
    }


def _slice_description(t: Trace, lang: str = "en") -> str:
    """The loss along the slice, and whether it bends downward anywhere, as the second differences decided."""
    if lang == "ru":
        return f"{RU['slice']} {RU['bowl'] if t.landscape.bending_seeds else RU['convex']}"
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


def _slice(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> str:
    middle = f"SLICE[{len(t.slice) // 2}]"
    ru = lang == "ru"
    return measured_chart(
        facts,
        lang,
        chart_id="claims-loss-slice",
        title=RU["slice-title"] if ru else "Training loss along one line through the trained weights",
        description=_slice_description(t, lang),
        x=Axis(RU["slice-x"] if ru else "a, the step along the direction", "DERIVED.chart.slice-ticks", "short"),
        y=Axis(RU["slice-y"] if ru else "training loss", "DERIVED.chart.slice-loss-ticks", "pow10", kind="log"),
        curves=[
            Curve(
                RU["slice-legend"] if ru else "at the trained weights",
                "identity",
                tuple((f"SLICE[{p.point}].alpha", f"SLICE[{p.point}].loss") for p in t.slice),
                shown=f"{middle}.loss",
            )
        ],
    )


def _panel(
    t: Trace, facts: Mapping[str, Any], families: tuple[str, ...], chart_id: str, title: str, y: Axis, lang: str
) -> str:
    last, first = STREAM_DEPTHS[-1], STREAM_DEPTHS[0]
    anchor = f"STREAM[{families[0]},{first}]"
    ru = lang == "ru"
    return line_chart(
        facts,
        chart_id=chart_id,
        title=title,
        description=_stream_description(t, families, lang),
        x=Axis(RU["depth-x"] if ru else "depth (residual blocks)", "DERIVED.chart.depth-ticks", "count", kind="log"),
        y=y,
        series=tuple(
            Series(
                (
                    f"{family}: ",
                    Value(f"STREAM[{family},{last}].norm", LEGEND_FORMAT[family]),
                    RU["at-depth"] if ru else " at depth ",
                    Value(f"STREAM[{family},{last}].depth", "count"),
                ),
                tuple((f"STREAM[{family},{d}].depth", f"STREAM[{family},{d}].norm") for d in STREAM_DEPTHS),
                STYLE[family],
            )
            for family in families
        ),
        guides=(
            Guide(
                RU["sqrt-guide"] if ru else "grows as the square root of depth",
                SQRT_LAW_EXPONENT,
                f"{anchor}.depth",
                f"{anchor}.norm",
            ),
            Guide(
                RU["linear-guide"] if ru else "grows in proportion to depth",
                LINEAR_LAW_EXPONENT,
                f"{anchor}.depth",
                f"{anchor}.norm",
                "guide-long",
            ),
        ),
    )


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    ru = lang == "ru"
    norm = RU["norm-y"] if ru else "stream norm"
    return {
        "bounded": _panel(
            t,
            facts,
            BOUNDED,
            "claims-stream-bounded",
            RU["bounded-title"] if ru else "Residual-stream norm against depth, branches of bounded size",
            Axis(norm, "DERIVED.chart.bounded-norm-ticks", "short", kind="log"),
            lang,
        ),
        "unbounded": _panel(
            t,
            facts,
            UNBOUNDED,
            "claims-stream-linear",
            RU["linear-title"] if ru else "Residual-stream norm against depth, linear branches",
            Axis(norm, "DERIVED.chart.unbounded-norm-ticks", "pow10", kind="log"),
            lang,
        ),
        "slice": _slice(t, facts, lang),
    }
