"""Evidence page: statements about residual connections, each decided by a fixture."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from ..runs import PageRun
from .figures import chart_facts, charts
from .fixtures import Constants, run_fixtures
from .trace import SQRT_LAW_EXPONENT, VERSION, Trace, parse, render

SLUG = "claims"
GOLDEN_TRACE = Path(__file__).parent / "golden" / "trace.txt"


def page_facts(t: Trace) -> dict[str, object]:
    """Trace fields under their keys, plus the values the page derives from them."""
    out: dict[str, object] = dict(t.facts())
    s = t.scalar_stack
    out["DERIVED.claim-1.one-plus-alpha"] = 1.0 + s.alpha
    out["DERIVED.claim-1.abs-alpha"] = abs(s.alpha)
    out["DERIVED.claim-1.gap-rounded"] = round(s.log10_gap)
    out["DERIVED.claim-1.gap-miss"] = round(s.log10_gap) - s.claimed_gap
    out["DERIVED.claim-2.weight-shape"] = (len(t.cancelling_branch.input), len(t.cancelling_branch.upstream))
    q = t.quadratic_step
    out["DERIVED.claim-4.local-derivative"] = 1.0 + 2.0 * q.coefficient * q.x
    out["DERIVED.claim-5.target-exponent"] = SQRT_LAW_EXPONENT
    for g in t.growth:
        rows = t.stream(g.family)
        # Ratio of the deepest to the shallowest stream norm, in orders of magnitude.
        out[f"DERIVED.claim-5.{g.family}.orders"] = math.log10(rows[-1].norm / rows[0].norm)
    out.update(chart_facts(t))
    return out


def run(constants: Constants = Constants()) -> PageRun[Trace]:
    trace = run_fixtures(constants)
    return PageRun(trace, render(trace), partial(page_facts, trace), charts)


__all__ = ["Constants", "GOLDEN_TRACE", "SLUG", "Trace", "VERSION", "page_facts", "parse", "render", "run"]
