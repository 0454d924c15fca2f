"""What counts as a number a reader sees, and the few numbers that need no provenance.

A number is a run of ASCII digits with an optional sign (``-``, ``+`` or the
minus U+2212), decimals, an exponent and the ``x`` of a shape (``2x2``), or a
run of superscript digits (an exponent such as ``⁴``). Digits glued to a
letter or underscore before them are part of an identifier (``h1``, ``x2``,
``float64``, ``ch24``) and are not numbers; subscript digits are indices.

A dotted name with a numeric segment (``residual.stack.0.branch.weight``) is
not a number either, but it is only accepted where it equals a name the
page's trace carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9_])[-+\u2212]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+\u2212]?[0-9]+)?(?:x[0-9]+)*"
    r"|[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+"
)
NAME_RE = re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)+")
_NUMERIC_SEGMENT_RE = re.compile(r"(?:^|[.\-])[0-9]+(?=$|[.\-])")
_DIGIT_RE = re.compile(r"[0-9\u2070\u00b9\u00b2\u00b3\u2074-\u2079]")  # nothing to scan without one


@dataclass(frozen=True)
class Allowed:
    """One kind of number that needs no provenance, recognised by its words around it."""

    name: str
    pattern: re.Pattern[str]
    reason: str


# The only numbers a page may show without provenance. Each pattern matches the
# number together with the words that make it what it is; a number counts as
# allowed when it lies inside a match. Everything else a page shows comes from a
# trace, or from what its page folder declares (chapter number, citations,
# literals), and carries its provenance like any other value.
ALLOWED: tuple[Allowed, ...] = (
    Allowed(
        "404 page heading",
        re.compile(r"\b404 - Not found\b"),
        "the HTTP status in the theme's page-not-found heading",
    ),
)


def has_number(text: str) -> bool:
    return NUMBER_RE.search(text) is not None


def numeric_names(text: str) -> Iterator[re.Match[str]]:
    """Dotted or hyphenated names with a numeric segment (``residual.stack.0.branch.weight``)."""
    for m in NAME_RE.finditer(text):
        if _NUMERIC_SEGMENT_RE.search(m.group()):
            yield m


def allowed_spans(text: str, allow: Iterable[Allowed] = ALLOWED) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for entry in allow:
        spans.extend(m.span() for m in entry.pattern.finditer(text))
    return spans


@dataclass(frozen=True)
class Found:
    """A number or numeric name in a run of text, by offset."""

    start: int
    end: int
    text: str
    is_name: bool


def scan(text: str, allow: Iterable[Allowed] = ALLOWED) -> list[Found]:
    """Numbers and numeric names in ``text`` that no allow-list entry covers, in order."""
    if not _DIGIT_RE.search(text):
        return []
    spans = allowed_spans(text, allow)
    found: list[Found] = []
    masked = list(text)
    for m in numeric_names(text):
        found.append(Found(m.start(), m.end(), m.group(), True))
        masked[m.start() : m.end()] = " " * (m.end() - m.start())
    for m in NUMBER_RE.finditer("".join(masked)):
        if any(a <= m.start() and m.end() <= b for a, b in spans):
            continue
        found.append(Found(m.start(), m.end(), m.group(), False))
    found.sort(key=lambda f: f.start)
    return found
