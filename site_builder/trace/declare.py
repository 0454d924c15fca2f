"""Declaring a trace once: each record is a dataclass whose annotations say how every field is written.

A page's ``trace.py`` writes::

    @record("FORWARD")
    class Forward:
        input: Vector
        branch: Vector
        output: Vector

    @record("STACK", index="depth")
    class StackRow:
        depth: Int
        plain: Vector

    @trace_format("residual-connections-v1")
    class Trace:
        forward: Forward
        stack: tuple[StackRow, ...] = lines(depth=range(5))

and gets, from that one declaration, the frozen dataclasses the fixtures fill,
the strict reader and writer of the text (``Trace.layout``), and the
provenance key of every field (``FORWARD.output``, ``STACK[3].plain``). A
field's name in the text is its attribute name with ``_`` written ``-``
(``input_gradient`` -> ``input-gradient``), unless the format says
``field_names="snake"``.

The value kinds are type aliases carrying their :class:`~.format.Kind`:
``Real`` (six decimals), ``Sci``, ``Vector``, ``Int``, ``Bool``, ``Name``,
``Names``, ``Shape`` (``[2,2]``), ``ShapeX`` (``2x2``), ``Text``, ``Measured`` (a
result over seeds and float paths, :class:`~.numbers.Measurement`), plus
``Decimals(n)``, ``Choice(*words)`` and ``Word(word)`` for a field that is
always one word. A record with index fields repeats; its lines are given on
the trace with :func:`lines`.

A type checker refuses a call in an annotation, so type-checked code (the
pages') writes the hint those three return: ``Annotated[str, choice(*words)]``,
``Annotated[str, literal(word)]``, ``Annotated[float, decimals(n)]``.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast, dataclass_transform

from .format import (
    BOOL,
    INT,
    MEASURED,
    NAME,
    NAMES,
    REAL,
    SCI,
    SHAPE,
    SHAPE_X,
    TEXT,
    VECTOR,
    Field,
    Kind,
    choice,
    decimals,
    literal,
)
from .layout import LaidOut, Record, TraceLayout
from .numbers import Measurement

Real = Annotated[float, REAL]
Sci = Annotated[float, SCI]
if TYPE_CHECKING:  # a fixture gives an array, a trace read back gives a tuple (NumPy is not imported here)
    import numpy as np

    VectorValue = tuple[float, ...] | np.ndarray
else:
    VectorValue = tuple
Vector = Annotated[VectorValue, VECTOR]
Int = Annotated[int, INT]
Bool = Annotated[bool, BOOL]
Name = Annotated[str, NAME]
Names = Annotated[tuple[str, ...], NAMES]
Shape = Annotated[tuple[int, ...], SHAPE]
ShapeX = Annotated[tuple[int, ...], SHAPE_X]
Text = Annotated[str, TEXT]
Measured = Annotated[Measurement, MEASURED]  # a result over seeds and float paths, written with its standing digits


def Decimals(places: int) -> Any:  # noqa: N802 - used like the type aliases above
    """A real with exactly ``places`` decimals."""
    return Annotated[float, decimals(places)]


def Choice(*words: str) -> Any:  # noqa: N802 - capitalized like the type it stands for in an annotation
    """A field whose value is one of ``words``."""
    return Annotated[str, choice(*words)]


def Word(word: str) -> Any:  # noqa: N802 - capitalized like the type it stands for in an annotation
    """A field that is always ``word`` (a property the fixtures verified before writing it)."""
    return Annotated[str, literal(word)]


C = TypeVar("C")


@dataclass(frozen=True)
class _Lines:
    """The lines of one record kind on a trace: per line, the values it fixes and the kinds it writes with."""

    values: tuple[Mapping[str, Any], ...]


def lines(*each: Mapping[str, Any] | Iterable[Mapping[str, Any]], **columns: Iterable[Any]) -> Any:
    """The lines of a record on the trace, in order.

    ``lines(depth=range(5))`` gives one line per depth; ``lines({"depth": 1, "part": "published"}, ...)``
    fixes several fields per line (a generator of such mappings works too). A value that is a
    :class:`~.format.Kind` (``decimals(18)``) writes that field with its own kind on that line. For a
    record that appears once, ``lines({"depth": 32})`` fixes a value of its single line.
    """
    values: list[Mapping[str, Any]] = []
    for item in each:
        values += [item] if isinstance(item, Mapping) else list(item)
    if columns:
        names = list(columns)
        for row in zip(*(list(v) for v in columns.values())):
            values.append(dict(zip(names, row)))
    if not values:
        raise ValueError("lines() needs at least one line")
    return _Lines(tuple(dict(v) for v in values))


def _kind_of(hint: Any, where: str) -> Kind:
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, Kind):
            return meta
    raise TypeError(f"{where}: annotate it with a value kind (Real, Vector, Int, ...), not {hint!r}")


def _hints(cls: type) -> dict[str, Any]:
    """The class's own annotations, evaluated in its module (string annotations included)."""
    module = sys.modules.get(cls.__module__)
    namespace = dict(vars(module)) if module else {}
    out: dict[str, Any] = {}
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        out[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation  # noqa: S307 - the page's own annotation, in its module's namespace
    return out


@dataclass_transform(frozen_default=True)
def record(kind: str, *, index: str | tuple[str, ...] = ()) -> Callable[[type[C]], type[C]]:
    """Make ``cls`` a frozen dataclass that is one line of kind ``kind``; ``index`` names the fields telling repeats apart."""

    def declare(cls: type[C]) -> type[C]:
        made = dataclass(frozen=True)(cls)
        hints = _hints(made)
        fields = tuple(
            (f.name, _kind_of(hints[f.name], f"{kind}.{f.name} in {cls.__qualname__}"))
            for f in dataclasses.fields(cast(Any, made))
        )
        made.__record__ = (kind, fields, (index,) if isinstance(index, str) else tuple(index))  # type: ignore[attr-defined]  # the class's layout, read by TraceLayout
        return made

    return declare


def _text_name(attribute: str, style: str) -> str:
    return attribute.replace("_", "-") if style == "kebab" else attribute


# A field given lines(...) has no default (the decorator takes the lines off the class), so to a type checker
# lines is a field specifier, like dataclasses.field, called without a default.
@dataclass_transform(frozen_default=True, field_specifiers=(lines,))
def trace_format(
    version: str, *, separator: str = " ", bookends: bool = True, field_names: str = "kebab"
) -> Callable[[type[C]], type[C]]:
    """Make ``cls`` the typed trace of ``version``: its fields are the records, in the order of the text.

    A field annotated ``tuple[Row, ...]`` holds a repeated record; give its lines as the field's default
    (``= lines(depth=range(5))``). Any field may take ``lines(...)`` to fix values of its lines.
    """
    if field_names not in ("kebab", "snake"):
        raise ValueError(f"field_names is 'kebab' or 'snake', not {field_names!r}")

    def declare(cls: type[C]) -> type[C]:
        placed: dict[str, _Lines] = {}
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Lines):
                placed[name] = value
                delattr(cls, name)
        if not issubclass(cls, LaidOut):
            namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
            cls = type(cls.__name__, (LaidOut, *[b for b in cls.__bases__ if b is not object]), namespace)
        made = dataclass(frozen=True)(cls)
        hints = _hints(made)
        records: list[Record] = []
        for f in dataclasses.fields(cast(Any, made)):
            hint = hints[f.name]
            repeated = typing.get_origin(hint) is tuple
            row = typing.get_args(hint)[0] if repeated else hint
            spec = getattr(row, "__record__", None)
            if spec is None:
                raise TypeError(f"{version}: field {f.name!r} of {cls.__qualname__} is not a @record class")
            kind, typed, index = spec
            if repeated and not index:
                raise TypeError(f"{version}: {kind} repeats ({f.name!r} is a tuple) but declares no index field")
            if index and not repeated:
                raise TypeError(f"{version}: {kind} has index fields, so {f.name!r} must be tuple[{row.__name__}, ...]")
            text_names = {attr: _text_name(attr, field_names) for attr, _ in typed}
            given = placed.pop(f.name, None)
            line_values = (
                tuple({text_names.get(k, k): v for k, v in line.items()} for line in given.values) if given else ({},)
            )
            records.append(
                Record(
                    kind,
                    row,
                    f.name,
                    tuple(Field(text_names[attr], k, attr) for attr, k in typed),
                    tuple(text_names[i] for i in index),
                    line_values,
                )
            )
        if placed:
            raise TypeError(f"{version}: lines() given for unknown field(s) {sorted(placed)}")
        TraceLayout(version, made, tuple(records), separator, bookends)
        return made

    return declare


def layout_of(trace: type[Any]) -> TraceLayout[Any]:
    """The layout ``@trace_format`` declared for a typed trace class."""
    found = getattr(trace, "layout", None)
    if not isinstance(found, TraceLayout):
        raise TypeError(f"{trace!r} is not declared with @trace_format")
    return found
