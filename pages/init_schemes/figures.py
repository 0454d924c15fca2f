"""The initialization charts: growth through the stack against depth, and the training loss of every scheme.

One style per scheme on every chart of the page, in both languages. The charts' words are English or Russian
(``lang``); their numbers are the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, ChartError, Series, decade_ticks, line_chart, linear_ticks
from site_builder.render.training_charts import in_language, measured_chart, measured_ticks, step_curve

from .trace import DEPTHS, RECORDED, SCHEMES, STEPS, Trace, column

# Every scheme keeps its style on every chart. ReZero and Fixup grow exactly as zero-last does at initialization
# (every branch starts at zero), so the growth charts draw them under its line; the table lists each.
STYLE = {"he": "plain", "zero-last": "identity", "rezero": "merge", "fixup": "alternate", "scaled-last": "learned"}
GROWTH = ("he", "scaled-last", "zero-last")
CURVE_GROUPS = {"far": ("he", "scaled-last", "zero-last"), "identity": ("zero-last", "rezero", "fixup")}

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "name": {
            "he": "He initialization",
            "zero-last": "zero last layer",
            "rezero": "ReZero",
            "fixup": "Fixup",
            "scaled-last": "scaled last layer",
        },
        "look": {
            "plain": "diamonds joined by a dotted line",
            "identity": "squares joined by a solid line",
            "merge": "triangles joined by a dotted line",
            "alternate": "downward triangles joined by a dash-dotted line",
            "learned": "circles joined by a dashed line",
        },
        "same": "; {s} has exactly the same values",
        "growth-title": "How much the stack multiplies {what} at initialization, against depth",
        "what": {"forward": "the stream", "backward": "a gradient"},
        "growth-description": "How many times the stack multiplies {what}, against the number of blocks, both "
        "axes logarithmic. {looks}{same}. The line of He initialization {rises} with depth.",
        "rises": ("rises", "does not rise"),
        "depth-axis": "depth (blocks)",
        "factor-axis": "factor",
        "step-axis": "training step",
        "loss-axis": "training loss",
        "curves-title": "Training loss against the step for three initializations",
        "curves-description": "Median training loss over the seeds against the training step, on a logarithmic "
        "scale, each scheme at its own best learning rate; a shaded band spans the seeds from the lowest to the "
        "highest; the legend gives each median after the last step. {looks}. After the last step the lowest "
        "median of these three belongs to {lowest}; the table below says which differences exceed the spread.",
    },
    "ru": {
        "name": {
            "he": "инициализация He",
            "zero-last": "нулевой последний слой",
            "rezero": "ReZero",
            "fixup": "Fixup",
            "scaled-last": "уменьшенный последний слой",
        },
        "look": {
            "plain": "ромбы, соединённые пунктиром",
            "identity": "квадраты, соединённые сплошной линией",
            "merge": "треугольники, соединённые пунктиром",
            "alternate": "треугольники вершиной вниз, соединённые штрихпунктиром",
            "learned": "круги, соединённые штриховой линией",
        },
        "same": "; у схемы {s} в точности те же значения",
        "growth-title": "Во сколько раз стек при инициализации умножает {what}, в зависимости от глубины",
        "what": {"forward": "поток", "backward": "градиент"},
        "growth-description": "Во сколько раз стек умножает {what}, в зависимости от числа блоков; обе оси "
        "логарифмические. {looks}{same}. Линия инициализации He {rises} с глубиной.",
        "rises": ("растёт", "не растёт"),
        "depth-axis": "глубина (блоков)",
        "factor-axis": "множитель",
        "step-axis": "шаг обучения",
        "loss-axis": "потери на обучении",
        "curves-title": "Потери на обучении по шагам для трёх инициализаций",
        "curves-description": "Медиана потерь на обучении по сидам в зависимости от шага, в логарифмическом "
        "масштабе, каждая схема при своей лучшей скорости обучения; закрашенная полоса охватывает сиды от "
        "наименьшего до наибольшего; в легенде — медиана каждой схемы после последнего шага. {looks}. После "
        "последнего шага наименьшая медиана из этих трёх у схемы «{lowest}»; таблица ниже говорит, какие "
        "различия выходят за разброс.",
    },
}


def _field(scheme: str) -> str:
    """The text name of a scheme's field in CURVE records: ``zero-last``."""
    return scheme


