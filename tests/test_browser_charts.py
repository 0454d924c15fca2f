"""The evidence charts in Debian's Chromium: they fit a phone without sideways scrolling, and no two labels collide.

Same set-up as ``test_browser.py`` (the site served from 127.0.0.1, Chromium
driven by Playwright); the geometry is the browser's own, after fonts and CSS,
so an estimate in the chart code that turns out too small is caught here.
"""

from __future__ import annotations

import pytest
from test_browser import DESKTOP, PHONE, _shot, opened

from helpers import PAGES

CHART_PAGES = [p.url for p in PAGES if (p.folder / "figures.py").is_file()]
WIDTHS = {"phone": PHONE, "desktop": DESKTOP}

# For every chart: its box on the page, whether any ancestor scrolls sideways, and each <text>'s box in the
# chart's own units (getBBox), with the viewBox those units live in.
_GEOMETRY = """() => [...document.querySelectorAll("svg.ev-chart")].map(svg => {
    const box = svg.getBoundingClientRect();
    const scrolls = [];
    for (let el = svg.parentElement; el && el !== document.body; el = el.parentElement) {
        if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible") {
            scrolls.push(el.tagName + "." + el.className);
        }
    }
    const vb = svg.viewBox.baseVal;
    const texts = [...svg.querySelectorAll("text")].map(t => {
        const b = t.getBBox();
        return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height};
    });
    return {id: svg.id, left: box.left, right: box.right, width: box.width, scrolls,
            viewBox: [vb.x, vb.y, vb.width, vb.height], texts,
            fontSize: texts.length ? parseFloat(getComputedStyle(svg.querySelector("text")).fontSize) : 0};
})"""


def _overlap(a: dict, b: dict) -> float:
    """The area two boxes share (0 when they only touch)."""
    w = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return w * h if w > 0.5 and h > 0.5 else 0.0


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("path", CHART_PAGES)
def test_charts_fit_their_column_and_no_two_labels_overlap(browser, server, path, width):
    viewport = WIDTHS[width]
    with opened(browser, server, path, viewport=viewport, device_scale_factor=1) as v:
        charts = v.page.evaluate(_GEOMETRY)
        assert charts, f"{path} draws no chart"
        for c in charts:
            where = f"{path} svg#{c['id']} at {viewport['width']}px"
            assert c["left"] >= 0 and c["right"] <= viewport["width"], f"{where} is cut off: {c['left']}..{c['right']}"
            assert c["scrolls"] == [], f"{where} scrolls sideways inside {c['scrolls']}"
            scale = c["width"] / c["viewBox"][2]
            assert c["fontSize"] * scale >= 11, f"{where}: text is {c['fontSize'] * scale:.1f}px, too small to read"
            x0, y0, w, h = c["viewBox"]
            for t in c["texts"]:
                inside = x0 <= t["x"] and t["x"] + t["w"] <= x0 + w and y0 <= t["y"] and t["y"] + t["h"] <= y0 + h
                assert inside, f"{where}: {t['text']!r} runs outside the drawing"
            texts = c["texts"]
            for i, a in enumerate(texts):
                for b in texts[i + 1 :]:
                    assert not _overlap(a, b), f"{where}: {a['text']!r} overlaps {b['text']!r}"
        _shot(v.page, f"charts-{width}-{path.strip('/').replace('/', '-')}")
