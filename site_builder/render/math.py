"""Math rendered at build time: LaTeX to MathML with latex2mathml, numbers taken from the facts.

Inside the LaTeX a template writes numbers only through three macros, never
as digits:

``\\tv{KEY}{FMT}``
    one value, e.g. ``\\tv{FORWARD.output[1]}{short}``
``\\tvec{KEY}``
    a vector as ``[a, b, …]``, each element its own value (format ``short``)
``\\tmat{VALUES-KEY}{SHAPE-KEY}``
    a row-major matrix in brackets, each element its own value (format ``short``)
``\\lit{ID}``
    a literal the page folder declares in page.toml (``σ^{\\lit{square}}``), format ``count``

Digits typed into the LaTeX are refused, except in subscript indices
(``\\mathrm{Linear}_2``, ``x_{l+1}``); a literal the page declares is ``\\lit{ID}``. Each value becomes ``<mrow class="tv" data-trace="KEY" data-format="FMT"><mn>…</mn></mrow>``,
so the checker reads math exactly as it reads prose.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from latex2mathml.converter import convert

from ..errors import SiteBuilderError
from ..facts import FactBook

_TV = re.compile(r"\\tv\{(?P<key>[^{}]+)\}\{(?P<fmt>[^{}]+)\}")
_TVEC = re.compile(r"\\tvec\{(?P<key>[^{}]+)\}")
_LIT = re.compile(r"\\lit\{(?P<id>[^{}]+)\}")
_TMAT = re.compile(r"\\tmat\{(?P<key>[^{}]+)\}\{(?P<shape>[^{}]+)\}")
_SLOT = re.compile(r"<mtext>(?P<slot>TVSLOT[A-Z]+)</mtext>")
_TEXT_NODE = re.compile(r">([^<]+)<")
_NUMBER = re.compile(r"^\u2212?[0-9]+(\.[0-9]+)?%?$")
# Characters Markdown would read as markup if they appeared in inline math text.
_MARKDOWN_SENSITIVE = {c: f"&#x{ord(c):05X};" for c in "*_`[]\\{}!<>|~^"}


class MathError(SiteBuilderError, ValueError):
    """The LaTeX could not be converted, or a value macro was malformed."""


def _slot_name(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return "TVSLOT" + letters


class MathRenderer:
    """Turns LaTeX with value macros into MathML whose numbers carry their provenance."""

    def __init__(self, book: FactBook) -> None:
        self.book = book

    def _length(self, key: str) -> int:
        value: Any = self.book.value(key)
        if not isinstance(value, (tuple, list)):
            raise MathError(f"\\tvec{{{key}}} needs a vector-valued fact, got {value!r}")
        return len(value)

    def _expand(self, latex: str) -> str:
        def vec(m: re.Match[str]) -> str:
            key = m["key"]
            items = ", ".join(f"\\tv{{{key}[{i}]}}{{short}}" for i in range(self._length(key)))
            return f"\\left[ {items} \\right]"

        def mat(m: re.Match[str]) -> str:
            key, shape = m["key"], tuple(self.book.value(m["shape"]))
            if len(shape) != 2 or shape[0] * shape[1] != self._length(key):
                raise MathError(f"\\tmat{{{key}}}{{{m['shape']}}}: shape {shape} does not fit the values")
            rows = [
                " & ".join(f"\\tv{{{key}[{r * shape[1] + c}]}}{{short}}" for c in range(shape[1]))
                for r in range(shape[0])
            ]
            return "\\left[ \\begin{matrix} " + " \\\\ ".join(rows) + " \\end{matrix} \\right]"

        latex = _LIT.sub(lambda m: f"\\tv{{LIT.{m['id']}}}{{count}}", latex)
        return _TVEC.sub(vec, _TMAT.sub(mat, latex))

    def render(self, latex: str, display: bool = False, spoken: str | None = None) -> str:
        """MathML for ``latex``; ``spoken``, if given, becomes its accessible name (``aria-label``).

        A spoken form is for math that must carry a name of its own, such as a table's row
        header: assistive software and checkers that do not read MathML get the words.
        """
        if spoken is not None and (not spoken.strip() or re.search(r"[0-9]", spoken)):
            raise MathError(f"the spoken form of {latex!r} must be words without digits, got {spoken!r}")
        values: dict[str, tuple[str, str]] = {}

        def slot(m: re.Match[str]) -> str:
            name = _slot_name(len(values))
            values[name] = (m["key"], m["fmt"])
            return f"\\text{{{name}}}"

        source = _TV.sub(slot, self._expand(latex))
        if "\\tv" in source:
            raise MathError(f"malformed value macro in {latex!r}: write \\tv{{KEY}}{{FORMAT}}")
        # Digits may only be subscript indices (Linear_2); any other number must come from a fact.
        bare = re.sub(r"_(?:[0-9]|\{[^{}]*\})", "", re.sub(r"TVSLOT[A-Z]+", "", source))
        if re.search(r"[0-9]", bare):
            raise MathError(f"a digit was typed into math {latex!r}: write numbers with \\tv{{KEY}}{{FORMAT}}")
        try:
            mathml = convert(source, display="block" if display else "inline")
        except Exception as exc:  # latex2mathml raises several unrelated types
            raise MathError(f"cannot convert {latex!r} to MathML: {exc}") from exc

        def fill(m: re.Match[str]) -> str:
            key, fmt = values.pop(m["slot"])
            text = self.book.text(key, fmt)
            tag = "mn" if _NUMBER.match(text) else "mtext"
            return (
                f'<mrow class="tv" data-trace="{escape(key)}" data-format="{escape(fmt)}">'
                f"<{tag}>{escape(text)}</{tag}></mrow>"
            )

        mathml = _SLOT.sub(fill, mathml)
        if values:
            raise MathError(f"value slots lost while converting {latex!r}: {sorted(values)}")
        mathml = mathml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")
        if spoken is not None:
            mathml = mathml.replace("<math ", f'<math aria-label="{escape(spoken)}" ', 1)
        # \bar{x} is an accent on one letter (read "x bar"), not a stretched overline.
        mathml = mathml.replace("<mover>", '<mover accent="true">')
        return _TEXT_NODE.sub(lambda m: ">" + "".join(_MARKDOWN_SENSITIVE.get(c, c) for c in m[1]) + "<", mathml)
