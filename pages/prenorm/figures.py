"""The pre-norm charts, in the page's language: the gradient profile at initialization for each depth, and the
training loss of the three trained arms, each line the median over the seeds with the seeds' range as a band."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, linear_ticks
from site_builder.render.training_charts import Curve, in_language, measured_chart, measured_ticks, step_curve

from .trace import ARMS, LAYOUTS, PROFILE_DEPTHS, RECORDED, STEPS, Trace

STYLE = {"pre": "identity", "post": "merge", "post-norm-warm-up": "learned"}  # one style per arm on every chart

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "look": {
            "pre": "squares joined by a solid line",
            "post": "triangles joined by a dotted line",
            "post-norm-warm-up": "circles joined by a dashed line",
        },
        "label": {"pre": "pre-norm", "post": "post-norm", "post-norm-warm-up": "post-norm, warm-up"},
        "name": {"pre": "Pre-norm", "post": "Post-norm", "post-norm-warm-up": "Post-norm with a warm-up"},
        "at_last": " at the last block",
        "block_axis": "block (counted from the input)",
        "gradient_axis": "gradient norm",
        "step_axis": "training step",
        "loss_axis": "training loss",
        "profile_title": "Gradient reaching each block at initialization, pre-norm and post-norm",
        "loss_title": "Training loss against the step: pre-norm, post-norm, post-norm with a warm-up",
        "trend": {
            "lower": "smaller than the first block's",
            "higher": "larger than the first block's",
            "indistinguishable": "indistinguishable, within the spread, from the first block's",
        },
        "profile_trend": "in the {layout} stack the last block's gradient is {trend}",
        "profile": (
            "Gradient norm reaching each block's weights at initialization against the block's position, counted "
            "from the input, on a logarithmic scale; each line joins the medians over the seeds, and a shaded band "
            "spans the seeds from the lowest to the highest. {looks} {trends}."
        ),
        "loss": (
            "Median training loss over the seeds against the training step, on a logarithmic scale, each arm at its "
            "own best learning rate; a shaded band spans the seeds from the lowest to the highest; the legend gives "
            "each median after the last step. {looks} After the last step the lowest median belongs to the "
            "{lowest} arm; the table below says which differences exceed the spread."
        ),
    },
    "ru": {
        "look": {
            "pre": "квадраты, соединённые сплошной линией",
            "post": "треугольники, соединённые точечной линией",
            "post-norm-warm-up": "кружки, соединённые штриховой линией",
        },
        "label": {"pre": "pre-norm", "post": "post-norm", "post-norm-warm-up": "post-norm с разогревом"},
        "name": {"pre": "Pre-norm", "post": "Post-norm", "post-norm-warm-up": "Post-norm с разогревом"},
        "at_last": " у последнего блока",
        "block_axis": "блок (счёт от входа)",
        "gradient_axis": "норма градиента",
        "step_axis": "шаг обучения",
        "loss_axis": "функция потерь на обучении",
        "profile_title": "Градиент, доходящий до каждого блока при инициализации, pre-norm и post-norm",
        "loss_title": "Функция потерь на обучении по шагам: pre-norm, post-norm, post-norm с разогревом",
        "trend": {
            "lower": "меньше, чем у первого",
            "higher": "больше, чем у первого",
            "indistinguishable": "в пределах разброса не отличается от градиента первого",
        },
        "profile_trend": "в стеке {layout} градиент последнего блока {trend}",
        "profile": (
            "Норма градиента, доходящего до весов каждого блока при инициализации, в зависимости от номера блока, "
            "считая от входа, в логарифмическом масштабе; линия соединяет медианы по сидам генератора, затенённая "
            "полоса тянется от наименьшего значения до наибольшего. {looks} {trends}."
        ),
        "loss": (
            "Медиана функции потерь на обучении по сидам генератора в зависимости от шага, в логарифмическом "
            "масштабе, каждый вариант при своей лучшей скорости обучения; затенённая полоса тянется от наименьшего "
            "значения до наибольшего; в легенде — медиана после последнего шага. {looks} После последнего шага "
            "наименьшая медиана у варианта {lowest}; какие различия больше разброса, говорит таблица ниже."
        ),
    },
}


def _words(lang: str) -> Mapping[str, Any]:
    return in_language(WORDS, lang)


def field(arm: str) -> str:
    """The text name of an arm's field in CURVE records: the arm's name (``post-norm-warm-up``)."""
    return arm


def _kind(arm: str) -> str:
    """The layout an arm or a profile's field is named by in the words and styles: ``pre``, ``post``, or the arm."""
    return {"pre-norm": "pre", "post-norm": "post"}.get(arm, arm)


