"""The number and value rules shared by every trace and report.

Real numbers print with exactly six decimals, as ``format(v, ".6f")`` does
(ties round half to even on the binary value), and ``-0.000000`` is written
``0.000000``. Where a record declares a scientific real, it prints as
``format(v, ".6e")`` does, and ``-0.000000e+00`` is written ``0.000000e+00``. NaN and infinities are never written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from ..errors import SiteBuilderError

T = TypeVar("T")

REAL_RE = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]{6}")
INT_RE = re.compile(r"0|[1-9][0-9]*")
SCI_RE = re.compile(r"-?[0-9]\.[0-9]{6}e[+-][0-9]{2,3}")
NAME_RE = re.compile(r"[a-z0-9_]+(?:[.\-][a-z0-9_]+)*")


class NonFiniteValueError(SiteBuilderError, ValueError):
    """A fixture produced NaN or an infinity where a real number must be written."""


def _written(value: float, spec: str) -> str:
    """``value`` as ``format(v, spec)`` prints it, a negative zero without its sign; never NaN or an infinity."""
    v = float(value)
    if not math.isfinite(v):
        raise NonFiniteValueError(f"cannot write {v!r}: NaN and infinities are never written")
    text = format(v, spec)
    return text[1:] if text == format(-0.0, spec) else text


def format_real(value: float) -> str:
    """Six decimals as ``format(v, ".6f")`` prints them; ``-0.000000`` is written ``0.000000``."""
    return _written(value, ".6f")


def format_sci(value: float) -> str:
    """Scientific notation as ``format(v, ".6e")`` prints it; ``-0.000000e+00`` is written ``0.000000e+00``."""
    return _written(value, ".6e")


def flat(values: Iterable[T]) -> Iterable[T]:
    """A vector's values in row-major order: a tuple as it is, an array of any rank flattened."""
    ravel = getattr(values, "ravel", None)
    return ravel().tolist() if callable(ravel) else values


def format_vector(values: Iterable[float]) -> str:
    return "[" + ",".join(format_real(v) for v in flat(values)) + "]"


def format_decimals(value: float, decimals: int) -> str:
    """Fixed notation with ``decimals`` decimals, a negative zero without its sign; never NaN or an infinity."""
    return _written(value, f".{decimals}f")


def format_names(names: Iterable[str]) -> str:
    return ",".join(str(n) for n in flat(names))


def format_shape_brackets(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def format_shape_x(shape: Sequence[int]) -> str:
    return "x".join(str(int(d)) for d in shape)


def format_bool(value: bool) -> str:
    return "true" if value else "false"


def short_form(value: float) -> str:
    """The six-decimal text with trailing zeros dropped: ``-3.250000`` -> ``-3.25``, ``1.000000`` -> ``1``."""
    text = format_real(value)
    text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text
