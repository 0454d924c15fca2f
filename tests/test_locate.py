"""A typed number is reported at the template line that types it, not at a Jinja tag that merely holds it."""

from __future__ import annotations

from site_builder.scan import locate as _locate


def test_a_typed_number_is_located_below_a_jinja_tag_over_several_lines_that_holds_the_same_digits(tmp_path):
    template = tmp_path / "page.md.j2"
    template.write_text(
        "# A page\n"
        + "\n" * 10
        + '{{ value("RESULT.loss",\n      "decimals:3") }} is the loss.\n'  # lines 12-13: the 3 is inside the tag
        + "It took 3 steps.\n",  # line 14: a typed 3
        encoding="utf-8",
    )
    assert _locate("3", (template,), None) == f"{template}:14"


def test_a_number_inside_a_jinja_comment_or_statement_is_not_typed(tmp_path):
    template = tmp_path / "page.md.j2"
    template.write_text("{# 42 in a\ncomment #}\n{% set n = 42 %}\nno number here\n", encoding="utf-8")
    assert _locate("42", (template,), None) is None
