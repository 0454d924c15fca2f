"""Coverage: every value a page declares in ``PageSource.shows`` is on the page, where it says.

An entry is a fact key, optionally preceded by a simple selector path that
names where the value must be drawn::

    FORWARD.output                                  anywhere on the page
    svg#routes-forward g.node.output FORWARD.output  in the output node of that diagram
    table#stack-table STACK[4].plain                 in that table

A key is shown when an element carries it in ``data-trace``, either as itself
or as one of its elements (``FORWARD.output[1]``). Selectors are tag names,
``#id`` and ``.class`` parts, joined by spaces (descendant).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SIMPLE_RE = re.compile(r"^(?P<tag>[a-z][a-z0-9-]*)?(?P<id>#[A-Za-z0-9_-]+)?(?P<classes>(?:\.[A-Za-z0-9_-]+)*)$")


@dataclass(frozen=True)
class Node:
    """What a selector can see of one element."""

    tag: str
    id: str | None
    classes: frozenset[str]


@dataclass(frozen=True)
class Shown:
    """One ``data-trace`` element: its key and the elements from the document root down to it."""

    key: str
    chain: tuple[Node, ...]


@dataclass(frozen=True)
class Simple:
    tag: str | None
    id: str | None
    classes: frozenset[str]

    def matches(self, node: Node) -> bool:
        return (
            (self.tag is None or self.tag == node.tag)
            and (self.id is None or self.id == node.id)
            and self.classes <= node.classes
        )


class EntryError(ValueError):
    """A ``shows`` entry that is not selectors followed by a key: what was expected and what was found."""

    def __init__(self, expected: str, found: str):
        super().__init__(f"{expected}, found {found}")
        self.expected = expected
        self.found = found


def parse_entry(entry: str) -> tuple[tuple[Simple, ...], str]:
    """``"svg#a g.node KEY"`` -> (selectors, key)."""
    if not entry.split():
        raise EntryError("a fact key, optionally after selectors", repr(entry))
    *selectors, key = entry.split()
    out: list[Simple] = []
    for text in selectors:
        m = _SIMPLE_RE.match(text)
        if not m:
            raise EntryError("a selector made of a tag, #id and .class parts", repr(text))
        out.append(
            Simple(
                m["tag"],
                m["id"][1:] if m["id"] else None,
                frozenset(c for c in (m["classes"] or "").split(".") if c),
            )
        )
    return tuple(out), key


def base_key(key: str) -> str:
    """``FORWARD.output[1]`` -> ``FORWARD.output``; other keys unchanged."""
    return key.rsplit("[", 1)[0] if key.endswith("]") and "[" in key else key


def _inside(selectors: tuple[Simple, ...], chain: tuple[Node, ...]) -> bool:
    position = len(chain) - 1
    for selector in reversed(selectors):
        while position >= 0 and not selector.matches(chain[position]):
            position -= 1
        if position < 0:
            return False
        position -= 1
    return True


def index(shown: Iterable[Shown]) -> dict[str, list[Shown]]:
    """Shown elements by key and by the vector key they are an element of."""
    out: dict[str, list[Shown]] = {}
    for s in shown:
        out.setdefault(s.key, []).append(s)
        base = base_key(s.key)
        if base != s.key:
            out.setdefault(base, []).append(s)
    return out


def is_shown(selectors: tuple[Simple, ...], key: str, by_key: dict[str, list[Shown]]) -> bool:
    """Whether an element inside ``selectors`` shows ``key`` (``by_key`` from :func:`index`)."""
    return any(_inside(selectors, s.chain) for s in by_key.get(key, ()))
