"""The identity-at-initialization chart: distance from the input against depth, both initializations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, in_language, line_chart

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        "DERIVED.chart.depth-ticks": tuple(r.depth for r in t.depths),
        "DERIVED.chart.deviation-ticks": decade_ticks([r.he_deviation for r in t.depths]),
    }


def _deviation_description(t: Trace, lang: str = "en") -> str:
    he = [r.he_deviation for r in t.depths]
    grows = all(a < b for a, b in zip(he, he[1:]))
    exact = all(r.zero_init_deviation == 0 for r in t.depths)
    if lang == "ru":
        return (
            "Расстояние между выходом стека и его входом в зависимости от числа блоков, обе оси "
            "логарифмические. Кружки, соединённые пунктиром: масштаб Хэ для ReLU на обоих слоях, "
            + ("расстояние растёт с глубиной. " if grows else "расстояние растёт не на каждом шаге глубины. ")
            + "Квадраты в отдельном ряду под разрывом вертикальной оси: второй слой каждого блока "
            + (
                "инициализирован нулями, и расстояние в точности равно нулю на каждой глубине, а нулю на "
                "логарифмической оси места нет."
                if exact
                else "инициализирован нулями, и расстояние не на каждой глубине равно нулю."
            )
        )
    return (
        "Distance between the stack's output and its input against the number of blocks, both axes "
        "logarithmic. Circles joined by a dashed line: He's ReLU scale on both layers, "
        + ("growing with depth. " if grows else "not growing at every step of depth. ")
        + "Squares on a row of their own below a break in the vertical axis: every block's second layer "
        + (
            "initialized to zero, where the distance is exactly zero at every depth, a value a logarithmic "
            "axis has no place for."
            if exact
            else "initialized to zero, where the distance is not zero at every depth."
        )
    )


WORDS = {
    "en": {
        "title": "Distance of the output from the input against depth",
        "x": "depth (residual blocks)",
        "y": "distance of the output from the input",
        "he": "He on both layers: ",
        "at": " at depth ",
        "zero": "zero init: exactly ",
        "every": " at every depth",
    },
    "ru": {
        "title": "Расстояние выхода от входа в зависимости от глубины",
        "x": "глубина (остаточных блоков)",
        "y": "расстояние выхода от входа",
        "he": "Хэ на обоих слоях: ",
        "at": ", глубина ",
        "zero": "нулевая инициализация: ровно ",
        "every": " везде",
    },
}


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = in_language(WORDS, lang)
    first, at = f"DEPTH[{t.depths[0].depth}]", f"DEPTH[{t.depths[-1].depth}]"
    return {
        "deviation": line_chart(
            facts,
            chart_id="identity-init-deviation",
            title=w["title"],
            description=_deviation_description(t, lang),
            x=Axis(w["x"], "DERIVED.chart.depth-ticks", "count", kind="log"),
            y=Axis(w["y"], "DERIVED.chart.deviation-ticks", "pow10", kind="log"),
            series=(
                Series(
                    (w["he"], Value(f"{at}.he-deviation", "sci"), w["at"], Value(f"{at}.depth", "count")),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].he-deviation") for r in t.depths),
                    "learned",
                ),
                Series(
                    (w["zero"], Value(f"{first}.zero-init-deviation", "short"), w["every"]),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].zero-init-deviation") for r in t.depths),
                    "identity",
                    floor=True,
                ),
            ),
        )
    }
