"""A whole trace: its version tag, its records in order, and the typed trace they fill.

A trace text is ``TRACE <version> BEGIN``, one line per record, then
``TRACE <version> END``. A trace module declares each record kind once with a
:class:`Record`: the dataclass one line fills, its fields in order, and the
attribute of the typed trace that holds it. A kind that repeats names its index
fields (the fields that tell its lines apart, as in ``DEPTH[20]``) and the
values every line carries, in order. A :class:`TraceLayout` is those records in
trace order; it reads a whole text strictly, reporting any unknown, missing,
duplicate or out-of-order record or index value with its line and column, writes
a typed trace back, and names every field under its provenance key
(``CONFIG.seed``, ``DEPTH[20].survival``, ``STREAM[tanh,64].norm``). A typed
trace that derives from :class:`LaidOut` names its own fields with the layout
declared for its class.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, Iterable, Mapping, TypeVar

from .format import Field, TraceParseError, parse_record, render_record, split_lines


@dataclass(frozen=True)
class Record:
    """One record kind: the line's first word, the dataclass it fills and its fields in order.

    ``attr`` is the typed trace's attribute that holds the record, or, for a kind
    with ``index`` fields, the tuple of its records. ``lines`` holds the field
    values the layout fixes on each line of this kind, in order (field name ->
    value); a repeated kind fixes at least its index fields on every line.
    """

    kind: str
    type: type
    attr: str
    fields: tuple[Field, ...]
    index: tuple[str, ...] = ()
    lines: tuple[Mapping[str, Any], ...] = ({},)

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.kind}: a field is declared twice in {names}")
        if not self.lines:
            raise ValueError(f"{self.kind}: no lines")
        if not self.index and len(self.lines) != 1:
            raise ValueError(f"{self.kind}: {len(self.lines)} lines, but no index fields to tell them apart")
        keys = set()
        for fixed in self.lines:
            for name, value in fixed.items():
                kind = self.field(name).kind
                if kind.read(kind.write(value)) != value:
                    raise ValueError(f"{self.kind}: {name}={value!r} is not what its text reads back as")
            missing = [name for name in self.index if name not in fixed]
            if missing:
                raise ValueError(f"{self.kind}: a line does not fix its index field(s) {missing}")
            key = self.key(fixed)
            if key in keys:
                raise ValueError(f"{self.kind}: two lines are both {key}")
            keys.add(key)

    @property
    def repeated(self) -> bool:
        return bool(self.index)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.kind} has no field {name!r}")

    def key(self, values: Mapping[str, Any]) -> str:
        """The provenance prefix of a line with these field values: ``KIND`` or ``KIND[index,...]``."""
        if not self.index:
            return self.kind
        written = (self.field(name).kind.write(values[name]) for name in self.index)
        return f"{self.kind}[{','.join(written)}]"

    def key_of(self, record: object) -> str:
        return self.key({name: getattr(record, self.field(name).attribute) for name in self.index})


class LaidOut:
    """A typed trace whose :meth:`facts` come from the :class:`TraceLayout` declared for its class."""

    layout: ClassVar[TraceLayout[Any]]

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key, in trace order: ``CONFIG.seed``, ``DEPTH[20].survival``, ..."""
        return self.layout.facts(self)


T = TypeVar("T")


