"""The skip-pattern charts: weights against depth, a gradient's growth against depth, and the training loss of the
stacks that add and of the stacks that concatenate, each with its seeds' range as a band, in English or Russian."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, Series, Value, decade_ticks, line_chart, linear_ticks
from site_builder.render.training_charts import Curve, in_language, measured_chart, measured_ticks, step_curve

from .trace import DEPTHS, PATTERNS, RECORDED, STEPS, Trace, column

# One style per pattern across every chart of the page.
STYLE = {
    "residual": "identity",
    "projection": "plain",
    "highway": "merge",
    "dense": "learned",
    "narrow-dense": "alternate",
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
            "narrow-dense": "downward triangles joined by a line of long and short dashes",
        },
        "at": " at ",
        "blocks": " blocks",
        "carry": "carry power",
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
            "narrow-dense": "треугольники вершиной вниз, штрихпунктир",
        },
        "at": " при ",
        "blocks": " блоках",
        "carry": "перенос",
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
    growth = measured_ticks(s.backward for s in t.shapes)
    carry = (1.0 - 1.0 / (1.0 + math.exp(-t.setup.gate_bias))) ** DEPTHS[-1]
    return {
        "DERIVED.chart.parameter-ticks": decade_ticks([s.parameters for s in t.shapes]),
        "DERIVED.chart.growth-ticks": decade_ticks([growth[0], growth[-1], carry]),
        "DERIVED.chart.step-ticks": linear_ticks(0, STEPS),
        "DERIVED.chart.loss-ticks": measured_ticks(getattr(r, column(p)) for r in t.curves for p in PATTERNS),
    }


def _looks(w: Mapping[str, Any], patterns: tuple[str, ...]) -> str:
    return " ".join(f"{w['label'][p].capitalize()}: {w['look'][p]}." for p in patterns)


def _parameters_description(t: Trace, lang: str = "en") -> str:
    w = in_language(WORDS, lang)
    rows = {(s.pattern, s.depth): s.parameters for s in t.shapes}
    first, last = DEPTHS[0], DEPTHS[-1]
    fastest = max(PATTERNS, key=lambda p: rows[p, last] / rows[p, first])
    return w["parameters-description"].format(looks=_looks(w, PATTERNS), fastest=w["label"][fastest])


def _growth_description(t: Trace, lang: str = "en") -> str:
    w = in_language(WORDS, lang)
    rows = {(s.pattern, s.depth): s.backward.median for s in t.shapes}
    falls = [w["label"][p] for p in PATTERNS if rows[p, DEPTHS[-1]] < rows[p, DEPTHS[0]] / 2]
    said = w["falls"].format(names=w["and"].join(falls)) if falls else w["none-falls"]
    return w["growth-description"].format(looks=_looks(w, PATTERNS), said=said)


def _loss_description(t: Trace, patterns: tuple[str, ...], lang: str = "en") -> str:
    w = in_language(WORDS, lang)
    last = t.curves[-1]
    ranked = sorted(patterns, key=lambda p: getattr(last, column(p)).median)
    return w["loss-description"].format(
        looks=_looks(w, patterns), lowest=w["label"][ranked[0]], highest=w["label"][ranked[-1]]
    )


def _depth_points(p: str, field: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"SHAPE[{p},{d}].depth", f"SHAPE[{p},{d}].{field}") for d in DEPTHS)


def _at_deepest(w: Mapping[str, Any], p: str) -> tuple[str | Value, ...]:
    """The legend's words after a pattern's value: `` at 32 blocks``."""
    return (w["at"], Value(f"SHAPE[{p},{DEPTHS[-1]}].depth", "count"), w["blocks"])


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = in_language(WORDS, lang)
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
            series=tuple(
                Series(
                    (f"{w['label'][p]}: ", Value(f"SHAPE[{p},{DEPTHS[-1]}].parameters", "count"), *_at_deepest(w, p)),
                    _depth_points(p, "parameters"),
                    STYLE[p],
                )
                for p in PATTERNS
            ),
        ),
        "growth": measured_chart(
            facts,
            lang,
            chart_id="skip-patterns-growth",
            title=w["growth-title"],
            description=_growth_description(t, lang),
            x=depth,
            y=Axis(w["factor"], "DERIVED.chart.growth-ticks", "pow10", kind="log"),
            curves=[
                Curve(w["label"][p], STYLE[p], _depth_points(p, "backward"), after=_at_deepest(w, p)) for p in PATTERNS
            ],
            others=(carry,),
        ),
        **{
            name: measured_chart(
                facts,
                lang,
                chart_id=f"skip-patterns-{name}",
                title=w[f"{name}-title"],
                description=_loss_description(t, patterns, lang),
                x=step,
                y=loss,
                curves=[step_curve(w["label"][p], STYLE[p], p, RECORDED) for p in patterns],
            )
            for name, patterns in (("adding", ADDING), ("joining", JOINING))
        },
    }
