"""Code excerpts on a page against the source regions they claim to show.

An excerpt's container carries ``data-source="PATH#REGION"``; the region is the
text between ``# region: REGION`` and ``# endregion: REGION`` in ``PATH``
(relative to the repository root).
"""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from ..render.regions import RegionError as RenderRegionError
from ..render.regions import extract_region

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding site_builder/


class RegionError(LookupError):
    """An excerpt whose region cannot be read: what was expected and what was found instead."""

    def __init__(self, expected: str, found: str):
        super().__init__(f"{expected}, found {found}")
        self.expected = expected
        self.found = found


@dataclass
class Sources:
    """Source regions by ``PATH#REGION``, each read once by the function that reads them for the pages."""

    repo_root: Path
    _regions: dict[str, str] = field(default_factory=dict)

    def region(self, ref: str) -> str:
        if ref not in self._regions:
            path, sep, name = ref.partition("#")
            if not sep or not path or not name:
                raise RegionError("a PATH#REGION reference", repr(ref))
            root = PACKAGE_ROOT if path.startswith("site_builder/") else self.repo_root
            file = (root / path).resolve()
            if root.resolve() not in file.parents or not file.is_file():
                raise RegionError(f"a source file {path} in the repository", "none")
            try:
                self._regions[ref] = extract_region(root, path, name).text
            except RenderRegionError as exc:
                raise RegionError(f"a region {name!r} in {path}", f"none: {exc}") from None
            except UnicodeDecodeError as exc:
                raise RegionError(f"a UTF-8 source file {path}", f"{exc.reason} at byte {exc.start}") from None
        return self._regions[ref]


def normalize_code(text: str) -> list[str]:
    """Lines as a reader compares them: tabs expanded, trailing spaces and outer blank lines dropped, dedented."""
    lines = [line.rstrip() for line in textwrap.dedent(text.expandtabs(4)).split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare(expected: str, found: str, ref: str) -> tuple[str, str, tuple[str, ...]] | None:
    """None when the excerpt shows the region; otherwise (expected, found, diff lines) for the message."""
    want, got = normalize_code(expected), normalize_code(found)
    if want == got:
        return None
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            where, exp, fnd = i + 1, a.strip(), b.strip()
            break
    else:
        i = min(len(want), len(got))
        where = i + 1
        exp = want[i].strip() if i < len(want) else "(end of region)"
        fnd = got[i].strip() if i < len(got) else "(end of excerpt)"
    diff = tuple(difflib.unified_diff(want, got, f"{ref} (source)", f"{ref} (page)", n=1, lineterm=""))
    return f'line {where} of {ref} to read "{exp}"', f'"{fnd}"', diff
