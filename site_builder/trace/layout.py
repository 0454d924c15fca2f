"""A whole trace: its version tag, its records in order, and the typed trace they fill.

A trace text is, by default, ``TRACE <version> BEGIN``, one line per record,
then ``TRACE <version> END``; a format may drop those two lines and join its
fields with another separator (``KIND|name=value|...``). Each record kind is a
:class:`Record`: the dataclass one line fills, its fields in order, and the
attribute of the typed trace that holds it. A kind that repeats names its
index fields (the fields that tell its lines apart, as in ``DEPTH[20]``) and
the values every line carries, in order; a line may also write one of its
fields with its own kind (a difference printed with more decimals on one line
than on another).

A :class:`TraceLayout` is those records in trace order. It reads a whole text
strictly, reporting any unknown, missing, duplicate or out-of-order record or
index value with its line and column; writes a typed trace back, refusing NaN
and infinities with the field's provenance key; and names every field under
that key (``CONFIG.seed``, ``DEPTH[20].survival``, ``STREAM[tanh,64].norm``).

Pages declare their records with :mod:`site_builder.trace.declare`, which
builds these objects from annotated dataclasses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar

from .format import Field, Kind, TraceParseError, parse_record, render_record, split_lines
from .numbers import NonFiniteValueError


@dataclass(frozen=True)
class Record:
    """One record kind: the line's first word, the dataclass it fills and its fields in order.

    ``attr`` is the typed trace's attribute that holds the record, or, for a kind
    with ``index`` fields, the tuple of its records. ``lines`` holds, per line of
    this kind and in order, the field values the layout fixes (name -> value)
    and the fields written with a kind of their own on that line (name -> Kind).
    A repeated kind fixes at least its index fields on every line.
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
        for line in self.lines:
            fixed = _fixed(line)
            for name, value in fixed.items():
                kind = self.line_fields(line)[names.index(self.field(name).name)].kind
                if kind.read(kind.write(value)) != value:
                    raise ValueError(f"{self.kind}: {name}={value!r} is not what its text reads back as")
            for name in _kinds(line):
                self.field(name)
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

    def line_fields(self, line: Mapping[str, Any]) -> tuple[Field, ...]:
        """The fields as one line writes them: a field the line gives a kind of its own uses that kind."""
        kinds = _kinds(line)
        if not kinds:
            return self.fields
        return tuple(dataclasses.replace(f, kind=kinds[f.name]) if f.name in kinds else f for f in self.fields)

    def key(self, values: Mapping[str, Any]) -> str:
        """The provenance prefix of a line with these field values: ``KIND`` or ``KIND[index,...]``."""
        if not self.index:
            return self.kind
        written = (self.field(name).kind.write(values[name]) for name in self.index)
        return f"{self.kind}[{','.join(written)}]"

    def key_of(self, record: object) -> str:
        return self.key({name: getattr(record, self.field(name).attribute) for name in self.index})


def _fixed(line: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if not isinstance(v, Kind)}


def _kinds(line: Mapping[str, Any]) -> dict[str, Kind]:
    return {k: v for k, v in line.items() if isinstance(v, Kind)}


