"""The trace as templates see it: every value read from a record carries its provenance key.

``trace`` in a template is a :class:`TraceView` of the typed trace. Its records are thin views
(:class:`RecordView`); reading a field gives the field's value as a *keyed value*: a ``float``, ``int``, ``str``
or ``tuple`` subclass (a boolean is a :class:`KeyedBool`) that compares, sorts, formats, counts and iterates as
the value does, and also knows its key, exactly as the layout names it::

    {% for row in trace.stack %}{{ tv(row.plain, "vector") }}{% endfor %}   {# STACK[3].plain #}
    {% if row.loss < 1 %}…{% endif %}                                       {# the value itself #}
    {{ tv(row.plain[1], "short") }}                                         {# STACK[3].plain[1] #}

The elements of a keyed tuple are keyed too (``KEY[i]``). Whatever a template computes from keyed values (a sum,
a join) is a plain value again, without a key: only a field read from a record has provenance.
``trace.stack.at(3)`` finds the record whose index field is ``3`` (a record with several index fields takes one
value per field, in their order), and ``row["plain-32"]`` reads a field by its name in the trace text (or its
attribute name), for a template that chooses the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

from jinja2 import Undefined

from ..errors import SiteBuilderError
from ..trace.format import Field
from ..trace.layout import Record, TraceLayout
from ..trace.numbers import Measurement


class Keyed:
    """A value read from a trace record, with the provenance key of the field it came from (``.key``)."""

    key: str


class KeyedFloat(float, Keyed):
    def __new__(cls, value: float, key: str) -> KeyedFloat:
        made = super().__new__(cls, value)
        made.key = key
        return made


class KeyedInt(int, Keyed):
    def __new__(cls, value: int, key: str) -> KeyedInt:
        made = super().__new__(cls, value)
        made.key = key
        return made


class KeyedStr(str, Keyed):
    def __new__(cls, value: str, key: str) -> KeyedStr:
        made = super().__new__(cls, value)
        made.key = key
        return made


class KeyedBool(Keyed):
    """A boolean field (``bool`` cannot be subclassed): true or false as the value is, equal to it, shown as it."""

    __slots__ = ("key", "value")

    def __init__(self, value: bool, key: str) -> None:
        self.value = value
        self.key = key

    def __bool__(self) -> bool:
        return self.value

    def __eq__(self, other: object) -> bool:
        return self.value == (other.value if isinstance(other, KeyedBool) else other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


class KeyedTuple(tuple[Any, ...], Keyed):
    """A vector, a list of names or a shape: each element is keyed ``KEY[i]``, row-major as the facts name them."""

    def __new__(cls, value: tuple[Any, ...], key: str) -> KeyedTuple:
        made = super().__new__(cls, value)
        made.key = key
        return made

    def _element(self, index: int) -> Any:
        return keyed(super().__getitem__(index), f"{self.key}[{index}]")

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        position = index.__index__()
        return self._element(position + len(self) if position < 0 else position)

    def __iter__(self) -> Iterator[Any]:
        return (self._element(i) for i in range(len(self)))


class KeyedMeasurement(Measurement, Keyed):
    """A measured result: its median, range and uncertainties to choose words by, shown only by ``measured``."""

    def __init__(self, value: Measurement, key: str) -> None:
        super().__init__(value.median, value.low, value.high, value.seeds, value.float_path)
        object.__setattr__(self, "key", key)


def keyed(value: Any, key: str) -> Any:
    """``value`` as a keyed value of ``key``; a value of another type (None) as it is."""
    if isinstance(value, Measurement):
        return KeyedMeasurement(value, key)
    if isinstance(value, bool):
        return KeyedBool(value, key)
    if isinstance(value, int):
        return KeyedInt(value, key)
    if isinstance(value, float):
        return KeyedFloat(value, key)
    if isinstance(value, str):
        return KeyedStr(value, key)
    if isinstance(value, tuple):
        return KeyedTuple(value, key)
    return value


def key_of(shown: Any, helper: str) -> str:
    """The fact key a helper was given: a keyed value's key, or a key written as a string."""
    if isinstance(shown, Keyed):
        return shown.key
    if isinstance(shown, str):
        return shown
    if isinstance(shown, Undefined):
        str(shown)  # a strict undefined raises the error that names what is missing
    raise SiteBuilderError(
        f"{helper}() takes a fact key or a value read from a record of `trace`, not {type(shown).__name__} {shown!r}"
    )


