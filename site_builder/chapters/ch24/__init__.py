"""Chapter 24 — Keep an identity path around each learned update (``y = x + F(x)``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ...fixtures import FixtureError
from ..runs import PageRun
from .fixtures import Constants, Fixtures, run_fixtures
from .report import CHAPTER, parse_report, render_report
from .trace import Trace, parse, render

SLUG = "ch24"
GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN_TRACE = GOLDEN_DIR / "trace.txt"
GOLDEN_REPORT = GOLDEN_DIR / "report.txt"


@dataclass(frozen=True)
class Reference:
    """A primary source the chapter page cites and links."""

    authors: str  # as the page names them
    year: int
    title: str
    arxiv: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


REFERENCES: tuple[Reference, ...] = (
    Reference("He, Zhang, Ren and Sun", 2015, "Deep Residual Learning for Image Recognition", "1512.03385"),
    Reference("Vaswani et al.", 2017, "Attention Is All You Need", "1706.03762"),
)


@dataclass(frozen=True)
class ChapterRun(PageRun[Trace]):
    """A run of the chapter's fixtures: besides the trace, the fixtures its facts and report read."""

    fixtures: Fixtures = field(kw_only=True)

    @property
    def references(self) -> tuple[Reference, ...]:
        return REFERENCES


def chapter_facts(fx: Fixtures) -> dict[str, object]:
    """Provenance key -> value for everything the chapter page may show."""
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
    out["MEASURED.same-tensor-gradient"] = fx.same_tensor_gradient
    # The identity's own factor in each residual layer: residual multiplier minus the branch's.
    out["DERIVED.identity-multiplier"] = resid_m - plain_m
    # What the zero-weight branch added: y - x, element by element.
    out["DERIVED.zero-branch-output"] = tuple(
        y - x for y, x in zip(t.zero_branch.output, t.forward.input)
    )
    out["DERIVED.chapter"] = int(CHAPTER.split("-", 1)[0])
    out["DERIVED.next-chapter"] = out["DERIVED.chapter"] + 1
    return out


def run(constants: Constants = Constants()) -> ChapterRun:
    fx = run_fixtures(constants)
    return ChapterRun(
        fx.trace, render(fx.trace), partial(chapter_facts, fx), report_text=render_report(fx), fixtures=fx
    )


__all__ = [
    "ChapterRun", "Constants", "FixtureError", "GOLDEN_REPORT", "GOLDEN_TRACE", "REFERENCES", "Reference", "SLUG", "Trace",
    "chapter_facts", "parse", "parse_report", "render", "run",
]
