"""Formats that show a name or a boolean as words of a sentence: ``bool:YES|NO`` and ``as:NAME=WORDS|…``."""

from __future__ import annotations

import pytest

from site_builder.facts import FactBook


@pytest.mark.parametrize(
    ("value", "fmt", "shown"),
    [
        ("higher", "as:higher=выше|lower=ниже", "выше"),
        ("lower", "as:higher=выше|lower=ниже", "ниже"),
        ("indistinguishable", "as:indistinguishable=неразличимы|higher=выше", "неразличимы"),
        (True, "bool:принят|отвергнут", "принят"),
    ],
)
def test_a_name_or_a_boolean_is_shown_as_the_words_its_format_gives(value, fmt, shown):
    assert FactBook({"X.verdict": value}).text("X.verdict", fmt) == shown


def test_a_name_the_format_gives_no_words_for_is_an_error_naming_both():
    with pytest.raises(ValueError, match="gives no words for 'lower'; it gives words for higher"):
        FactBook({"X.verdict": "lower"}).text("X.verdict", "as:higher=выше")
