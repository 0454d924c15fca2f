"""Evidence page: a residual stack's Jacobian as a sum over paths (Veit, Wilber, Belongie, 2016)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .figures import chart_facts, charts
from .fixtures import Constants, run_fixtures
from .trace import BLOCKS, VERSION, WIDTH, Trace, parse, render

SLUG = "path_expansion"
TITLE = "The path expansion"
GOLDEN_TRACE = Path(__file__).parent / "golden" / "trace.txt"

# The work this page measures; shown as a citation, not a number.
CITATION = {
    "authors": "Andreas Veit, Michael Wilber, Serge Belongie",
    "title": "Residual Networks Behave Like Ensembles of Relatively Shallow Networks",
    "year": "2016",
    "arxiv": "1605.06431",
    "url": "https://arxiv.org/abs/1605.06431",
}


@dataclass(frozen=True)
class PageRun:
    trace: Trace
    trace_text: str

    @property
    def facts(self) -> dict[str, object]:
        return page_facts(self.trace)

    @property
    def context(self) -> dict[str, object]:
        """What the page template reads besides the facts: the typed trace and the drawn charts."""
        return {"trace": self.trace, "citation": CITATION, "charts": charts(self.trace, self.facts)}


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


def run(constants: Constants = Constants()) -> PageRun:
    trace = run_fixtures(constants)
    return PageRun(trace, render(trace))


__all__ = [
    "BLOCKS", "CITATION", "Constants", "GOLDEN_TRACE", "PageRun", "SLUG", "TITLE", "Trace", "VERSION", "WIDTH",
    "page_facts", "parse", "render", "run",
]
