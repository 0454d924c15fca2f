"""Learner reports: plain text, one ``key=value`` line each, with a fixed set of keys in a fixed order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .format import TraceParseError, split_lines


@dataclass(frozen=True)
class KeyValueReport:
    """A report's keys, in order: :meth:`render` writes one, :meth:`parse` reads one back strictly."""

    keys: tuple[str, ...]

    def render(self, pairs: Iterable[tuple[str, str]]) -> str:
        pairs = list(pairs)
        found = tuple(key for key, _ in pairs)
        if found != self.keys:
            raise ValueError(f"report keys {found} are not {self.keys}")
        for key, value in pairs:
            if "\n" in value or "\r" in value:
                raise ValueError(f"report value of {key!r} holds a line break")
        return "".join(f"{key}={value}\n" for key, value in pairs)

    def parse(self, text: str, source: str = "report") -> dict[str, str]:
        """Key -> raw value; any missing, extra or misplaced key raises :class:`TraceParseError` with its line."""
        values: dict[str, str] = {}
        for number, line in enumerate(split_lines(text, source), start=1):
            key, eq, value = line.partition("=")
            if number > len(self.keys):
                raise TraceParseError(f"unexpected extra line {key!r}", number, 1, source)
            expected = self.keys[number - 1]
            if not eq or key != expected:
                raise TraceParseError(f"expected key {expected!r}, found {key!r}", number, 1, source)
            values[key] = value
        if len(values) != len(self.keys):
            missing = self.keys[len(values)]
            raise TraceParseError(f"report ends early: missing key {missing!r}", len(values), 1, source)
        return values
