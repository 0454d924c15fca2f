"""Chapter 24 — Keep an identity path around each learned update (``y = x + F(x)``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import trace as trace_format
from .fixtures import Constants, FixtureError, Fixtures, run_fixtures
from .report import parse_report, render_report
from .trace import Trace, parse, render

SLUG = "ch24"
TITLE = "Keep an identity path around each learned update"
GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN_TRACE = GOLDEN_DIR / "trace.txt"
GOLDEN_REPORT = GOLDEN_DIR / "report.txt"


@dataclass(frozen=True)
class ChapterRun:
    fixtures: Fixtures
    trace: Trace
    trace_text: str
    report_text: str

    @property
    def facts(self) -> dict[str, object]:
        """Provenance key -> value for everything the chapter page may show."""
        return chapter_facts(self.fixtures)


def chapter_facts(fx: Fixtures) -> dict[str, object]:
    t = fx.trace
    out: dict[str, object] = dict(t.facts())
    out["REPORT.branch_parameter.values"] = fx.branch_weight
    out["REPORT.branch_parameter.shape"] = fx.branch_weight_shape
    out["REPORT.same_fixture_replays_bitwise"] = fx.replays_bitwise
    first, second, last = t.stack[0], t.stack[1], t.stack[-1]
    plain_m = second.plain[0] / first.plain[0]
    resid_m = second.residual[0] / first.residual[0]
    out["DERIVED.plain-multiplier"] = plain_m
    out["DERIVED.residual-multiplier"] = resid_m
    out["DERIVED.depth"] = last.depth
    out["DERIVED.plain-retention-exact"] = plain_m**last.depth
    out["DERIVED.residual-retention-exact"] = resid_m**last.depth
    out["DERIVED.same-tensor-gradient"] = tuple(u + u for u in t.backward.upstream)
    return out


def run(constants: Constants = Constants()) -> ChapterRun:
    fx = run_fixtures(constants)
    return ChapterRun(fx, fx.trace, render(fx.trace), render_report(fx))


__all__ = [
    "ChapterRun", "Constants", "FixtureError", "Fixtures", "GOLDEN_REPORT", "GOLDEN_TRACE", "SLUG",
    "TITLE", "Trace", "parse", "parse_report", "render", "render_report", "run", "run_fixtures", "trace_format",
]
