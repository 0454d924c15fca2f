"""One-digit tamperings of a built page, and a second process that checks half of them.

Changing each number of each shown value by one digit, one at a time, and checking the whole page after each
change is the heaviest proof of the suite (about a thousand checks on the pre-norm page). The cases are split by
position between this process and a second one that made its own checker set-up from the session's fixture
results, so both cores prove them; every case is still checked by the whole checker, alone on its page.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from types import TracebackType

from lxml import etree

from helpers import PROJECT, page
from site_builder import check
from site_builder.check import check_tree, parse_html
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


def tamper_each_number(root: etree._Element, elements: list[etree._Element]) -> Iterator[tuple[str, str, str]]:
    """Change the last digit of each number inside ``elements``, one at a time (restored after each yield).

    Yields (where, owning key, tampered text) while the tree holds the change.
    """
    seen: set[tuple[int, str]] = set()
    for el in elements:
        for node, slot in text_slots(el):
            if (id(node), slot) in seen:
                continue  # nested data-trace elements share text nodes
            seen.add((id(node), slot))
            original = getattr(node, slot)
            for m in NUMBER_RE.finditer(original):
                end = m.end()
                changed = original[: end - 1] + bump(original[end - 1]) + original[end:]
                setattr(node, slot, changed)
                try:
                    yield f"{m.group()!r} in {original!r}", innermost_key(node, slot), changed
                finally:
                    setattr(node, slot, original)


@dataclasses.dataclass(frozen=True)
class Tamperings:
    values: int  # the page's outermost shown values
    cases: int  # the one-digit changes this part checked
    missed: list[str]  # those the checker did not name with their key


def one_digit_tamperings(
    prepared: check.Setup, root: etree._Element, page_path: str, part: int = 0, parts: int = 1
) -> Tamperings:
    """Every ``parts``-th one-digit change of the page's shown values, from the ``part``-th, each checked alone."""
    values = [el for el in root.iter() if isinstance(el.tag, str) and el.get("data-trace") is not None]
    outermost = [el for el in values if not any(a.get("data-trace") is not None for a in el.iterancestors())]
    cases, missed = 0, []
    for index, (where, key, _) in enumerate(tamper_each_number(root, outermost)):
        if index % parts != part:
            continue
        cases += 1
        found = problems(prepared, root, page_path)
        if not any(f"[data-trace={key}]" in line and "expected" in line for line in found):
            missed.append(f"{where} (key {key}): {found[:2]}")
    return Tamperings(len(outermost), cases, missed)


_PREPARED: list[check.Setup] = []


def _prepare(results_cache: str) -> None:
    """The second process's checker set-up, as the ``prepared`` fixture makes it: each page's run read from a
    copy of the session's fixture results (so nothing runs again, and the session's copy is not written)."""
    from site_builder.check.fresh import fresh_from
    from site_builder.pipeline import Pipeline

    cache = Path(tempfile.mkdtemp(prefix="tamper-")) / "cache"
    for kind in ("fixtures", "imports"):
        shutil.copytree(Path(results_cache) / kind, cache / kind)
    runs = {run.page.slug: run for run in Pipeline(dataclasses.replace(PROJECT, cache_dir=cache)).run()}
    pages = PROJECT.pages()
    _PREPARED.append(check.setup(PROJECT, fresh=fresh_from(PROJECT, pages, [runs[p.slug] for p in pages])))
    shutil.rmtree(cache.parent)


def _tamperings(page_file: str, page_path: str, part: int, parts: int) -> Tamperings:
    return one_digit_tamperings(_PREPARED[0], parse_html(Path(page_file).read_bytes()), page_path, part, parts)


class SecondChecker:
    """A started process (spawned, so no thread of this one is copied into it) that checks tamperings."""

    def __init__(self, results_cache: Path) -> None:
        self._pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=_prepare, initargs=(str(results_cache),)
        )

    def one_digit_tamperings(self, page_file: Path, page_path: str, part: int, parts: int) -> Future[Tamperings]:
        return self._pool.submit(_tamperings, str(page_file), page_path, part, parts)

    def __enter__(self) -> SecondChecker:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._pool.shutdown(cancel_futures=True)