class LaidOut:
    """A typed trace whose :meth:`facts` come from the :class:`TraceLayout` declared for its class."""

    layout: ClassVar[TraceLayout[Any]]

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key, in trace order: ``CONFIG.seed``, ``DEPTH[20].survival``, ..."""
        return self.layout.facts(self)


T = TypeVar("T")


@dataclass(frozen=True)
class Slot:
    """One line between the first and the last: its record, the values it fixes, the fields as it writes them."""

    record: Record
    fixed: Mapping[str, Any]
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class TraceLayout(Generic[T]):
    """A trace version: its records in order and the typed trace (a dataclass) they fill.

    ``separator`` joins a line's kind and fields; ``bookends`` adds the
    ``TRACE <version> BEGIN`` and ``END`` lines around the records.
    """

    version: str
    trace: type[T]
    records: tuple[Record, ...]
    separator: str = " "
    bookends: bool = True

    def __post_init__(self) -> None:
        # A kind may be declared by several records (lines of one kind whose fields differ, such as refusals
        # that each print their own numbers) only when each is indexed, so that every line keeps a key of its own.
        kinds = [r.kind for r in self.records]
        shared = sorted({k for k in kinds if kinds.count(k) > 1})
        if any(not r.repeated for r in self.records if r.kind in shared):
            raise ValueError(f"{self.version}: a record kind is declared twice in {kinds} without index fields")
        keys = [s.record.key(s.fixed) for s in self.slots]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.version}: two lines share a key in {keys}")
        attrs = sorted(r.attr for r in self.records)
        expected = sorted(f.name for f in dataclasses.fields(self.trace))  # type: ignore[arg-type]  # a declared trace class is a dataclass
        if attrs != expected:
            raise ValueError(f"{self.version}: records fill {attrs}, but {self.trace.__name__} has {expected}")
        if len(self.separator) != 1 or self.separator in "=\n":
            raise ValueError(
                f"{self.version}: fields are separated by one character other than '=', not {self.separator!r}"
            )
        if issubclass(self.trace, LaidOut):
            if "layout" in vars(self.trace):
                raise ValueError(
                    f"{self.version}: {self.trace.__name__} is laid out by {self.trace.layout.version} already"
                )
            self.trace.layout = self

    @property
    def begin(self) -> str:
        return f"TRACE {self.version} BEGIN"

    @property
    def end(self) -> str:
        return f"TRACE {self.version} END"

    @cached_property
    def slots(self) -> tuple[Slot, ...]:
        """Each record line, in order: its record, the field values the layout fixes, the fields as it writes them."""
        return tuple(
            Slot(record, _fixed(line), record.line_fields(line)) for record in self.records for line in record.lines
        )

    @property
    def lines(self) -> int:
        """How many lines a trace of this version has."""
        return len(self.slots) + (2 if self.bookends else 0)

    def record(self, kind: str) -> Record:
        for r in self.records:
            if r.kind == kind:
                return r
        raise KeyError(f"{self.version} has no {kind} record")

    # ------------------------------------------------------------------ typed trace
    def records_of(self, trace: T) -> list[tuple[Slot, object]]:
        """(slot, record) for every line of ``trace``, in trace order."""
        values: list[object] = []
        for record in self.records:
            value = getattr(trace, record.attr)
            if record.repeated:
                value = tuple(value)
                if len(value) != len(record.lines):
                    raise ValueError(
                        f"{self.version}: {len(value)} {record.kind} records, the layout has {len(record.lines)}"
                    )
                values += value
            else:
                values.append(value)
        return list(zip(self.slots, values))

    def parse(self, text: str, source: str = "trace") -> T:
        """Read a whole trace into its typed trace; any deviation raises :class:`TraceParseError`."""
        found: dict[str, list[object]] = {r.attr: [] for r in self.records}
        for slot, value in self.parse_records(text, source):
            found[slot.record.attr].append(value)
        return self.trace(**{r.attr: tuple(found[r.attr]) if r.repeated else found[r.attr][0] for r in self.records})

    def render(self, trace: T) -> str:
        """The trace's text. A value that is NaN or infinite raises :class:`NonFiniteValueError` naming its key."""
        lines = [self.begin] if self.bookends else []
        for slot, value in self.records_of(trace):
            try:
                lines.append(render_record(slot.record.kind, slot.fields, value, self.separator))
            except NonFiniteValueError:
                raise NonFiniteValueError(self._non_finite(slot, value)) from None
        if self.bookends:
            lines.append(self.end)
        return "\n".join(lines) + "\n"

    def _non_finite(self, slot: Slot, value: object) -> str:
        for f in slot.fields:
            try:
                f.kind.write(getattr(value, f.attribute))
            except NonFiniteValueError as exc:
                return f"{slot.record.key_of(value)}.{f.name}: {exc}"
        return f"{slot.record.kind}: a value is NaN or infinite"

    def facts(self, trace: T) -> dict[str, Any]:
        """Every field under its provenance key, in trace order."""
        out: dict[str, Any] = {}
        for slot, value in self.records_of(trace):
            prefix = slot.record.key_of(value)
            for f in slot.fields:
                out[f"{prefix}.{f.name}"] = getattr(value, f.attribute)
        return out

    def keys(self) -> tuple[str, ...]:
        """Every fact key a trace of this version carries, in trace order (known without running anything)."""
        return tuple(f"{s.record.key(s.fixed)}.{f.name}" for s in self.slots for f in s.fields)

    # ------------------------------------------------------------------ text
    def parse_records(self, text: str, source: str = "trace") -> list[tuple[Slot, object]]:
        """Read a whole text line by line against the layout; return (slot, record) in order."""
        lines = split_lines(text, source)
        first = 1 if self.bookends else 0  # lines before the first record
        if self.bookends and lines[0] != self.begin:
            raise TraceParseError(f"first line must be {self.begin!r}", 1, 1, source)
        out: list[tuple[Slot, object]] = []
        seen: set[str] = set()  # keys of the repeated records read so far
        for position, slot in enumerate(self.slots):
            number = position + first + 1
            record = slot.record
            if number > len(lines):
                why = f"trace ends early: missing {record.kind} record"
                raise TraceParseError(why, len(lines), len(lines[-1]) + 1, source)
            line = lines[number - 1]
            head = line.split(self.separator, 1)[0]
            if head != record.kind:
                raise TraceParseError(self._misplaced(position, head, line), number, 1, source)
            value = record.type(**parse_record(line, number, record.kind, slot.fields, source, self.separator))
            wrong = _fixed_mismatch(slot, value, seen)
            if wrong:
                name, why = wrong
                column = line.index(f"{self.separator}{name}=") + len(name) + 3
                raise TraceParseError(why, number, column, source)
            if record.repeated:
                seen.add(record.key_of(value))
            out.append((slot, value))
        last = len(self.slots) + first  # the number of the last record line
        if self.bookends:
            if len(lines) < last + 1:
                raise TraceParseError(f"missing final {self.end!r} line", len(lines), len(lines[-1]) + 1, source)
            if lines[last] != self.end:
                head = lines[last].split(self.separator, 1)[0]
                raise TraceParseError(f"expected {self.end!r}, found {head!r}", last + 1, 1, source)
            last += 1
        if len(lines) > last:
            after = repr(self.end) if self.bookends else f"the last record ({self.slots[-1].record.kind})"
            raise TraceParseError(f"text continues after {after}", last + 1, 1, source)
        return out

    def _misplaced(self, position: int, head: str, line: str) -> str:
        """Why a line of kind ``head`` cannot stand where the layout expects another kind."""
        expected = self.slots[position].record.kind
        if self.bookends and line == self.end:
            return f"trace ends early: missing {expected} record"
        if head in {s.record.kind for s in self.slots[:position]}:
            if self.record(head).repeated:
                return f"too many {head} records: expected {expected}"
            return f"duplicate {head} record: expected {expected}"
        if any(r.kind == head for r in self.records):
            return f"{head} record out of order: expected {expected} (missing {expected} record before it)"
        return f"unknown record {head!r}: expected {expected}"


def _fixed_mismatch(slot: Slot, value: object, seen: set[str]) -> tuple[str, str] | None:
    """The first field whose value is not the one the layout fixes on this line, and why; None if all are."""
    record = slot.record
    for name, want in slot.fixed.items():
        f = record.field(name)
        found = getattr(value, f.attribute)
        if found == want:
            continue
        expected = f"{name}={f.kind.write(want)}"
        if record.repeated and record.key_of(value) in seen:
            return name, f"duplicate {record.key_of(value)} record: expected {expected} here"
        return name, f"{record.kind} {name}={f.kind.write(found)} out of order: expected {expected} here"
    return None


def render_records(layout: TraceLayout[Any], records: Iterable[tuple[Slot, object]]) -> str:
    """One line per (slot, record), in the order given, inside the layout's first and last lines (for tests)."""
    lines = [layout.begin] if layout.bookends else []
    lines += [render_record(s.record.kind, s.fields, v, layout.separator) for s, v in records]
    if layout.bookends:
        lines.append(layout.end)
    return "\n".join(lines) + "\n"
