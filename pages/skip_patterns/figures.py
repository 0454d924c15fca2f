"""The skip-pattern charts: weights against depth, a gradient's growth against depth, and the training loss of the
stacks that add and of the stacks that concatenate, each with its seeds' range as a band, in English or Russian."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, line_chart, linear_ticks

from .trace import DEPTHS, PATTERNS, RECORDED, STEPS, Trace, column

# One style per pattern across every chart of the page.
STYLE = {
    "residual": "identity",
    "projection": "plain",
    "highway": "merge",
    "dense": "learned",
    "narrow-dense": "guide-long",
}
ADDING = ("residual", "projection", "highway")  # the stacks that add to a stream of fixed width
JOINING = ("residual", "dense", "narrow-dense")  # the residual stack beside the two that concatenate

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "label": {
            "residual": "residual",
            "projection": "projection",
            "highway": "highway",
            "dense": "dense",
            "narrow-dense": "narrow dense",
        },
        "look": {
            "residual": "squares joined by a solid line",
            "projection": "diamonds joined by a dotted line",
            "highway": "triangles joined by a dotted line",
            "dense": "circles joined by a dashed line",
            "narrow-dense": "a line of long and short dashes without marks",
        },
        "at": " at ",
        "blocks": " blocks",
        "carry": "carry power",
        "measured": "measured",
        "depth": "depth (blocks)",
        "step": "training step",
        "loss": "training loss",
        "weights": "weights",
        "factor": "factor",
        "parameters-title": "Weights in the blocks against depth",
        "parameters-description": "Weights in the blocks against the number of blocks, both axes logarithmic. {looks} "
        "From the shallowest stack to the deepest, the {fastest} stack's count grows the most.",
        "growth-title": "How much each stack multiplies a gradient at initialization, against depth",
        "growth-description": "How many times each stack multiplies a gradient on its way down at initialization, "
        "against the number of blocks, both axes logarithmic; each line joins the medians over the seeds and a shaded "
        "band spans the lowest to the highest seed. {looks} A dotted line without marks, carry power: the highway "
        "gate's carry at initialization raised to the number of blocks. {said}",
        "falls": "The median factor of the {names} stack falls by more than half from the shallowest to the deepest.",
        "none-falls": "No stack's median factor falls by half with depth.",
        "and": " and ",
        "adding-title": "Training loss against the step: the stacks that add",
        "joining-title": "Training loss against the step: the residual stack and the stacks that concatenate",
        "loss-description": "Median training loss over the seeds against the training step, on a logarithmic scale, "
        "each stack at its own best learning rate; a shaded band spans the seeds from the lowest to the highest; the "
        "legend gives each median after the last step. {looks} After the last step the lowest median belongs to the "
        "{lowest} stack and the highest to the {highest} stack; the comparison table says which differences exceed "
        "the spread.",
    },
    "ru": {
        "label": {
            "residual": "остаточный",
            "projection": "с проекцией",
            "highway": "highway",
            "dense": "плотный",
            "narrow-dense": "узкий плотный",
        },
        "look": {
            "residual": "квадраты, сплошная линия",
            "projection": "ромбы, пунктир",
            "highway": "треугольники, пунктир",
            "dense": "круги, штриховая линия",
            "narrow-dense": "штрихпунктир без маркеров",
        },
        "at": " при ",
        "blocks": " блоках",
        "carry": "перенос",
        "measured": "measured-ru",
        "depth": "глубина (блоки)",
        "step": "шаг обучения",
        "loss": "функция потерь на обучении",
        "weights": "веса",
        "factor": "множитель",
        "parameters-title": "Число весов в блоках в зависимости от глубины",
        "parameters-description": "Число весов в блоках в зависимости от числа блоков, обе оси логарифмические. "
        "{looks} От самого мелкого стека к самому глубокому быстрее всех растёт стек «{fastest}».",
        "growth-title": "Во сколько раз каждый стек умножает градиент при инициализации, в зависимости от глубины",
        "growth-description": "Во сколько раз каждый стек умножает градиент на пути вниз при инициализации, в "
        "зависимости от числа блоков, обе оси логарифмические; линия соединяет медианы по сидам, закрашенная полоса "
        "тянется от самого низкого сида до самого высокого. {looks} Пунктир без маркеров, перенос: перенос гейта "
        "highway при инициализации в степени числа блоков. {said}",
        "falls": "Медианный множитель стека «{names}» от самого мелкого стека к самому глубокому падает больше чем вдвое.",
        "none-falls": "Ни у одного стека медианный множитель не падает с глубиной вдвое.",
        "and": "» и «",
        "adding-title": "Функция потерь на обучении в зависимости от шага: стеки, которые складывают",
        "joining-title": "Функция потерь на обучении в зависимости от шага: остаточный стек и стеки, которые склеивают",
        "loss-description": "Медиана функции потерь на обучении по сидам в зависимости от шага обучения, в "
        "логарифмическом масштабе, каждый стек при своей лучшей скорости обучения; закрашенная полоса тянется от "
        "самого низкого сида до самого высокого; в легенде медиана после последнего шага. {looks} После последнего "
        "шага самая низкая медиана у стека «{lowest}», самая высокая у стека «{highest}»; какие разницы выходят за "
        "разброс, говорит таблица сравнений.",
    },
}


def chart_facts(t: Trace) -> dict[str, Any]:
    losses = [v for r in t.curves for p in PATTERNS for m in [getattr(r, column(p))] for v in (m.low, m.high) if v > 0]
    growth = [v for s in t.shapes for v in (s.backward.low, s.backward.high) if v > 0]
    carry = (1.0 - 1.0 / (1.0 + math.exp(-t.setup.gate_bias))) ** DEPTHS[-1]
    return {
        "DERIVED.chart.parameter-ticks": decade_ticks([s.parameters for s in t.shapes]),
        "DERIVED.chart.growth-ticks": decade_ticks([*growth, carry]),
        "DERIVED.chart.step-ticks": linear_ticks(0, STEPS),
        "DERIVED.chart.loss-ticks": decade_ticks(losses),
    }


def _looks(w: Mapping[str, Any], patterns: tuple[str, ...]) -> str:
    return " ".join(f"{w['label'][p].capitalize()}: {w['look'][p]}." for p in patterns)


def _parameters_description(t: Trace, lang: str = "en") -> str:
    w = WORDS[lang]
    rows = {(s.pattern, s.depth): s.parameters for s in t.shapes}
    first, last = DEPTHS[0], DEPTHS[-1]
    fastest = max(PATTERNS, key=lambda p: rows[p, last] / rows[p, first])
    return w["parameters-description"].format(looks=_looks(w, PATTERNS), fastest=w["label"][fastest])


def _growth_description(t: Trace, lang: str = "en") -> str:
    w = WORDS[lang]
    rows = {(s.pattern, s.depth): s.backward.median for s in t.shapes}
    falls = [w["label"][p] for p in PATTERNS if rows[p, DEPTHS[-1]] < rows[p, DEPTHS[0]] / 2]
    said = w["falls"].format(names=w["and"].join(falls)) if falls else w["none-falls"]
    return w["growth-description"].format(looks=_looks(w, PATTERNS), said=said)


def _loss_description(t: Trace, patterns: tuple[str, ...], lang: str = "en") -> str:
    w = WORDS[lang]
    last = t.curves[-1]
    ranked = sorted(patterns, key=lambda p: getattr(last, column(p)).median)
    return w["loss-description"].format(
        looks=_looks(w, patterns), lowest=w["label"][ranked[0]], highest=w["label"][ranked[-1]]
    )


def _depth_series(w: Mapping[str, Any], field: str, fmt: str, band: bool) -> tuple[Series, ...]:
    deep = DEPTHS[-1]
    return tuple(
        Series(
            (
                f"{w['label'][p]}: ",
                Value(f"SHAPE[{p},{deep}].{field}", fmt),
                w["at"],
                Value(f"SHAPE[{p},{deep}].depth", "count"),
                w["blocks"],
            ),
            tuple((f"SHAPE[{p},{d}].depth", f"SHAPE[{p},{d}].{field}") for d in DEPTHS),
            STYLE[p],
            band=band,
        )
        for p in PATTERNS
    )


def _loss_series(w: Mapping[str, Any], patterns: tuple[str, ...]) -> list[Series]:
    return [
        Series(
            (f"{w['label'][p]}: ", Value(f"CURVE[{STEPS}].{p}", w["measured"])),
            tuple((f"CURVE[{s}].step", f"CURVE[{s}].{p}") for s in RECORDED),
            STYLE[p],
            band=True,
        )
        for p in patterns
    ]


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = WORDS[lang]
    depth = Axis(w["depth"], "DERIVED.chart.depths", "count", kind="log")
    step = Axis(w["step"], "DERIVED.chart.step-ticks", "count")
    loss = Axis(w["loss"], "DERIVED.chart.loss-ticks", "pow10", kind="log")
    carry = Series(
        (
            f"{w['carry']}: ",
            Value(f"DERIVED.depth-{DEPTHS[-1]}.carry-power", "sci"),
            w["at"],
            Value(f"SHAPE[highway,{DEPTHS[-1]}].depth", "count"),
            w["blocks"],
        ),
        tuple((f"SHAPE[highway,{d}].depth", f"DERIVED.depth-{d}.carry-power") for d in DEPTHS),
        "guide",
    )
    return {
        "parameters": line_chart(
            facts,
            chart_id="skip-patterns-parameters",
            title=w["parameters-title"],
            description=_parameters_description(t, lang),
            x=depth,
            y=Axis(w["weights"], "DERIVED.chart.parameter-ticks", "pow10", kind="log"),
            series=_depth_series(w, "parameters", "count", band=False),
        ),
        "growth": line_chart(
            facts,
            chart_id="skip-patterns-growth",
            title=w["growth-title"],
            description=_growth_description(t, lang),
            x=depth,
            y=Axis(w["factor"], "DERIVED.chart.growth-ticks", "pow10", kind="log"),
            series=(*_depth_series(w, "backward", w["measured"], band=True), carry),
        ),
        "adding": line_chart(
            facts,
            chart_id="skip-patterns-adding",
            title=w["adding-title"],
            description=_loss_description(t, ADDING, lang),
            x=step,
            y=loss,
            series=_loss_series(w, ADDING),
        ),
        "joining": line_chart(
            facts,
            chart_id="skip-patterns-joining",
            title=w["joining-title"],
            description=_loss_description(t, JOINING, lang),
            x=step,
            y=loss,
            series=_loss_series(w, JOINING),
        ),
    }
