"""The lesion chart: the accuracy of the plain and the residual stack with one block deleted, block by block, the
seeds' range as a band and chance as a line, with its words in the page's language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from site_builder.render.charts import Axis, Reference, Series, Value, line_chart, linear_ticks

from .trace import KINDS, LESION_DEPTH, Trace

STYLE = {"plain": "plain", "residual": "learned"}


@dataclass(frozen=True)
class Words:
    label: dict[str, str]
    look: dict[str, str]
    title: str
    x: str
    y: str
    chance: str
    intact: str
    fmt: str


WORDS = {
    "en": Words(
        label={"plain": "plain", "residual": "residual"},
        look={"plain": "diamonds joined by a dotted line", "residual": "circles joined by a dashed line"},
        title="Accuracy with one block deleted",
        x="deleted block, counted from the input",
        y="fraction of the points classified right",
        chance="chance",
        intact="every block in place: ",
        fmt="measured",
    ),
    "ru": Words(
        label={"plain": "обычный", "residual": "остаточный"},
        look={"plain": "ромбы, соединённые пунктиром", "residual": "кружки, соединённые штриховой линией"},
        title="Точность без одного блока",
        x="удалённый блок, считая от входа",
        y="доля точек, классифицированных верно",
        chance="наугад",
        intact="все блоки на месте: ",
        fmt="measured-ru",
    ),
}


def chart_facts(t: Trace) -> dict[str, Any]:
    ends = [v for r in t.lesions for v in (r.accuracy.low, r.accuracy.high)]
    return {
        "DERIVED.chart.block-ticks": linear_ticks(1, LESION_DEPTH),
        "DERIVED.chart.accuracy-ticks": linear_ticks(min(*ends, 0.5), max(*ends, 1.0)),
    }


def description(t: Trace, lang: str = "en") -> str:
    w = WORDS[lang]
    looks = " ".join(f"{w.label[k].capitalize()}: {w.look[k]}." for k in KINDS)
    if lang == "ru":
        return (
            "Медиана по сидам доли верно классифицированных точек после удаления одного блока, для каждого "
            "удалённого блока по очереди; закрашенная полоса тянется от самого низкого сида до самого высокого; "
            f"горизонтальная линия — доля угадывания наугад. {looks}"
        )
    return (
        "Median over the seeds of the fraction of the points classified right after one block is deleted, for each "
        "deleted block in turn; a shaded band spans the seeds from the lowest to the highest; a horizontal line "
        f"marks the fraction a guess gets right. {looks}"
    )


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = WORDS[lang]
    series = tuple(
        Series(
            (
                f"{w.label[kind]}, {w.intact}",
                Value(f"TRAINED[{kind},{t.setup.lesion_depth},{t.setup.lesion_width}].accuracy", w.fmt),
            ),
            tuple((f"LESION[{kind},{b}].block", f"LESION[{kind},{b}].accuracy") for b in range(1, LESION_DEPTH + 1)),
            STYLE[kind],
            band=True,
        )
        for kind in KINDS
    )
    return {
        "lesion": line_chart(
            facts,
            chart_id="blocks-lesion",
            title=w.title,
            description=description(t, lang),
            x=Axis(w.x, "DERIVED.chart.block-ticks", "count"),
            y=Axis(w.y, "DERIVED.chart.accuracy-ticks", "short"),
            series=series,
            references=(Reference("DERIVED.chance-accuracy", "short", w.chance),),
        )
    }
