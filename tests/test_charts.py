"""Charts of the evidence pages: deterministic SVG in which every shown number is a verified fact."""

from __future__ import annotations

import dataclasses

import pytest
from lxml import etree

from helpers import PROJECT
from site_builder.check.document import Facts, check_svg
from site_builder.check.excerpts import Sources
from site_builder.facts import format_fact
from site_builder.numerals import has_number
from site_builder.render import charts as chart
from site_builder.render.charts import (
    Axis,
    BarGroup,
    ChartError,
    Guide,
    Series,
    Value,
    bar_chart,
    decade_ticks,
    exponent_ticks,
    line_chart,
    linear_ticks,
    log_ticks,
)

# The pages that draw charts; their runs are the session's one fresh run of every page (conftest's ``runs``).
CHART_PAGES = sorted(p.slug for p in PROJECT.pages() if (p.folder / "figures.py").is_file())


def page_charts(runs, slug: str) -> list[tuple[str, str]]:
    charts = sorted(runs[slug].charts.items())
    assert charts, f"pages/{slug}/figures.py draws no chart"
    return charts


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_the_site_checker_accepts_every_chart(slug, runs):
    for name, svg in page_charts(runs, slug):
        report = check_svg(svg.encode("utf-8"), f"evidence/{slug}", Facts(runs[slug].facts), Sources(PROJECT.root))
        assert report.problems == [], name
        assert report.values >= 8, name


def _unverified_text(el) -> str:
    """The text of ``el`` outside any element that carries its provenance."""
    if el.get("data-trace"):
        return ""
    parts = [el.text or ""]
    for child in el:
        parts += [_unverified_text(child), child.tail or ""]
    return "".join(parts)


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_every_number_in_a_chart_is_a_fact_shown_as_formatted(slug, runs):
    for _, svg in page_charts(runs, slug):
        _numbers_are_facts_shown_as_formatted(svg, runs[slug].facts)


def _numbers_are_facts_shown_as_formatted(svg: str, facts) -> None:
    root = etree.fromstring(svg.encode("utf-8"))
    shown = 0
    for el in root.iter("{*}text", "{*}tspan"):
        if el.get("data-trace"):
            assert "".join(el.itertext()) == format_fact(facts, el.get("data-trace"), el.get("data-format"))
            shown += 1
    for t in root.iter("{*}text"):
        assert not has_number(_unverified_text(t)), "".join(t.itertext())
    assert shown >= 8
    title = root.find("{*}title")
    assert title is not None and root.get("role") == "img"
    assert root.get("aria-labelledby") == f"{root.get('id')}-title {root.get('id')}-desc"


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_every_chart_scales_to_its_column(slug, runs):
    for name, svg in page_charts(runs, slug):
        root = etree.fromstring(svg.encode("utf-8"))
        assert root.get("width") == "100%" and root.get("height") is None, name
        _, _, width, height = (float(v) for v in root.get("viewBox").split())
        assert width <= chart.WIDTH and height > 0, name


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_charts_are_byte_for_byte_reproducible(slug, runs):
    """Drawn again from the same trace (a new run record, nothing memoized), every chart is the same bytes;
    that the fixtures give the same trace every time is the determinism tests' concern."""
    assert dataclasses.replace(runs[slug]).charts == runs[slug].charts


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_colours_come_from_the_palette_and_forced_colours_are_handled(slug, runs):
    for _, svg in page_charts(runs, slug):
        assert "#" not in svg.replace('id="', "").split("<style>")[0].split("<title")[0]
        assert "forced-colors" in svg and "var(--md-default-fg-color)" in svg
        assert "rgb(" not in svg


FACTS = {"X": (1.0, 2.0, 3.0), "Y": (0.5, 5.0, 50.0), "Z": (0.0, 0.0, 0.0), "XT": (0.0, 4.0), "YT": (-1, 2)}
X = Axis("x", "XT", "count")
Y = Axis("y", "YT", "int", kind="exponent")


def _points(y: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"X[{i}]", f"{y}[{i}]") for i in range(3))


def test_line_chart_rejects_what_it_cannot_show():
    ok = dict(chart_id="c", title="t", description="d", x=X, y=Y)
    line_chart(FACTS, series=(Series("s", _points("Y"), "identity"),), **ok)
    line_chart(FACTS, series=(Series("floor", _points("Z"), "identity", floor=True),), **ok)
    with pytest.raises(ChartError, match="logarithmic"):
        line_chart(FACTS, series=(Series("s", _points("Z"), "identity"),), **ok)
    with pytest.raises(ChartError, match="not zero"):
        line_chart(FACTS, series=(Series("s", _points("Y"), "identity", floor=True),), **ok)
    with pytest.raises(ChartError, match="outside"):
        line_chart({**FACTS, "YT": (0, 1)}, series=(Series("s", _points("Y"), "identity"),), **ok)
    with pytest.raises(ChartError, match="words only"):
        line_chart(FACTS, series=(), **{**ok, "title": "depth 20"})


