"""Every page that is generated from a trace, in navigation order.

Each entry says how to run its fixtures, where its golden files live, which
template renders it and where it sits in the site. The MkDocs plugin and the
checker both iterate :data:`PAGES`; adding a page means adding a folder under
``chapters/`` and an entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from .runs import RunResult

PACKAGE_DIR = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSource:
    slug: str  # short id, also the folder under chapters/
    title: str
    page_path: str  # the generated Markdown page's path inside the site (virtual, never written to docs/)
    template: str  # template under templates/
    trace_id: str  # version tag on the trace's BEGIN line
    golden_trace: Path
    golden_report: Path | None
    run: Callable[[], RunResult]
    # Source that decides the fixtures' output: hashed for the fixture cache key.
    sources: tuple[Path, ...] = ()
    # Downloads published beside the page: file name -> which text (``trace`` or ``report``).
    downloads: Mapping[str, str] = field(default_factory=dict)
    # Fact keys the page shows; the checker fails when one is missing (as itself or as an element KEY[i]).
    # An entry may name where the value is drawn: "svg#ID g.node.ROLE KEY", "table#ID KEY" (tags, #id, .class).
    shows: tuple[str, ...] = ()


# The code every page's run goes through: the engine, the trace rules, the facts, the shared run.
_ENGINE = tuple(
    PACKAGE_DIR / name for name in ("autograd", "nn.py", "trace", "facts.py", "fixtures.py", "chapters/runs.py")
)


def _run(slug: str) -> Callable[[], RunResult]:
    """The run of the page in folder ``slug``: its module's ``run()``, as the build reads it."""

    def run() -> RunResult:
        return importlib.import_module(f"{__name__}.{slug}").run().result()

    run.__name__ = f"_{slug}"
    return run


def _evidence_page(slug: str, title: str, page_path: str, trace_id: str) -> PageSource:
    folder = PACKAGE_DIR / "chapters" / slug
    trace_format = importlib.import_module(f"{__name__}.{slug}.trace")
    return PageSource(
        slug=slug,
        title=title,
        page_path=page_path,
        template=f"{slug}/page.md.j2",
        trace_id=trace_id,
        golden_trace=folder / "golden" / "trace.txt",
        golden_report=None,
        run=_run(slug),
        sources=(*_ENGINE, PACKAGE_DIR / "chapters" / "chart.py", folder),
        downloads={f"{trace_id}.trace.txt": "trace"},
        shows=trace_format.all_keys(),  # every field of the trace appears on its page
    )


PAGES: list[PageSource] = [
    PageSource(
        slug="ch24",
        title="Keep an identity path around each learned update",
        page_path="chapter-24/index.md",
        template="ch24/page.md.j2",
        trace_id="residual-connections-v1",
        golden_trace=PACKAGE_DIR / "chapters" / "ch24" / "golden" / "trace.txt",
        golden_report=PACKAGE_DIR / "chapters" / "ch24" / "golden" / "report.txt",
        run=_run("ch24"),
        sources=(*_ENGINE, PACKAGE_DIR / "chapters" / "ch24"),
        downloads={"residual-connections-v1.trace.txt": "trace", "chapter-24-report.txt": "report"},
        shows=(
            "FORWARD.input", "FORWARD.branch", "FORWARD.output",
            "BACKWARD.upstream", "BACKWARD.identity", "BACKWARD.branch", "BACKWARD.input",
            "PARAMETER.name", "PARAMETER.shape", "PARAMETER.gradient",
            "ZERO-BRANCH.output", "ZERO-BRANCH.input-gradient", "ZERO-BRANCH.weight-gradient",
            "ZERO-BRANCH.weight-gradient-nonzero",
            "SHAPE-ERROR.identity", "SHAPE-ERROR.branch",
            *(f"STACK[{depth}].{column}" for depth in range(5) for column in ("plain", "residual")),
            "STACK-GRADIENT.plain", "STACK-GRADIENT.residual", "STACK-GRADIENT.parameters",
            "GRADCHECK.input-checks", "GRADCHECK.weight-checks", "GRADCHECK.tolerance", "GRADCHECK.passed",
            # The figure: every node of both route diagrams shows its vector, the stack table every row,
            # the evidence panels their values.
            *(
                f"svg#routes-{direction} g.node.{role} {key}"
                for direction, roles in (
                    ("forward", (("input", "FORWARD.input"), ("identity", "FORWARD.input"),
                                 ("learned", "FORWARD.branch"), ("output", "FORWARD.output"))),
                    ("backward", (("input", "BACKWARD.upstream"), ("identity", "BACKWARD.identity"),
                                  ("learned", "BACKWARD.branch"), ("output", "BACKWARD.input"))),
                )
                for role, key in roles
            ),
            *(f"table#stack-table STACK[{depth}].{column}" for depth in range(5) for column in ("plain", "residual")),
            "table#stack-table STACK-GRADIENT.plain", "table#stack-table STACK-GRADIENT.residual",
            *(
                f"figure#routes-figure {key}"
                for key in (
                    "PARAMETER.name", "PARAMETER.gradient", "ZERO-BRANCH.output", "ZERO-BRANCH.input-gradient",
                    "ZERO-BRANCH.weight-gradient", "ZERO-BRANCH.weight-gradient-nonzero", "SHAPE-ERROR.identity",
                    "SHAPE-ERROR.branch", "SHAPE-ERROR.broadcastable", "SHAPE-ERROR.rejected",
                    "GRADCHECK.input-checks", "GRADCHECK.weight-checks", "GRADCHECK.tolerance", "GRADCHECK.passed",
                    "PROOF.identity", "PROOF.gradient", "PROOF.parameters", "PROOF.broadcast",
                    "STACK-GRADIENT.parameters",
                )
            ),
        ),
    ),
    _evidence_page("deep_stack", "The gradient highway in a deep stack", "evidence/deep-stack.md", "deep-stack-v1"),
    _evidence_page("identity_init", "Identity at initialization", "evidence/identity-init.md", "identity-init-v1"),
    _evidence_page("path_expansion", "The path expansion", "evidence/path-expansion.md", "path-expansion-v1"),
    _evidence_page("claims", "Claims, tested", "evidence/claims.md", "claims-v1"),
]


def page(slug: str) -> PageSource:
    for p in PAGES:
        if p.slug == slug:
            return p
    raise KeyError(f"no generated page {slug!r}; known: {', '.join(p.slug for p in PAGES)}")
