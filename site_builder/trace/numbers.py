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
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal
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


# ------------------------------------------------------------------ measured results
# A result of a training run (or any long float computation) is not one number: another seed gives another value,
# and so does another float path (another BLAS kernel, an initial weight one unit in the last place away). A
# Measurement holds what was measured of it, and the rule below decides how many of its digits stand. The trace
# writes it with those digits only, and a page shows it only through the ``measured`` formats, so a digit that the
# uncertainty does not determine is never written or shown.

MEASURED_DIGITS = 3  # the most significant digits a measured value keeps, however small its uncertainty


@dataclass(frozen=True)
class Measurement:
    """A result over seeds: the median over them, the smallest and largest seed, and two uncertainties.

    ``seeds`` is the uncertainty of the median from the choice of seeds (half the width of a distribution-free
    confidence interval of the median, at least 90 %); ``float_path`` the largest change of any seed's value
    when the computation takes another float path. The median's uncertainty is their sum; the smallest and the
    largest seed are single runs, so theirs is ``float_path`` (the median, the smallest and the largest value
    of a set all move by at most the largest move of one of its members).
    """

    median: float
    low: float
    high: float
    seeds: float
    float_path: float

    @property
    def uncertainty(self) -> float:
        """The median's: the two uncertainties, each rounded up to one digit as the trace writes them, added."""
        return float(uncertainty_up(self.seeds) + uncertainty_up(self.float_path))

    def __float__(self) -> float:
        """The median, for where a chart puts a point (a position, never a shown digit)."""
        return float(self.median)


def _decimal(value: float) -> Decimal:
    v = float(value)
    if not math.isfinite(v):
        raise NonFiniteValueError(f"cannot write {v!r}: NaN and infinities are never written")
    return Decimal(repr(v))


def _exponent(value: Decimal) -> int:
    """The decimal exponent of the leading digit of a non-zero value: 0.0283 -> -2."""
    return value.adjusted()


def uncertainty_up(value: float) -> Decimal:
    """An uncertainty rounded up to one significant digit (0.0283 -> 0.03; 0 stays 0): never smaller than it was."""
    d = abs(_decimal(value))
    if d == 0:
        return Decimal(0)
    exponent = _exponent(d)
    digit = int(d.scaleb(-exponent).to_integral_value(rounding=ROUND_CEILING))
    return Decimal(1).scaleb(exponent + 1) if digit == 10 else Decimal(digit).scaleb(exponent)


def last_place(value: float, uncertainty: float) -> int:
    """The decimal exponent of the last digit of ``value`` that an ``uncertainty`` leaves standing.

    It is the place of the uncertainty's one digit, once rounded up (0.28 known to 0.03 keeps ``0.28``, 0.8 known
    to 0.2 keeps ``0.8``: the last digit shown is the first one other seeds or another float path may move, by at
    most that digit's worth, as measured results are conventionally written), but never finer than
    :data:`MEASURED_DIGITS` significant digits of the value (after rounding, so 0.9996 keeps ``1.00``).
    """
    u = uncertainty_up(uncertainty)
    d = _decimal(value)
    if d == 0:
        return _exponent(u) if u else -MEASURED_DIGITS
    cap = _exponent(d) - MEASURED_DIGITS + 1
    place = max(_exponent(u), cap) if u else cap
    rounded = d.quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_EVEN)
    return max(place, _exponent(rounded) - MEASURED_DIGITS + 1) if rounded else place


def round_at(value: float, place: int) -> Decimal:
    """``value`` rounded (half to even, on its shortest decimal text) to a multiple of ``10**place``; zero unsigned."""
    rounded = _decimal(value).quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_EVEN)
    return rounded.copy_abs() if rounded == 0 else rounded  # a zero is written without a sign