def test_a_zero_row_sits_below_the_axis_labelled_with_the_value_itself():
    ok = dict(chart_id="c", title="t", description="d", x=X, y=Y)
    svg = line_chart(
        FACTS, series=(Series("s", _points("Y"), "identity"), Series("z", _points("Z"), "plain", floor=True)), **ok
    )
    root = etree.fromstring(svg.encode("utf-8"))
    zero = [t for t in root.iter("{*}text") if t.get("data-trace") == "Z[0]"]
    lowest = [t for t in root.iter("{*}text") if t.get("data-trace") == "YT[0]"]
    assert len(zero) == 1 and "".join(zero[0].itertext()) == "0"
    assert float(zero[0].get("y")) > float(lowest[0].get("y")) + 20  # below the axis's lowest tick, past the break
    with pytest.raises(ChartError, match="logarithmic"):
        line_chart(
            FACTS, series=(Series("z", _points("Z"), "plain", floor=True),), **{**ok, "y": Axis("y", "XT", "count")}
        )


def test_legend_words_hold_no_digits_and_values_carry_their_key():
    ok = dict(chart_id="c", title="t", description="d", x=X, y=Y)
    svg = line_chart(FACTS, series=(Series(("last ", Value("Y[2]", "short")), _points("Y"), "identity"),), **ok)
    assert '<tspan data-trace="Y[2]" data-format="short">50</tspan>' in svg
    with pytest.raises(ChartError, match="words only"):
        line_chart(FACTS, series=(Series("the last 3", _points("Y"), "identity"),), **ok)
    with pytest.raises(ChartError, match="does not fit"):
        line_chart(FACTS, series=(Series("a very long legend entry " * 4, _points("Y"), "identity"),), **ok)


def test_guides_need_log_axes_and_stay_inside_the_plot():
    facts = {**FACTS, "LX": (1.0, 100.0)}
    ok = dict(chart_id="c", title="t", description="d", x=Axis("x", "LX", "count", kind="log"), y=Y)
    steep = Guide("steep", 3.0, "X[0]", "Y[0]")
    svg = line_chart(facts, series=(Series("s", _points("Y"), "identity"),), guides=(steep,), **ok)
    root = etree.fromstring(svg.encode("utf-8"))
    line = next(el for el in root.iter("{*}line") if el.get("class") == "ev-guide")
    grid = [float(el.get("y1")) for el in root.iter("{*}line") if el.get("class") == "ev-grid"]
    assert min(grid) - 0.01 <= float(line.get("y2")) <= max(grid) + 0.01  # clipped at the top of the plot
    with pytest.raises(ChartError, match="logarithmic axes"):
        line_chart(FACTS, series=(Series("s", _points("Y"), "identity"),), guides=(steep,), **{**ok, "x": X})


def test_bar_values_are_optional():
    facts = {"C": (0, 1), "V": (1.0, 2.0), "T": (0.0, 2.0)}
    args = dict(
        chart_id="b",
        title="t",
        description="d",
        categories_key="C",
        category_format="count",
        x_label="x",
        y=Axis("y", "T", "short"),
    )
    with_values = bar_chart(facts, groups=(BarGroup("g", ("V[0]", "V[1]"), "short", "identity"),), **args)
    without = bar_chart(facts, groups=(BarGroup("g", ("V[0]", "V[1]"), None, "identity"),), **args)
    assert 'data-trace="V[1]"' in with_values and 'data-trace="V[1]"' not in without


def test_decade_ticks_read_as_powers_of_ten():
    ticks = decade_ticks([1.3e-31, 153.0, 8.0])
    assert ticks == (1e-40, 1e-30, 1e-20, 1e-10, 1.0, 1e10)
    facts = {"k": ticks}
    assert [format_fact(facts, f"k[{i}]", "pow10") for i in (0, 4, 5)] == ["10⁻⁴⁰", "10⁰", "10¹⁰"]


def test_short_or_sci_keeps_the_digits_of_a_value_near_zero():
    facts = {"loss": (0.6931471805599453, 0.001, 7.279798e-05, 0.0, -2.5e-9)}
    shown = [format_fact(facts, f"loss[{i}]", "short-or-sci") for i in range(5)]
    assert shown == ["0.693147", "0.001", "7.279798e\u221205", "0", "\u22122.500000e\u221209"]


def test_ticks():
    assert log_ticks([8.98, 127.0]) == (5.0, 10.0, 20.0, 50.0, 100.0, 200.0)
    assert log_ticks([15.0, 2.2e4]) == (10.0, 100.0, 1e3, 1e4, 1e5)
    with pytest.raises(ChartError, match="too many"):
        log_ticks([15.0, 2.2e8])
    assert exponent_ticks([1.3e-31, 153.0, 8.0]) == (-40, -30, -20, -10, 0, 10)
    assert exponent_ticks([15.0, 2.2e8]) == (0, 2, 4, 6, 8, 10)
    assert exponent_ticks([0.5]) == (-1, 0)
    assert linear_ticks(0, 100) == (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)
    assert linear_ticks(0, 6) == (0.0, 2.0, 4.0, 6.0)
    assert linear_ticks(0, 2.10556) == (0.0, 0.5, 1.0, 1.5, 2.0, 2.5)
    with pytest.raises(ChartError):
        exponent_ticks([0.0, -1.0])
    assert chart.STYLES["identity"].dash == "" and chart.STYLES["learned"].dash
