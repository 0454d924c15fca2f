"""What one run of a page's fixtures produced: as its page module returns it, and as the build reads it.

A page module's ``run()`` returns a :class:`PageRun`: the typed trace, its
text, and how the page derives its facts and charts from them. The plugin
and the checker read the :class:`RunResult` that :meth:`PageRun.result` makes
of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Mapping, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RunResult:
    """What one page's fixtures produced."""

    trace_text: str
    report_text: str | None
    facts: Mapping[str, Any]  # provenance key -> value (see site_builder.facts)
    context: Mapping[str, Any] = field(default_factory=dict)  # extra template context (typed trace, ...)


@dataclass(frozen=True)
class PageRun(Generic[T]):
    """One run of a page's fixtures: the typed trace, its text, and what the page derives from them.

    ``derive`` computes the page's facts (provenance key -> value) when they are
    asked for; ``draw`` draws the page's charts from the trace and those facts;
    ``extra`` is template context that no run changes (a citation).
    """

    trace: T
    trace_text: str
    derive: Callable[[], dict[str, object]] = field(repr=False, compare=False)
    draw: Callable[[T, Mapping[str, object]], Mapping[str, str]] | None = field(default=None, repr=False, compare=False)
    extra: Mapping[str, object] = field(default_factory=dict, repr=False, compare=False)
    report_text: str | None = None  # the learner report, for a page that publishes one

    @property
    def facts(self) -> dict[str, object]:
        """Provenance key -> value for everything the page may show."""
        return self.derive()

    @property
    def context(self) -> dict[str, object]:
        """What the page template reads besides the facts: the typed trace, the extra context, the drawn charts."""
        return self._context(self.facts)

    def _context(self, facts: Mapping[str, object]) -> dict[str, object]:
        out: dict[str, object] = {"trace": self.trace, **self.extra}
        if self.draw is not None:
            out["charts"] = self.draw(self.trace, facts)
        return out

    def result(self) -> RunResult:
        """The run as the plugin and the checker read it; the template also sees the run itself as ``run``.

        The facts are derived once, and the charts are drawn from those same facts.
        """
        facts = self.facts
        return RunResult(self.trace_text, self.report_text, facts, {**self._context(facts), "run": self})
