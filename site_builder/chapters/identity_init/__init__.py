"""Evidence page: a residual stack is the identity at initialization when its branches start at zero."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from ..runs import PageRun
from .figures import chart_facts, charts
from .fixtures import Constants, run_fixtures
from .trace import DEPTHS, VERSION, Trace, parse, render

SLUG = "identity_init"
GOLDEN_TRACE = Path(__file__).parent / "golden" / "trace.txt"


def page_facts(t: Trace) -> dict[str, object]:
    """Trace fields under their keys, plus the values the page derives from them."""
    out: dict[str, object] = dict(t.facts())
    out["DERIVED.deepest"] = max(DEPTHS)
    out["DERIVED.he-variance"] = t.config.he_std**2
    rows = t.depths
    # Average factor by which the He deviation grows per extra block, first to last depth.
    out["DERIVED.he-growth-per-block"] = (rows[-1].he_deviation / rows[0].he_deviation) ** (
        1.0 / (rows[-1].depth - rows[0].depth)
    )
    out["DERIVED.he-deviation-orders"] = math.log10(rows[-1].he_deviation / rows[0].he_deviation)
    out.update(chart_facts(t))
    return out


def run(constants: Constants = Constants()) -> PageRun[Trace]:
    trace = run_fixtures(constants)
    return PageRun(trace, render(trace), partial(page_facts, trace), charts)


__all__ = ["Constants", "GOLDEN_TRACE", "SLUG", "Trace", "VERSION", "page_facts", "parse", "render", "run"]
