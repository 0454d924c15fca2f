"""Source regions: the code between ``# region: NAME`` and ``# endregion: NAME`` in our own files.

Pages quote code from the package itself, never a copy of it, so an excerpt
on the site is always the code that produced the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SiteBuilderError

_START = re.compile(r"^[ \t]*# region: (?P<name>\S+)[ \t]*$")
_END = re.compile(r"^[ \t]*# endregion: (?P<name>\S+)[ \t]*$")


class RegionError(SiteBuilderError, LookupError):
    """A named region is missing, unterminated, duplicated or empty."""


@dataclass(frozen=True)
class Region:
    path: str  # repository-relative, with forward slashes
    name: str
    text: str  # the lines between the markers, ending in one newline

    @property
    def source(self) -> str:
        """``PATH#REGION``: what a page's ``data-source`` attribute names."""
        return f"{self.path}#{self.name}"


def extract_region(root: Path, path: str, name: str) -> Region:
    """The region ``name`` of ``root / path``; raises :class:`RegionError` naming both when it is absent."""
    file = Path(root) / path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RegionError(f"source region {name!r}: file {path} does not exist") from None
    starts = [i for i, line in enumerate(lines) if (m := _START.match(line)) and m["name"] == name]
    if not starts:
        raise RegionError(f"source region {name!r} not found in {path} (expected a line '# region: {name}')")
    if len(starts) > 1:
        raise RegionError(f"source region {name!r} appears {len(starts)} times in {path}")
    start = starts[0]
    for end in range(start + 1, len(lines)):
        if (m := _END.match(lines[end])) and m["name"] == name:
            break
        if (m := _START.match(lines[end])) and m["name"] == name:
            raise RegionError(f"source region {name!r} in {path} opens again before it ends")
    else:
        raise RegionError(f"source region {name!r} in {path} has no '# endregion: {name}' line")
    body = lines[start + 1 : end]
    if not any(line.strip() for line in body):
        raise RegionError(f"source region {name!r} in {path} is empty")
    # A formatter keeps blank lines between a definition and the marker that
    # ends it; they belong to the file's layout, not to the excerpt.
    while not body[0].strip():
        body.pop(0)
    while not body[-1].strip():
        body.pop()
    return Region(path, name, "\n".join(body) + "\n")
