"""The path-expansion charts: how many paths of each length, and how much each length contributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from site_builder.render.charts import Axis, BarGroup, bar_chart, in_language, linear_ticks

from .trace import Trace


def chart_facts(t: Trace) -> dict[str, Any]:
    norms = [k.sum_norm for k in t.lengths] + [k.mean_path_norm for k in t.lengths]
    return {
        "DERIVED.chart.lengths": tuple(k.length for k in t.lengths),
        "DERIVED.chart.count-ticks": linear_ticks(0, max(k.count for k in t.lengths)),
        "DERIVED.chart.norm-ticks": linear_ticks(0, max(norms)),
    }


def _single_path_summary(t: Trace, lang: str = "en") -> str:
    means = [k.mean_path_norm for k in t.lengths]
    weakens = all(a > b for a, b in zip(means, means[1:]))
    if lang == "ru":
        if weakens:
            return "Отдельный путь слабее с каждой лишней ветвью, через которую он проходит"
        return "Отдельный путь не всегда слабее, когда проходит ещё через одну ветвь"
    if weakens:
        return "A single path is weaker with every extra branch it passes through"
    return "A single path is not always weaker when it passes through one more branch"


WORDS = {
    "en": {
        "counts-title": "Number of paths of each length",
        "counts-description": (
            "One bar per path length, from the path through no branch to the path through every branch. "
            "The counts are the binomial coefficients: most paths have a middle length."
        ),
        "length": "path length (branches passed through)",
        "paths": "paths",
        "of-length": "paths of that length",
        "contributions-title": "Contribution of each path length to the Jacobian",
        "contributions-description": (
            "For each path length, a solid bar for the Frobenius norm of the sum of all its paths and an "
            "outlined bar for the mean norm of a single path of that length. "
        ),
        "contributions-end": "; the sum depends on how many paths there are and how they combine.",
        "norm": "Frobenius norm",
        "sum": "sum of the paths of that length",
        "one": "one path of that length, on average",
    },
    "ru": {
        "counts-title": "Число путей каждой длины",
        "counts-description": (
            "По одному столбику на каждую длину пути, от пути, не проходящего ни через одну ветвь, до пути "
            "через все ветви. Числа путей — биномиальные коэффициенты: у большинства путей средняя длина."
        ),
        "length": "длина пути (пройдено ветвей)",
        "paths": "пути",
        "of-length": "пути этой длины",
        "contributions-title": "Вклад путей каждой длины в якобиан",
        "contributions-description": (
            "Для каждой длины пути закрашенный столбик — норма Фробениуса суммы всех её путей, контурный — "
            "средняя норма одного пути этой длины. "
        ),
        "contributions-end": "; сумма зависит от того, сколько путей и как они складываются.",
        "norm": "норма Фробениуса",
        "sum": "сумма путей этой длины",
        "one": "один путь этой длины, в среднем",
    },
}


def charts(t: Trace, facts: Mapping[str, Any], lang: str = "en") -> dict[str, str]:
    w = in_language(WORDS, lang)
    lengths = [k.length for k in t.lengths]
    return {
        "counts": bar_chart(
            facts,
            chart_id="path-expansion-counts",
            title=w["counts-title"],
            description=w["counts-description"],
            categories_key="DERIVED.chart.lengths",
            category_format="count",
            x_label=w["length"],
            y=Axis(w["paths"], "DERIVED.chart.count-ticks", "count"),
            groups=(BarGroup(w["of-length"], tuple(f"LENGTH[{n}].count" for n in lengths), "count", "identity"),),
            height=180,
        ),
        "contributions": bar_chart(
            facts,
            chart_id="path-expansion-contributions",
            title=w["contributions-title"],
            description=w["contributions-description"] + _single_path_summary(t, lang) + w["contributions-end"],
            categories_key="DERIVED.chart.lengths",
            category_format="count",
            x_label=w["length"],
            y=Axis(w["norm"], "DERIVED.chart.norm-ticks", "short"),
            groups=(
                BarGroup(w["sum"], tuple(f"LENGTH[{n}].sum-norm" for n in lengths), None, "identity"),
                BarGroup(
                    w["one"],
                    tuple(f"LENGTH[{n}].mean-path-norm" for n in lengths),
                    None,
                    "learned",
                    filled=False,
                ),
            ),
        ),
    }
