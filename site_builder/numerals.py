"""What counts as a number a reader sees, and the few numbers that need no provenance.

A number is

- a run of decimal digits of any script: every Unicode ``Nd`` character
  (ASCII ``0``–``9``, full-width ``４２``, Arabic-Indic ``٤٢``, mathematical
  ``𝟒``, …), with an optional sign (``-``, ``+`` or the minus U+2212),
  decimals, an exponent and the ``x`` of a shape (``2x2``);
- a run of other numeric characters (Unicode ``Nl`` and ``No``): superscript
  digits (an exponent such as ``⁴``), subscript digits (``₄₂``), fractions
  (``½``), Roman numerals, circled digits — alone or mixed with digits.

Two kinds of digits are part of a name, not numbers:

- ASCII digits glued to an ASCII letter or underscore before them are part
  of an identifier (``h1``, ``x2``, ``float64``, ``ch24``);
- subscript digits glued to a letter before them are an index (``log₁₀``,
  ``x₂``), as a MathML subscript index is (see
  :mod:`site_builder.check.document`). Subscript digits anywhere else, and
  superscript digits everywhere, are numbers.

A dotted name with a numeric segment (``residual.stack.0.branch.weight``) is
not a number either, but it is only accepted where it equals a name the
page's trace carries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# ASCII numbers; numbers written with any other numeric character are found by _unicode_runs.
NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_])[-+\u2212]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+\u2212]?[0-9]+)?(?:x[0-9]+)*")
NAME_RE = re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)+")
_NUMERIC_SEGMENT_RE = re.compile(r"(?:^|[.\-])[0-9]+(?=$|[.\-])")
_ASCII_DIGIT_RE = re.compile(r"[0-9]")  # an ASCII text without one has nothing to scan
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
SUBSCRIPT_DIGITS = frozenset("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089")
SIGNS = frozenset("-+\u2212")
_JOINERS = frozenset(".,\u066b\u066c")  # decimal and group separators between two numeric characters


@dataclass(frozen=True)
class Allowed:
    """One kind of number that needs no provenance, recognised by its words around it (on ``page`` only, if given)."""

    name: str
    pattern: re.Pattern[str]
    reason: str
    page: str | None = None


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
        page="404.html",
    ),
    Allowed(
        "search result count",
        re.compile(r"^(?:1 (?:more on this page|matching document)|Найдено 1 совпадение|Ещё 1 на этой странице)$"),
        "the theme's phrase for a search that found one result (its configuration's translations, in English and in "
        "Russian), not a value",
    ),
)


def is_numeric(char: str) -> bool:
    """A character a reader reads as (part of) a number: Unicode categories Nd, Nl and No."""
    return unicodedata.category(char)[0] == "N"


def has_number(text: str) -> bool:
    return bool(scan(text, ()))


def numeric_names(text: str) -> Iterator[re.Match[str]]:
    """Dotted or hyphenated names with a numeric segment (``residual.stack.0.branch.weight``)."""
    for m in NAME_RE.finditer(text):
        if _NUMERIC_SEGMENT_RE.search(m.group()):
            yield m


def allowed_spans(text: str, allow: Iterable[Allowed] = ALLOWED, page: str | None = None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for entry in allow:
        if entry.page is None or entry.page == page:
            spans.extend(m.span() for m in entry.pattern.finditer(text))
    return spans


@dataclass(frozen=True)
class Found:
    """A number or numeric name in a run of text, by offset."""

    start: int
    end: int
    text: str
    is_name: bool


def _unicode_runs(text: str) -> list[tuple[int, int]]:
    """Spans of numbers that hold at least one numeric character beyond ASCII (``４２``, ``٤٢``, ``⁴``, ``½``)."""
    runs: list[tuple[int, int]] = []
    end = 0
    for m in _NON_ASCII_RE.finditer(text):
        i = m.start()
        if i < end or not is_numeric(text[i]):
            continue
        start = i
        while start > 0 and (
            is_numeric(text[start - 1]) or (text[start - 1] in _JOINERS and start > 1 and is_numeric(text[start - 2]))
        ):
            start -= 1
        end = i + 1
        while end < len(text) and (
            is_numeric(text[end]) or (text[end] in _JOINERS and end + 1 < len(text) and is_numeric(text[end + 1]))
        ):
            end += 1
        body = text[start:end]
        if all(c in SUBSCRIPT_DIGITS for c in body) and start > 0 and text[start - 1].isalpha():
            continue  # an index: log₁₀, x₂
        if start > 0 and text[start - 1] in SIGNS:
            start -= 1
        runs.append((start, end))
    return runs


def scan(text: str, allow: Iterable[Allowed] = ALLOWED, page: str | None = None) -> list[Found]:
    """Numbers and numeric names in ``text`` that no allow-list entry (for ``page``) covers, in order."""
    ascii_only = text.isascii()
    if ascii_only and not _ASCII_DIGIT_RE.search(text):
        return []
    unicode = [] if ascii_only else _unicode_runs(text)
    if not unicode and not _ASCII_DIGIT_RE.search(text):
        return []
    spans = allowed_spans(text, allow, page)
    found: list[Found] = []
    pieces: list[str] = []  # the text with each numeric name blanked out
    kept = 0
    for m in numeric_names(text):
        start, end = m.span()
        found.append(Found(start, end, m.group(), True))
        pieces += (text[kept:start], " " * (end - start))
        kept = end
    masked = "".join((*pieces, text[kept:])) if pieces else text
    numbers = list(unicode)
    for m in NUMBER_RE.finditer(masked):
        if not unicode or not any(s < m.end() and m.start() < e for s, e in unicode):
            numbers.append(m.span())
    for start, end in numbers:
        if spans and any(a <= start and end <= b for a, b in spans):
            continue
        found.append(Found(start, end, text[start:end], False))
    found.sort(key=lambda f: f.start)
    return found