def _loss(row: Any, arm: str) -> Any:
    return getattr(row, arm.replace("-", "_"))


def chart_facts(t: Trace) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "DERIVED.chart.step-ticks": linear_ticks(0, STEPS),
        "DERIVED.chart.loss-ticks": measured_ticks(_loss(r, arm) for r in t.curves for arm in ARMS),
    }
    for depth in PROFILE_DEPTHS:
        facts[f"DERIVED.chart.block-ticks-{depth}"] = linear_ticks(0, depth)
        # Each depth's gradient axis holds its own profile: the deepest stack's seeds spread over decades that
        # would leave the shallow stacks' lines a thin strip of their chart.
        facts[f"DERIVED.chart.gradient-ticks-{depth}"] = measured_ticks(
            m for p in t.profiles if p.depth == depth for m in (p.pre, p.post)
        )
    return facts


def tilt(tilted: bool, median: float) -> str:
    """Which way the last block's gradient lies from the first block's: ``lower``, ``higher`` (beyond the
    spread, the median tells which) or ``indistinguishable``."""
    if not tilted:
        return "indistinguishable"
    return "lower" if median < 1 else "higher"


def _profile_description(t: Trace, depth: int, lang: str = "en") -> str:
    w = _words(lang)
    start = next(s for s in t.starts if s.depth == depth)
    trends = []
    for layout in LAYOUTS:
        tilted, growth = (
            (start.pre_tilted, start.pre_growth) if layout == "pre" else (start.post_tilted, start.post_growth)
        )
        trend = w["trend"][tilt(tilted, growth.median)]
        trends.append(w["profile_trend"].format(layout=w["label"][layout], trend=trend))
    looks = " ".join(f"{w['name'][layout]}: {w['look'][layout]}." for layout in LAYOUTS)
    text = "; ".join(trends)
    return w["profile"].format(looks=looks, trends=text[0].upper() + text[1:])


def _loss_description(t: Trace, lang: str = "en") -> str:
    w = _words(lang)
    looks = " ".join(f"{w['name'][_kind(arm)]}: {w['look'][_kind(arm)]}." for arm in ARMS)
    lowest = min(ARMS, key=lambda arm: _loss(t.curves[-1], arm).median)
    return w["loss"].format(looks=looks, lowest=w["label"][_kind(lowest)])


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = _words(lang)
    out: dict[str, str] = {}
    for depth in PROFILE_DEPTHS:
        out[f"profile-{depth}"] = measured_chart(
            facts,
            lang,
            chart_id=f"prenorm-profile-{depth}",
            title=w["profile_title"],
            description=_profile_description(t, depth, lang),
            x=Axis(w["block_axis"], f"DERIVED.chart.block-ticks-{depth}", "count"),
            y=Axis(w["gradient_axis"], f"DERIVED.chart.gradient-ticks-{depth}", "pow10", kind="log"),
            curves=[
                Curve(
                    w["label"][layout],
                    STYLE[layout],
                    tuple(
                        (f"PROFILE[{depth},{b}].block", f"PROFILE[{depth},{b}].{layout}") for b in range(1, depth + 1)
                    ),
                    after=(w["at_last"],),
                )
                for layout in LAYOUTS
            ],
        )
    out["loss"] = measured_chart(
        facts,
        lang,
        chart_id="prenorm-loss",
        title=w["loss_title"],
        description=_loss_description(t, lang),
        x=Axis(w["step_axis"], "DERIVED.chart.step-ticks", "count"),
        y=Axis(w["loss_axis"], "DERIVED.chart.loss-ticks", "pow10", kind="log"),
        curves=[step_curve(w["label"][_kind(arm)], STYLE[_kind(arm)], field(arm), RECORDED) for arm in ARMS],
    )
    return out
