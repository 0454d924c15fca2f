"""The formats ``sig2`` and ``sig3``: a number in a sentence, rounded to the digits the sentence needs."""

from __future__ import annotations

import pytest

from site_builder.facts import FORMAT_DESCRIPTIONS, FORMATS, UnknownFormat, format_fact


@pytest.mark.parametrize(
    ("value", "sig2", "sig3"),
    [
        (1.259860, "1.3", "1.26"),
        (0.0001234, "0.00012", "0.000123"),
        (0.848528, "0.85", "0.849"),
        (-2.262741, "\u22122.3", "\u22122.26"),
        (-0.999999, "\u22121.0", "\u22121.00"),
        (0.999999, "1.0", "1.00"),
        (3.0, "3.0", "3.00"),
        (80.0, "80", "80.0"),
        (12.5, "13", "12.5"),
        (0.125, "0.13", "0.125"),
        (9.996, "10", "10.0"),
        (12345.0, "12000", "12300"),
        (0.0003, "0.00030", "0.000300"),
        (9.996e-05, "0.00010", "0.000100"),
        (0.0, "0", "0"),
    ],
)
def test_plain_digits(value: float, sig2: str, sig3: str) -> None:
    assert FORMATS["sig2"](value) == sig2
    assert FORMATS["sig3"](value) == sig3


@pytest.mark.parametrize(
    ("value", "sig2", "sig3"),
    [
        (2.220446e-16, "2.2 \u00d7 10\u207b\u00b9\u2076", "2.22 \u00d7 10\u207b\u00b9\u2076"),
        (1.25e-07, "1.3 \u00d7 10\u207b\u2077", "1.25 \u00d7 10\u207b\u2077"),
        (-4.480226e-07, "\u22124.5 \u00d7 10\u207b\u2077", "\u22124.48 \u00d7 10\u207b\u2077"),
        (1234567.0, "1.2 \u00d7 10\u2076", "1.23 \u00d7 10\u2076"),
        (999999.9, "1.0 \u00d7 10\u2076", "1.00 \u00d7 10\u2076"),
    ],
)
def test_powers_of_ten_outside_plain_range(value: float, sig2: str, sig3: str) -> None:
    assert FORMATS["sig2"](value) == sig2
    assert FORMATS["sig3"](value) == sig3


def test_a_vector_is_each_entry_in_brackets() -> None:
    assert FORMATS["sig3"]((0.848528, 1.131370)) == "[0.849, 1.13]"
    assert FORMATS["sig2"]([-0.305470, 0.407293]) == "[\u22120.31, 0.41]"


def test_an_index_into_a_vector_fact() -> None:
    facts = {"PRIMARY.normalized": (0.848528, 1.131370)}
    assert format_fact(facts, "PRIMARY.normalized[1]", "sig3") == "1.13"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "last", True])
def test_refuses_what_is_not_a_finite_number(value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        FORMATS["sig3"](value)


def test_described_and_named_exactly() -> None:
    assert {"sig2", "sig3"} <= FORMAT_DESCRIPTIONS.keys()
    with pytest.raises(UnknownFormat):
        format_fact({"A.b": 1.0}, "A.b", "sig4")
