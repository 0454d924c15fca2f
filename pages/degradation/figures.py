"""The degradation charts: every arm's training loss against the step at each depth, its seeds' range as a band,
with their words in the page's language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, linear_ticks
from site_builder.render.training_charts import measured_chart, measured_ticks, step_curve

from .trace import ARMS, COLUMNS, DEPTHS, RECORDED, STEPS, Trace

STYLE = {"plain": "plain", "normalized-plain": "merge", "residual": "learned", "scaled-residual": "identity"}
LOOK = {
    "plain": "diamonds joined by a dotted line",
    "normalized-plain": "triangles joined by a dotted line",
    "residual": "circles joined by a dashed line",
    "scaled-residual": "squares joined by a solid line",
}
LABEL = {
    "plain": "plain",
    "normalized-plain": "normalized plain",
    "residual": "residual",
    "scaled-residual": "scaled residual",
}


SHORT = {"plain": "plain", "normalized-plain": "normalized", "residual": "residual", "scaled-residual": "scaled"}

# The Russian words of the same charts: the stacks' names as the Russian page uses them.
LOOK_RU = {
    "plain": "ромбы, соединённые пунктиром",
    "normalized-plain": "треугольники, соединённые пунктиром",
    "residual": "кружки, соединённые штриховой линией",
    "scaled-residual": "квадраты, соединённые сплошной линией",
}
LABEL_RU = {
    "plain": "обычный",
    "normalized-plain": "нормализованный обычный",
    "residual": "остаточный",
    "scaled-residual": "масштабированный остаточный",
}
SHORT_RU = {
    "plain": "обычный",
    "normalized-plain": "нормализованный",
    "residual": "остаточный",
    "scaled-residual": "масштабированный",
}
TITLE = {"en": "Training loss of four stacks against the step", "ru": "Потери четырёх стеков в зависимости от шага"}
STEP_WORDS = {"en": "training step", "ru": "шаг обучения"}
LOSS_WORDS = {"en": "training loss", "ru": "потери на обучающих данных"}


def key(arm: str, depth: int) -> str:
    """The text name of an arm's field in CURVE records: ``normalized-plain-8``."""
    return f"{arm}-{depth}"


def chart_facts(t: Trace) -> dict[str, Any]:
    return {
        # Seven ticks end the axis at the last step (six would end it a tick past the data).
        "DERIVED.chart.step-ticks": linear_ticks(0, STEPS, most=7),
        "DERIVED.chart.loss-ticks": measured_ticks(getattr(r, name) for r in t.curves for name in COLUMNS),
    }


def _ranked(t: Trace, depth: int) -> list[str]:
    return sorted(ARMS, key=lambda arm: getattr(t.curves[-1], key(arm, depth).replace("-", "_")).median)


def _description(t: Trace, depth: int) -> str:
    looks = " ".join(f"{LABEL[arm].capitalize()}: {LOOK[arm]}." for arm in ARMS)
    ranked = _ranked(t, depth)
    return (
        "Median training loss over the seeds against the training step, on a logarithmic scale, each stack at its "
        f"own best learning rate; a shaded band spans the seeds from the lowest to the highest; the legend gives "
        f"each median after the last step. {looks} "
        f"After the last step the lowest median belongs to the {LABEL[ranked[0]]} stack and the highest to the "
        f"{LABEL[ranked[-1]]} stack; the table below says which differences exceed the spread."
    )


def _description_ru(t: Trace, depth: int) -> str:
    looks = " ".join(f"{LABEL_RU[arm].capitalize()}: {LOOK_RU[arm]}." for arm in ARMS)
    ranked = _ranked(t, depth)
    return (
        "Медиана потерь на обучающих данных по сидам в зависимости от шага обучения, в логарифмическом масштабе; "
        "каждый стек обучен со своей лучшей скоростью обучения; закрашенная полоса тянется от самого низкого сида "
        f"до самого высокого; в легенде — медиана каждого стека после последнего шага. {looks} "
        f"После последнего шага самая низкая медиана у стека «{LABEL_RU[ranked[0]]}», самая высокая — у стека "
        f"«{LABEL_RU[ranked[-1]]}»; какие различия выходят за разброс, говорит таблица ниже."
    )


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    ru = lang == "ru"
    short = SHORT_RU if ru else SHORT
    return {
        f"curves-{depth}": measured_chart(
            facts,
            lang,
            chart_id=f"degradation-curves-{depth}",
            title=TITLE[lang],
            description=_description_ru(t, depth) if ru else _description(t, depth),
            x=Axis(STEP_WORDS[lang], "DERIVED.chart.step-ticks", "count"),
            y=Axis(LOSS_WORDS[lang], "DERIVED.chart.loss-ticks", "pow10", kind="log"),
            curves=[step_curve(short[arm], STYLE[arm], key(arm, depth), RECORDED) for arm in ARMS],
        )
        for depth in DEPTHS
    }
