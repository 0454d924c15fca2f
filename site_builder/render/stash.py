"""Raw HTML that Markdown passes through unchanged, kept out of its way while a page is converted.

A generated page carries its drawings (SVG charts and diagrams), its formulas
(MathML) and its code excerpts (highlighted by :func:`~site_builder.render.pages.code_figure`)
as raw HTML: more than half of its Markdown. Markdown copies such HTML to the
page as it is, but reads every tag of it first, and MkDocs reads it all once
more looking for anchors; that reading was most of a page's conversion.

:func:`stash` swaps each such element for an empty element of the same name
with a marker attribute (so Markdown meets the same block or inline element,
in the same place) and :meth:`Stash.restore` puts the originals back into the
converted HTML. Nothing is stashed on a Markdown heading line (the table of
contents reads a heading's text). When a marker does not come back exactly
once, verbatim (it sat in a code block, say), :meth:`Stash.restore` returns
``None`` and the page is converted again whole.

So these elements reach the page exactly as they were rendered, which is what
converting the page whole gives too, except where Markdown would have read into
them: MkDocs' ``md_in_html`` lays out again an element inside a ``markdown``
block, and text between the tags of inline HTML can be taken for emphasis.
Every page of this site converts to the very same HTML either way (a test
builds the export without the plugin and compares).
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass

# An element written by our renderer: a drawing, a formula, a code excerpt. Balanced by construction
# (checked below: a match holding a second opening tag of its name is left alone).
_ELEMENT = re.compile(r'<(svg|math)\b[^>]*>.*?</\1>|<(figure) class="code-excerpt"[^>]*>.*?</figure>', re.S)
_HEADING_LINE = re.compile(r"[ ]{0,3}#")
# What MkDocs reads from raw HTML for its anchor check: id="…" (and <a name="…">).
_ANCHOR = re.compile(r'<([a-zA-Z][\w:-]*)\s[^>]*?\b(id|name)="([^"]*)"')


@dataclass(frozen=True)
class Stash:
    """The Markdown with its large raw HTML swapped out, and what to put back."""

    markdown: str
    marker: str  # the marker attribute's value prefix, unique to this Markdown
    elements: tuple[str, ...]

    def restore(self, converted: str) -> str | None:
        """The converted HTML with every element back in place; ``None`` if a marker did not come back once."""
        if not self.elements:
            return converted
        seen = [0] * len(self.elements)

        def put_back(m: re.Match[str]) -> str:
            i = int(m[2])
            seen[i] += 1
            return self.elements[i]

        restored = re.sub(rf'<(svg|math|figure) data-stash="{self.marker}-(\d+)"></\1>', put_back, converted)
        return restored if all(n == 1 for n in seen) else None

    def anchors(self) -> set[str]:
        """The ids (and ``<a name>``) inside the stashed elements, which MkDocs would have found in the Markdown."""
        found: set[str] = set()
        for element in self.elements:
            for tag, attr, value in _ANCHOR.findall(element):
                if attr == "id" or tag.lower() == "a":
                    found.add(html.unescape(value))
        return found


def stash(markdown: str) -> Stash:
    """``markdown`` with each drawing, formula and code excerpt swapped for an empty element of the same name."""
    marker = hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:12]
    elements: list[str] = []

    def swap(m: re.Match[str]) -> str:
        tag = m[1] or m[2]
        text = m[0]
        if text.count(f"<{tag}") != 1:
            return text  # nested elements of one name: left for Markdown to read
        line_start = markdown.rfind("\n", 0, m.start()) + 1
        if _HEADING_LINE.match(markdown, line_start):
            return text
        elements.append(text)
        return f'<{tag} data-stash="{marker}-{len(elements) - 1}"></{tag}>'

    swapped = _ELEMENT.sub(swap, markdown)
    return Stash(swapped, marker, tuple(elements))
