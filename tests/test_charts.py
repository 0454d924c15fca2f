"""Charts of the evidence pages: deterministic SVG in which every shown number is a verified fact."""

from __future__ import annotations

import pytest
from lxml import etree

from site_builder.render import charts as chart
from site_builder.render.charts import Axis, ChartError, Series, exponent_ticks, line_chart, linear_ticks
from site_builder.check.document import Facts, check_svg
from site_builder.check.excerpts import Sources
from site_builder.check.numbers import has_number
from site_builder.facts import format_fact

from site_builder.pipeline import Pipeline

from helpers import PROJECT

RUNS = {run.page.slug: run for run in Pipeline(PROJECT, warn=lambda line: None).run()}
CHARTS = [(slug, name, svg) for slug, run in RUNS.items() for name, svg in run.charts.items()]
IDS = [f"{slug}-{name}" for slug, name, _ in CHARTS]


@pytest.mark.parametrize("slug,name,svg", CHARTS, ids=IDS)
def test_the_site_checker_accepts_every_chart(slug, name, svg):
    report = check_svg(svg.encode("utf-8"), f"evidence/{slug}", Facts(RUNS[slug].facts), Sources(PROJECT.root))
    assert report.problems == []
    assert report.values >= 8


@pytest.mark.parametrize("slug,name,svg", CHARTS, ids=IDS)
def test_every_number_in_a_chart_is_a_fact_shown_as_formatted(slug, name, svg):
    root = etree.fromstring(svg.encode("utf-8"))
    texts = [t for t in root.iter("{*}text")]
    facts = RUNS[slug].facts
    shown = 0
    for t in texts:
        body = "".join(t.itertext())
        if t.get("data-trace"):
            assert body == format_fact(facts, t.get("data-trace"), t.get("data-format"))
            shown += 1
        else:
            assert not has_number(body), body
    assert shown >= 8
    title = root.find("{*}title")
    assert title is not None and root.get("role") == "img"
    assert root.get("aria-labelledby") == f"{root.get('id')}-title {root.get('id')}-desc"


@pytest.mark.parametrize("slug", sorted({slug for slug, _, _ in CHARTS}))
def test_charts_are_byte_for_byte_reproducible(slug, runs):
    assert runs[slug].charts == RUNS[slug].charts


def test_colours_come_from_the_palette_and_forced_colours_are_handled():
    for _, _, svg in CHARTS:
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


def test_ticks():
    assert exponent_ticks([1.3e-31, 153.0, 8.0]) == (-40, -30, -20, -10, 0, 10)
    assert exponent_ticks([15.0, 2.2e8]) == (0, 2, 4, 6, 8, 10)
    assert exponent_ticks([0.5]) == (-1, 0)
    assert linear_ticks(0, 100) == (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)
    assert linear_ticks(0, 6) == (0.0, 2.0, 4.0, 6.0)
    assert linear_ticks(0, 2.10556) == (0.0, 0.5, 1.0, 1.5, 2.0, 2.5)
    with pytest.raises(ChartError):
        exponent_ticks([0.0, -1.0])
    assert chart.STYLES["identity"].dash == "" and chart.STYLES["learned"].dash
