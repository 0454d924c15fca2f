"""Evidence page: the gradient highway in a deep tanh stack, plain against residual."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from ..runs import PageRun
from .figures import chart_facts, charts
from .fixtures import Constants, run_fixtures
from .trace import DEPTHS, PUBLISHED_DEPTHS, VERSION, Trace, parse, render

SLUG = "deep_stack"
GOLDEN_TRACE = Path(__file__).parent / "golden" / "trace.txt"


def page_facts(t: Trace) -> dict[str, object]:
    """Trace fields under their keys, plus the values the page derives from them."""
    out: dict[str, object] = dict(t.facts())
    c = t.config
    out["DERIVED.sqrt-width"] = math.sqrt(c.width)
    out["DERIVED.weight-scale"] = c.scale / math.sqrt(c.width)
    out["DERIVED.upstream-entries"] = c.batch * c.width
    out["DERIVED.extra-draws"] = c.drawn - c.published_bank
    out["DERIVED.deepest"] = max(DEPTHS)
    out["DERIVED.deepest-published"] = max(PUBLISHED_DEPTHS)
    for row in t.depths:
        out[f"DERIVED.depth-{row.depth}.orders"] = math.log10(row.residual_norm / row.plain_norm)
        out[f"DERIVED.depth-{row.depth}.plain-survival"] = row.plain_norm / c.upstream_norm
    first, last = t.depths[0], t.depths[-1]
    # Geometric-mean factor by which each extra plain layer shrinks the input-gradient norm.
    out["DERIVED.plain-factor-per-layer"] = (last.plain_norm / first.plain_norm) ** (1.0 / (last.depth - first.depth))
    out.update(chart_facts(t))
    return out


def run(constants: Constants = Constants()) -> PageRun[Trace]:
    trace = run_fixtures(constants)
    return PageRun(trace, render(trace), partial(page_facts, trace), charts)


__all__ = ["Constants", "GOLDEN_TRACE", "SLUG", "Trace", "VERSION", "page_facts", "parse", "render", "run"]