def scaled_text(value: Decimal, place: int) -> str:
    """A value that is a multiple of ``10**place`` as ``DIGITSeEXPONENT`` (0.28 at -2: ``28e-2``): the digits
    written are exactly the digits that stand, and the text reads back as a float."""
    digits = int(value.scaleb(-place))
    return f"{digits}e{place}"


FLOAT_NOISE = 9  # a float path's move this many decades below the larger end is the nudge itself: written as 0


def settled(m: Measurement) -> Measurement:
    """The measurement as the trace writes it, so that a page shows the same from a run and from its trace.

    A float-path move more than :data:`FLOAT_NOISE` decades below the larger of the smallest and the largest seed
    (a loss at initialization that moved by 2e-16 on one machine and by nothing on another) is written as 0, so
    both write the same text; it is far below every shown digit. Every value is then rounded to the digits that
    stand.
    """
    ends = [_decimal(end) for end in (m.low, m.high)]
    larger = max(abs(end) for end in ends)
    float_path = m.float_path
    if larger:
        rounded = larger.quantize(Decimal(1).scaleb(_exponent(larger) - MEASURED_DIGITS + 1), ROUND_HALF_EVEN)
        if _decimal(float_path) < Decimal(1).scaleb(_exponent(rounded) - FLOAT_NOISE):
            float_path = 0.0
    seeds, path = float(uncertainty_up(m.seeds)), float(uncertainty_up(float_path))
    raised = Measurement(m.median, m.low, m.high, seeds, path)
    low, high = (float(round_at(end, last_place(end, path))) for end in (m.low, m.high))
    return Measurement(float(round_at(m.median, last_place(m.median, raised.uncertainty))), low, high, seeds, path)


def measured_text(m: Measurement) -> str:
    """How a trace writes a measurement: ``MEDIAN[LOW,HIGH]~SEEDS~FLOAT``, each with only its standing digits.

    ``28e-2[213e-3,351e-3]~3e-2~2e-4``: a median of 0.28 known to 0.03 + 0.0002 (so 0.28), seeds from 0.213 to 0.35.
    """
    m = settled(m)
    median_place = last_place(m.median, m.uncertainty)
    parts = [scaled_text(round_at(m.median, median_place), median_place)]
    ends = []
    for end in (m.low, m.high):
        place = last_place(end, m.float_path)
        ends.append(scaled_text(round_at(end, place), place))
    us = []
    for u in (m.seeds, m.float_path):
        up = uncertainty_up(u)
        us.append(scaled_text(up, _exponent(up)) if up else "0e0")
    return f"{parts[0]}[{ends[0]},{ends[1]}]~{us[0]}~{us[1]}"


def standing_median(m: Measurement) -> tuple[Decimal, int]:
    """The median rounded to the digits that stand, and the place of its last digit."""
    m = settled(m)
    place = last_place(m.median, m.uncertainty)
    return round_at(m.median, place), place


def reach(m: Measurement) -> float:
    """How far the median may lie from its shown value: half its last place, plus its uncertainty."""
    m = settled(m)
    place = last_place(m.median, m.uncertainty)
    return float(Decimal(1).scaleb(place) / 2 + Decimal(repr(m.uncertainty)))


def stands(m: Measurement) -> bool:
    """Whether the median is shown as a number: it moves by less than half its shown value (half its last place
    plus its uncertainty), so its leading digit stands; otherwise a page shows a bound."""
    median, _ = standing_median(m)
    return median != 0 and 2 * reach(m) < abs(float(median))


def bound(m: Measurement) -> Decimal:
    """The bound a page shows for a median whose leading digit does not stand (``below`` it): the median's size
    plus how far it may lie from it, rounded up to one digit."""
    median, _ = standing_median(m)
    return uncertainty_up(float(abs(median)) + reach(m))


def standing_end(value: float, m: Measurement) -> tuple[Decimal, int]:
    """The smallest or largest seed's value rounded to the digits the float path leaves standing."""
    place = last_place(value, settled(m).float_path)
    return round_at(value, place), place
