"""One-digit tamperings of a built page: every number of every shown value changed, and named by the checker."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from lxml import etree

from helpers import page
from site_builder import check
from site_builder.check import check_tree
from site_builder.numerals import NUMBER_RE

CHAPTER = page("ch24").html_path
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"


def problems(prepared: check.Setup, root: etree._Element, page_path: str = CHAPTER) -> list[str]:
    return [p.line() for p in check_tree(prepared, page_path, root).problems]


def bump(digit: str) -> str:
    """The next digit (9 -> 0), ASCII or superscript."""
    if digit in SUPERSCRIPTS:
        return SUPERSCRIPTS[(SUPERSCRIPTS.index(digit) + 1) % 10]
    return str((int(digit) + 1) % 10)


def text_slots(el: etree._Element) -> Iterator[tuple[etree._Element, str]]:
    """Every text node inside ``el`` as (element, "text" | "tail"), excluding ``el``'s own tail."""
    for node in el.iter():
        if not isinstance(node.tag, str):
            if node is not el and node.tail:
                yield node, "tail"
            continue
        if node.text:
            yield node, "text"
        if node is not el and node.tail:
            yield node, "tail"


def innermost_key(node: etree._Element, slot: str) -> str:
    """The data-trace key that owns a text node: the node's own for its text, its parent's chain for its tail."""
    start = node if slot == "text" else node.getparent()
    for el in (start, *start.iterancestors()):
        if el.get("data-trace") is not None:
            return el.get("data-trace")
    raise AssertionError("text outside any data-trace element")


@dataclasses.dataclass(frozen=True)
class Change:
    """The last digit of one number in one text node, bumped: where it is, the key that owns it, its value."""

    node: etree._Element
    slot: str  # "text" or "tail"
    original: str
    changed: str
    where: str
    key: str  # the innermost data-trace key over the text
    value: int  # which of the elements it was found in

    def apply(self) -> None:
        setattr(self.node, self.slot, self.changed)

    def undo(self) -> None:
        setattr(self.node, self.slot, self.original)


def one_digit_changes(elements: list[etree._Element]) -> list[Change]:
    """One change per number inside ``elements`` (its last digit bumped), none of them applied."""
    seen: set[tuple[int, str]] = set()
    out = []
    for value, el in enumerate(elements):
        for node, slot in text_slots(el):
            if (id(node), slot) in seen:
                continue  # nested data-trace elements share text nodes
            seen.add((id(node), slot))
            original = getattr(node, slot)
            for m in NUMBER_RE.finditer(original):
                end = m.end()
                changed = original[: end - 1] + bump(original[end - 1]) + original[end:]
                where = f"{m.group()!r} in {original!r}"
                out.append(Change(node, slot, original, changed, where, innermost_key(node, slot), value))
    return out


def tamper_each_number(elements: list[etree._Element]) -> Iterator[Change]:
    """Each of :func:`one_digit_changes`, applied one at a time while the caller looks (undone after each yield)."""
    for change in one_digit_changes(elements):
        change.apply()
        try:
            yield change
        finally:
            change.undo()


@dataclasses.dataclass(frozen=True)
class Tamperings:
    values: int  # the page's outermost shown values
    cases: int  # the one-digit changes checked
    checks: int  # the checks of the whole page they took
    missed: list[str]  # those the checker did not name with their key


def one_digit_tamperings(prepared: check.Setup, root: etree._Element, page_path: str) -> Tamperings:
    """Every one-digit change of the page's shown values, each named by the whole checker with its key.

    The changes are checked in rounds, each holding at most one change per shown value and per key, so that
    every change is the only wrong thing its key could be named for: a round's page has one wrong number in many
    values, and each must be named. A page with a thousand numbers takes as many rounds as its longest value has
    numbers, not a thousand checks."""
    values = [el for el in root.iter() if isinstance(el.tag, str) and el.get("data-trace") is not None]
    outermost = [el for el in values if not any(a.get("data-trace") is not None for a in el.iterancestors())]
    changes = one_digit_changes(outermost)
    rounds: list[list[Change]] = []
    taken: list[set[object]] = []  # the values and keys each round changes
    for change in changes:
        marks = {("value", change.value), ("key", change.key)}
        i = next((i for i, t in enumerate(taken) if not marks & t), len(rounds))
        if i == len(rounds):
            rounds.append([])
            taken.append(set())
        rounds[i].append(change)
        taken[i] |= marks
    missed = []
    for batch in rounds:
        for change in batch:
            change.apply()
        try:
            found = problems(prepared, root, page_path)
        finally:
            for change in batch:
                change.undo()
        for change in batch:
            if not any(f"[data-trace={change.key}]" in line and "expected" in line for line in found):
                missed.append(
                    f"{change.where} (key {change.key}): {[line for line in found if change.key in line][:2]}"
                )
    return Tamperings(len(outermost), len(changes), len(rounds), missed)
