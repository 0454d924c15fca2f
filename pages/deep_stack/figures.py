"""The deep-stack chart: input-gradient norm against depth, plain and residual, on a log axis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import (
    Axis,
    Reference,
    Series,
    Value,
    decade_ticks,
    in_language,
    line_chart,
    linear_ticks,
)

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    """The axes' ticks, derived from the data so that every point fits."""
    norms = [r.plain_norm for r in t.depths] + [r.residual_norm for r in t.depths] + [t.config.upstream_norm]
    return {
        "DERIVED.chart.depth-ticks": linear_ticks(0, max(r.depth for r in t.depths)),
        "DERIVED.chart.norm-ticks": decade_ticks(norms),
    }


def _gradient_summary(t: Trace, lang: str = "en") -> str:
    """What the chart shows, said only as far as the measured norms support it."""
    first, last = t.depths[0], t.depths[-1]
    falls = last.plain_norm < first.plain_norm
    floor = min(r.residual_norm for r in t.depths) >= t.config.upstream_norm
    if lang == "ru":
        plain = "Норма в обычном стеке с глубиной падает" if falls else "Норма в обычном стеке в целом не падает"
        residual = (
            "в остаточном стеке она на всех показанных глубинах не ниже нормы входящего градиента."
            if floor
            else "в остаточном стеке она на какой-то глубине опускается ниже нормы входящего градиента."
        )
        return f"{plain}; {residual}"
    plain = (
        "The plain stack's norm falls as the stack deepens" if falls else "The plain stack's norm does not fall overall"
    )
    residual = (
        "the residual stack stays at or above the upstream norm at every depth shown."
        if floor
        else "the residual stack drops below the upstream norm at some depth."
    )
    return f"{plain}; {residual}"


WORDS = {
    "en": {
        "title": "Gradient norm at the input against depth, plain and residual",
        "description": (
            "Input-gradient norm against the number of tanh layers, on a logarithmic scale. Squares joined by "
            "a solid line: the residual stack. Circles joined by a dashed line: the plain stack. A dotted "
            "line marks the norm of the upstream gradient. "
        ),
        "x": "depth (tanh layers)",
        "y": "input-gradient norm",
        "residual": "residual stack: ",
        "plain": "plain stack: ",
        "at": " at depth ",
        "upstream": "upstream gradient's norm",
    },
    "ru": {
        "title": "Норма градиента на входе в зависимости от глубины, обычный и остаточный стеки",
        "description": (
            "Норма градиента на входе в зависимости от числа слоёв с tanh, в логарифмическом масштабе. "
            "Квадраты, соединённые сплошной линией: остаточный стек. Кружки, соединённые пунктиром: обычный "
            "стек. Точечная линия отмечает норму входящего градиента. "
        ),
        "x": "глубина (слоёв с tanh)",
        "y": "норма градиента на входе",
        "residual": "остаточный стек: ",
        "plain": "обычный стек: ",
        "at": " на глубине ",
        "upstream": "норма входящего градиента",
    },
}


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = in_language(WORDS, lang)
    at = f"DEPTH[{t.depths[-1].depth}]"
    return {
        "gradient": line_chart(
            facts,
            chart_id="deep-stack-gradient",
            title=w["title"],
            description=w["description"] + _gradient_summary(t, lang),
            x=Axis(w["x"], "DERIVED.chart.depth-ticks", "count"),
            y=Axis(w["y"], "DERIVED.chart.norm-ticks", "pow10", kind="log"),
            series=(
                Series(
                    (w["residual"], Value(f"{at}.residual-norm", "six"), w["at"], Value(f"{at}.depth", "count")),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].residual-norm") for r in t.depths),
                    "identity",
                ),
                Series(
                    (w["plain"], Value(f"{at}.plain-norm", "sci"), w["at"], Value(f"{at}.depth", "count")),
                    tuple((f"DEPTH[{r.depth}].depth", f"DEPTH[{r.depth}].plain-norm") for r in t.depths),
                    "learned",
                ),
            ),
            references=(Reference("CONFIG.upstream-norm", "short", w["upstream"]),),
        )
    }
