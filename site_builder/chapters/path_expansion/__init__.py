"""Evidence page: a residual stack's Jacobian as a sum over paths (Veit, Wilber, Belongie, 2016)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ..runs import PageRun
from .figures import chart_facts, charts
from .fixtures import Constants, run_fixtures
from .trace import VERSION, Trace, parse, render

SLUG = "path_expansion"
GOLDEN_TRACE = Path(__file__).parent / "golden" / "trace.txt"

# The work this page measures; shown as a citation, not a number.
CITATION = {
    "authors": "Andreas Veit, Michael Wilber, Serge Belongie",
    "title": "Residual Networks Behave Like Ensembles of Relatively Shallow Networks",
    "year": "2016",
    "arxiv": "1605.06431",
    "url": "https://arxiv.org/abs/1605.06431",
}


def page_facts(t: Trace) -> dict[str, object]:
    """Trace fields under their keys, plus the values the page derives from them."""
    out: dict[str, object] = dict(t.facts())
    out["DERIVED.two-to-the-blocks"] = 2**t.config.blocks
    out["DERIVED.matrix-shape"] = (t.config.width, t.config.width)
    out["DERIVED.path-count-total"] = sum(k.count for k in t.lengths)
    longest = max(t.lengths, key=lambda k: k.count)
    out["DERIVED.most-common-length"] = longest.length
    biggest = max(t.lengths, key=lambda k: k.sum_norm)
    out["DERIVED.largest-contribution-length"] = biggest.length
    out.update(chart_facts(t))
    return out


def run(constants: Constants = Constants()) -> PageRun[Trace]:
    trace = run_fixtures(constants)
    return PageRun(trace, render(trace), partial(page_facts, trace), charts, extra={"citation": CITATION})


__all__ = ["CITATION", "Constants", "GOLDEN_TRACE", "SLUG", "Trace", "VERSION", "page_facts", "parse", "render", "run"]