def chart_facts(t: Trace) -> dict[str, Any]:
    growth = [v for s in t.starts for v in (s.forward, s.backward)]
    return {
        "DERIVED.chart.depth-ticks": DEPTHS,
        # A decade below the smallest factor: the schemes that start at the identity multiply by exactly one, and
        # an axis whose floor were one would draw their lines on top of the axis itself.
        "DERIVED.chart.growth-ticks": decade_ticks([*growth, min(growth) / 10]),
        "DERIVED.chart.step-ticks": linear_ticks(0, STEPS),
        **{
            f"DERIVED.chart.loss-ticks-{g}": measured_ticks(getattr(r, column(s)) for r in t.curves for s in members)
            for g, members in CURVE_GROUPS.items()
        },
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
    return [s for s in SCHEMES if s not in GROWTH and same_as_zero_last(t, s)]


def _looks(w: Mapping[str, Any], schemes: tuple[str, ...]) -> str:
    return ". ".join(f"{w['name'][s]}: {w['look'][STYLE[s]]}" for s in schemes)


def _growth_description(t: Trace, field: str, lang: str = "en") -> str:
    w = in_language(WORDS, lang)
    rows = {(s.scheme, s.depth): getattr(s, field) for s in t.starts}
    rises = rows["he", DEPTHS[-1]] > rows["he", DEPTHS[0]]
    return w["growth-description"].format(
        what=w["what"][field],
        looks=_looks(w, GROWTH),
        same="".join(w["same"].format(s=w["name"][s]) for s in hidden_under_zero_last(t)),
        rises=w["rises"][0 if rises else 1],
    )


def _curves_description(t: Trace, group: str, lang: str = "en") -> str:
    w = in_language(WORDS, lang)
    last = t.curves[-1]
    lowest = min(CURVE_GROUPS[group], key=lambda s: getattr(last, column(s)).median)
    return w["curves-description"].format(looks=_looks(w, CURVE_GROUPS[group]), lowest=w["name"][lowest])


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = in_language(WORDS, lang)
    hidden = [s for s in SCHEMES if s not in GROWTH]
    if hidden != hidden_under_zero_last(t):
        raise ChartError(f"the growth charts draw {', '.join(hidden)} under zero-last's line, but their values differ")
    out: dict[str, str] = {}
    for field in ("forward", "backward"):
        out[field] = line_chart(
            facts,
            chart_id=f"init-schemes-{field}",
            title=w["growth-title"].format(what=w["what"][field]),
            description=_growth_description(t, field, lang),
            x=Axis(w["depth-axis"], "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis(w["factor-axis"], "DERIVED.chart.growth-ticks", "pow10", kind="log"),
            series=tuple(
                Series(
                    w["name"][s],
                    tuple((f"START[{s},{d}].depth", f"START[{s},{d}].{field}") for d in DEPTHS),
                    STYLE[s],
                )
                for s in GROWTH
            ),
        )
    for group, members in CURVE_GROUPS.items():
        out[f"curves-{group}"] = measured_chart(
            facts,
            lang,
            chart_id=f"init-schemes-curves-{group}",
            title=w["curves-title"],
            description=_curves_description(t, group, lang),
            x=Axis(w["step-axis"], "DERIVED.chart.step-ticks", "count"),
            y=Axis(w["loss-axis"], f"DERIVED.chart.loss-ticks-{group}", "pow10", kind="log"),
            curves=[step_curve(w["name"][s], STYLE[s], _field(s), RECORDED) for s in members],
        )
    return out