class RecordView:
    """One record of the trace as a template sees it: each field a keyed value (see the module's docstring).

    A name that is no field (a method or property of the record's class) is read from the record as it is.
    """

    __slots__ = ("_fields", "_key", "_record")

    def __init__(self, record: object, key: str, fields: dict[str, Field]) -> None:
        self._record = record
        self._key = key  # STACK[3]
        self._fields = fields  # attribute name and name in the text -> the field

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name] if name in self._fields else getattr(self._record, name)

    def __getitem__(self, name: str) -> Any:
        """A field by its attribute name (``branch_scale``) or its name in the text (``branch-scale``)."""
        try:
            f = self._fields[name]
        except KeyError:
            known = ", ".join(dict.fromkeys(f.name for f in self._fields.values()))
            raise KeyError(f"{self._key} has no field {name!r}; its fields: {known}") from None
        return keyed(getattr(self._record, f.attribute), f"{self._key}.{f.name}")

    def __eq__(self, other: object) -> bool:
        return self._record == (other._record if isinstance(other, RecordView) else other)

    def __hash__(self) -> int:
        return hash(self._record)

    def __repr__(self) -> str:
        return f"<{self._key} {self._record!r}>"


def _view_class(record_type: type) -> type[RecordView]:
    """A view class named as the record's class, so a template error names the record (``StackRow``)."""
    return type(record_type.__name__, (RecordView,), {"__slots__": (), "__module__": record_type.__module__})


def _fields(record: Record) -> dict[str, Field]:
    return {**{f.attribute: f for f in record.fields}, **{f.name: f for f in record.fields}}


class RecordsView(tuple[RecordView, ...]):
    """The records of a kind that repeats, in trace order; :meth:`at` finds one by its index values."""

    _kind: str
    _index: tuple[str, ...]  # the names of the index fields

    def __new__(cls, views: list[RecordView], kind: str, index: tuple[str, ...]) -> RecordsView:
        made = super().__new__(cls, views)
        made._kind, made._index = kind, index
        return made

    def at(self, *values: Any) -> RecordView:
        """The record whose index fields (in their declared order) hold ``values``: ``trace.starts.at(32, "plain")``."""
        for view in self:
            if tuple(view[name] for name in self._index) == values:
                return view
        shown = ",".join(str(v) for v in values)
        raise KeyError(f"no {self._kind}[{shown}] record; its index fields: {', '.join(self._index)}")


class TraceView:
    """The typed trace as a template sees it: its records as views, by the trace class's attribute names."""

    def __init__(self, trace: Any) -> None:
        self._trace = trace
        layout: TraceLayout[Any] = type(trace).layout
        self._records = {r.attr: r for r in layout.records}
        self._views: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._records:
            return getattr(self._trace, name)
        if name not in self._views:
            self._views[name] = _view(self._records[name], getattr(self._trace, name))
        return self._views[name]

    def __repr__(self) -> str:
        return f"<trace {type(self._trace).layout.version}>"


def _view(record: Record, value: Any) -> Any:
    cls, fields = _view_class(record.type), _fields(record)
    if not record.repeated:
        return cls(value, record.key_of(value), fields)
    return RecordsView([cls(v, record.key_of(v), fields) for v in value], record.kind, record.index)


def trace_view(trace: Any) -> Any:
    """The trace for a template: a :class:`TraceView` of a declared trace, anything else as it is."""
    return TraceView(trace) if isinstance(getattr(type(trace), "layout", None), TraceLayout) else trace
