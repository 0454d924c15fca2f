"""Charts of the evidence pages: deterministic SVG in which every shown number is a verified fact."""

from __future__ import annotations

import dataclasses
import math
import re

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
from site_builder.render.training_charts import Curve, in_language, measured_chart, measured_ticks
from site_builder.trace.numbers import Measurement

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


# -- measured results: medians over a band, a median that does not stand, one look per arm --------------------


def _measured_facts() -> dict:
    return {
        "X": (1.0, 2.0, 3.0),
        "XT": (0.0, 4.0),
        "LT": (1e-3, 1e-2, 1e-1, 1.0),
        "A": Measurement(0.5, 0.4, 0.6, 0.01, 0.0),  # stands: 0.5
        "B": Measurement(0.3, 0.1, 0.9, 0.3, 0.0),  # no digit stands, but the median is not zero: hollow at 0.3
        "C": Measurement(0.02, 0.001, 0.5, 0.3, 0.0),  # rounds to zero: the page says "below 0.4"
    }


def _measured_svg(lang: str = "en") -> etree._Element:
    facts = _measured_facts()
    curve = Curve("arm", "identity", (("X[0]", "A"), ("X[1]", "B"), ("X[2]", "C")))
    svg = measured_chart(
        facts,
        lang,
        chart_id="m",
        title="t",
        description="d",
        x=X,
        y=Axis("y", "LT", "pow10", kind="log"),
        curves=[curve],
    )
    return etree.fromstring(svg.encode("utf-8"))


def test_a_median_that_rounds_to_zero_is_drawn_hollow_at_its_bound_and_the_line_leaves_it_out():
    facts = _measured_facts()
    assert format_fact(facts, "C", "measured") == "below 0.4" and format_fact(facts, "B", "measured") == "below 0.7"
    root = _measured_svg()
    lines = [el for el in root.iter("{*}polyline") if "ev-line" in el.get("class", "")]
    assert len(lines) == 1 and len(lines[0].get("points").split()) == 2  # through A and B only
    floor = chart.TOP + chart.PLOT_HEIGHT
    marks = [el for el in root.iter("{*}rect") if "ev-mark" in el.get("class", "")]
    marks = [m for m in marks if float(m.get("y")) < floor + 10]  # the plot's, not the legend's samples
    centres = [float(m.get("y")) + 3.8 for m in marks]
    assert len(marks) == 3 and all(y < floor - 1 for y in centres), "no median is drawn on the axis's floor"
    hollow = [m for m in marks if "ev-hollow" in m.get("class")]
    assert len(hollow) == 2  # B, and C at its bound
    bound_y = centres[2]
    top_y = chart.TOP
    # 0.4 on a log axis from 10^-3 (floor) to 1 (top): log10(0.4) = -0.398, so 0.867 of the way up
    assert abs((floor - bound_y) / (floor - top_y) - (3 + math.log10(0.4)) / 3) < 0.01
    bars = [el for el in root.iter("{*}line") if el.get("class") == "ev-guide" and float(el.get("y1")) == floor]
    assert len(bars) == 1 and abs(float(bars[0].get("y2")) - bound_y) < 0.01
    legend = ["".join(t.itertext()) for t in root.iter("{*}text")]
    assert set(chart.BOUND_WORDS["en"]) <= set(legend)


def test_bound_words_follow_the_language_and_an_unknown_language_is_refused():
    legend = ["".join(t.itertext()) for t in _measured_svg("ru").iter("{*}text")]
    assert set(chart.BOUND_WORDS["ru"]) <= set(legend) and "arm: меньше 0.4" in legend
    with pytest.raises(ChartError, match="language"):
        _measured_svg("xx")


def test_measured_ticks_hold_every_band_median_and_bound():
    facts = _measured_facts()
    ticks = measured_ticks([facts["A"], facts["B"], facts["C"]])
    assert ticks[0] <= 0.001 and ticks[-1] >= 0.9
    assert measured_ticks([Measurement(0.0, 0.0, 0.002, 0.3, 0.0)])[-1] >= 0.4  # the bound, above every seed


def test_an_arm_keeps_one_look_and_two_arms_never_share_one():
    facts = _measured_facts()
    points = (("X[0]", "A"), ("X[1]", "A"), ("X[2]", "A"))
    with pytest.raises(ChartError, match="share a style"):
        measured_chart(
            facts,
            "en",
            chart_id="m",
            title="t",
            description="d",
            x=X,
            y=Axis("y", "LT", "pow10", kind="log"),
            curves=[Curve("a", "plain", points), Curve("b", "plain", points)],
        )
    looks = [chart.STYLES[s] for s in chart.DATA_STYLES]
    for cue in ("colour", "dash", "marker"):
        assert len({getattr(s, cue) for s in looks}) == len(looks), f"two data styles share a {cue}"


def test_chart_words_must_name_the_same_things_in_every_language():
    assert in_language({"en": {"a": "x"}, "ru": {"a": "y"}}, "ru") == {"a": "y"}
    with pytest.raises(ChartError, match="differ in b"):
        in_language({"en": {"a": "x", "b": "z"}, "ru": {"a": "y"}}, "en")


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# Material's page background in each palette: white, and slate's hsl(225deg 15% 14%).
BACKGROUNDS = {"default": "#ffffff", "slate": "#1e2029"}


@pytest.mark.parametrize("scheme", sorted(BACKGROUNDS))
def test_every_chart_colour_reads_against_the_page_in_both_palettes(scheme):
    css = (PROJECT.root / "docs" / "stylesheets" / "site.css").read_text(encoding="utf-8")
    block = re.search(r'\[data-md-color-scheme="' + scheme + r'"\]\s*\{(.*?)\}', css, re.S)
    assert block, f"site.css sets no colours for the {scheme} palette"
    palette = dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})\s*;", block.group(1)))
    for name, style in chart.STYLES.items():
        var = re.fullmatch(r"var\((--dg-[\w-]+)\)", style.colour)
        assert var, f"chart style {name} takes its colour {style.colour} from no palette variable of site.css"
        colour = palette.get(var.group(1))
        assert colour, f"site.css sets no {var.group(1)} in the {scheme} palette"
        ratio = _contrast(colour, BACKGROUNDS[scheme])
        assert ratio >= 4.5, f"chart style {name} ({colour}) is {ratio:.2f}:1 against the {scheme} page"


def _legend_looks(svg: str) -> dict[str, str]:
    """Each legend entry's label (its words before a colon) and the stroke of the line drawn beside it."""
    looks: dict[str, str] = {}
    stroke = ""
    for el in etree.fromstring(svg.encode("utf-8")).iter("{*}line", "{*}text"):
        if etree.QName(el).localname == "line" and el.get("class") in ("ev-line", "ev-guide"):
            stroke = el.get("style", "")
        elif etree.QName(el).localname == "text" and float(el.get("x")) == 40 and stroke:
            looks["".join(el.itertext()).split(":")[0]] = stroke
            stroke = ""
    return looks


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_every_arm_keeps_its_colour_and_dash_in_every_chart_of_its_page(slug, runs):
    seen: dict[str, tuple[str, str]] = {}
    for name, svg in page_charts(runs, slug):
        for label, stroke in _legend_looks(svg).items():
            first = seen.setdefault(label, (stroke, name))
            assert first[0] == stroke, f"{label!r} is drawn {stroke!r} in {name} but {first[0]!r} in {first[1]}"