@dataclass(frozen=True)
class TraceLayout(Generic[T]):
    """A trace version: its records in order and the typed trace (a dataclass) they fill."""

    version: str
    trace: type[T]
    records: tuple[Record, ...]

    def __post_init__(self) -> None:
        kinds = [r.kind for r in self.records]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"{self.version}: a record kind is declared twice in {kinds}")
        attrs = sorted(r.attr for r in self.records)
        expected = sorted(f.name for f in dataclasses.fields(self.trace))
        if attrs != expected:
            raise ValueError(f"{self.version}: records fill {attrs}, but {self.trace.__name__} has {expected}")
        if issubclass(self.trace, LaidOut):
            if "layout" in vars(self.trace):
                raise ValueError(f"{self.version}: {self.trace.__name__} is laid out by {self.trace.layout.version} already")
            self.trace.layout = self

    @property
    def begin(self) -> str:
        return f"TRACE {self.version} BEGIN"

    @property
    def end(self) -> str:
        return f"TRACE {self.version} END"

    @cached_property
    def slots(self) -> tuple[tuple[Record, Mapping[str, Any]], ...]:
        """Each line between BEGIN and END: its record and the field values the layout fixes."""
        return tuple((record, fixed) for record in self.records for fixed in record.lines)

    def record(self, kind: str) -> Record:
        for r in self.records:
            if r.kind == kind:
                return r
        raise KeyError(f"{self.version} has no {kind} record")

    # ------------------------------------------------------------------ typed trace
    def records_of(self, trace: T) -> list[tuple[Record, object]]:
        """(record kind, record) for every line of ``trace``, in trace order."""
        out: list[tuple[Record, object]] = []
        for record in self.records:
            value = getattr(trace, record.attr)
            out += [(record, v) for v in value] if record.repeated else [(record, value)]
        return out

    def parse(self, text: str, source: str = "trace") -> T:
        """Read a whole trace into its typed trace; any deviation raises :class:`TraceParseError`."""
        found: dict[str, list[object]] = {r.attr: [] for r in self.records}
        for record, value in self.parse_records(text, source):
            found[record.attr].append(value)
        return self.trace(
            **{r.attr: tuple(found[r.attr]) if r.repeated else found[r.attr][0] for r in self.records}
        )

    def render(self, trace: T) -> str:
        return self.render_records(self.records_of(trace))

    def facts(self, trace: T) -> dict[str, Any]:
        """Every field under its provenance key, in trace order."""
        out: dict[str, Any] = {}
        for record, value in self.records_of(trace):
            prefix = record.key_of(value)
            for f in record.fields:
                out[f"{prefix}.{f.name}"] = getattr(value, f.attribute)
        return out

    def keys(self) -> tuple[str, ...]:
        """Every fact key a trace of this version carries, in trace order (known without running anything)."""
        return tuple(f"{record.key(fixed)}.{f.name}" for record, fixed in self.slots for f in record.fields)

    # ------------------------------------------------------------------ text
    def render_records(self, records: Iterable[tuple[Record, object]]) -> str:
        """One line per record, in the order given, between the BEGIN and END lines."""
        lines = [self.begin]
        lines += [render_record(record.kind, record.fields, value) for record, value in records]
        lines.append(self.end)
        return "\n".join(lines) + "\n"

    def parse_records(self, text: str, source: str = "trace") -> list[tuple[Record, object]]:
        """Read a whole text line by line against the layout; return (record kind, record) in order."""
        lines = split_lines(text, source)
        if lines[0] != self.begin:
            raise TraceParseError(f"first line must be {self.begin!r}", 1, 1, source)
        out: list[tuple[Record, object]] = []
        seen: set[str] = set()  # keys of the repeated records read so far
        for position, (record, fixed) in enumerate(self.slots):
            number = position + 2
            if number > len(lines):
                why = f"trace ends early: missing {record.kind} record"
                raise TraceParseError(why, len(lines), len(lines[-1]) + 1, source)
            line = lines[number - 1]
            head = line.split(" ", 1)[0]
            if head != record.kind:
                raise TraceParseError(self._misplaced(position, head, line), number, 1, source)
            value = record.type(**parse_record(line, number, record.kind, record.fields, source))
            wrong = _fixed_mismatch(record, fixed, value, seen)
            if wrong:
                name, why = wrong
                raise TraceParseError(why, number, line.index(f" {name}=") + len(name) + 3, source)
            if record.repeated:
                seen.add(record.key_of(value))
            out.append((record, value))
        end_number = len(self.slots) + 2
        if len(lines) < end_number:
            raise TraceParseError(f"missing final {self.end!r} line", len(lines), len(lines[-1]) + 1, source)
        if lines[end_number - 1] != self.end:
            head = lines[end_number - 1].split(" ", 1)[0]
            raise TraceParseError(f"expected {self.end!r}, found {head!r}", end_number, 1, source)
        if len(lines) > end_number:
            raise TraceParseError(f"text continues after {self.end!r}", end_number + 1, 1, source)
        return out

    def _misplaced(self, position: int, head: str, line: str) -> str:
        """Why a line of kind ``head`` cannot stand where the layout expects another kind."""
        expected = self.slots[position][0].kind
        if line == self.end:
            return f"trace ends early: missing {expected} record"
        if head in {r.kind for r, _ in self.slots[:position]}:
            if self.record(head).repeated:
                return f"too many {head} records: expected {expected}"
            return f"duplicate {head} record: expected {expected}"
        if any(r.kind == head for r in self.records):
            return f"{head} record out of order: expected {expected} (missing {expected} record before it)"
        return f"unknown record {head!r}: expected {expected}"


def _fixed_mismatch(
    record: Record, fixed: Mapping[str, Any], value: object, seen: set[str]
) -> tuple[str, str] | None:
    """The first field whose value is not the one the layout fixes on this line, and why; None if all are."""
    for name, want in fixed.items():
        f = record.field(name)
        found = getattr(value, f.attribute)
        if found == want:
            continue
        expected = f"{name}={f.kind.write(want)}"
        if record.repeated and record.key_of(value) in seen:
            return name, f"duplicate {record.key_of(value)} record: expected {expected} here"
        return name, f"{record.kind} {name}={f.kind.write(found)} out of order: expected {expected} here"
    return None
