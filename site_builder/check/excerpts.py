"""Code excerpts on a page against the source regions they claim to show.

An excerpt's container carries ``data-source="PATH#REGION"``; the region is the
text between ``# region: REGION`` and ``# endregion: REGION`` in ``PATH``
(relative to the repository root).
"""

from __future__ import annotations

import difflib
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

_REGION_RE = re.compile(r"^\s*# (?P<kind>region|endregion): (?P<name>\S+)\s*$")


class RegionError(LookupError):
    pass


@dataclass
class Sources:
    """Source regions by ``PATH#REGION``, read once per file."""

    repo_root: Path
    _regions: dict[str, dict[str, str]] = field(default_factory=dict)

    def region(self, ref: str) -> str:
        path, sep, name = ref.partition("#")
        if not sep or not path or not name:
            raise RegionError(f"a PATH#REGION reference, found {ref!r}")
        if path not in self._regions:
            file = (self.repo_root / path).resolve()
            if self.repo_root.resolve() not in file.parents or not file.is_file():
                raise RegionError(f"a source file {path} in the repository, found none")
            self._regions[path] = regions(file.read_text(encoding="utf-8"))
        found = self._regions[path]
        if name not in found:
            known = ", ".join(sorted(found)) or "none"
            raise RegionError(f"a region {name!r} in {path} (regions there: {known}), found none")
        return found[name]


def regions(text: str) -> dict[str, str]:
    """Every ``# region: NAME`` … ``# endregion: NAME`` block, markers excluded."""
    out: dict[str, str] = {}
    open_at: dict[str, int] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        m = _REGION_RE.match(line)
        if not m:
            continue
        if m["kind"] == "region":
            open_at[m["name"]] = number + 1
        elif m["name"] in open_at:
            out[m["name"]] = "\n".join(lines[open_at.pop(m["name"]) : number])
    return out


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
    diff = tuple(
        difflib.unified_diff(want, got, f"{ref} (source)", f"{ref} (page)", n=1, lineterm="")
    )
    return f'line {where} of {ref} to read "{exp}"', f'"{fnd}"', diff
