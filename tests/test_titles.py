"""A page's title reaches page.toml and the page's front matter as written: an emoji, quotes, accents, digits."""

from __future__ import annotations

import shutil
import tomllib

import pytest
import yaml

from helpers import ROOT
from site_builder.project import Project
from site_builder.render.pages import double_quoted, front_matter
from site_builder.scaffold import new_page

TITLES = [
    "Residual stacks 🚀 take off",
    'A "quoted" word and a back\\slash',
    "Nörmalize – then add",
    "Scale the branch by 1/sqrt(2L)",
    "a tab\there and a bell\a",
]


@pytest.mark.parametrize("title", TITLES)
def test_a_double_quoted_title_reads_back_the_same_in_yaml_and_toml(title):
    quoted = double_quoted(title)
    assert yaml.safe_load(f"title: {quoted}")["title"] == title
    assert tomllib.loads(f"title = {quoted}")["title"] == title


def test_an_emoji_is_written_as_itself_not_as_surrogate_escapes():
    assert double_quoted("up 🚀") == '"up 🚀"'
    assert double_quoted('say "hi"\n') == '"say \\"hi\\"\\u000a"'


def test_a_scaffolded_page_keeps_an_emoji_title_in_page_toml_and_front_matter(tmp_path):
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    project = Project.at(tmp_path)
    title = "Residual stacks 🚀 take off"
    folder = new_page(project, "rocket", title)
    assert tomllib.loads((folder / "page.toml").read_text(encoding="utf-8"))["title"] == title
    (page,) = Project.at(tmp_path).pages()
    matter = front_matter(page)
    assert yaml.safe_load(matter.strip().strip("-"))["title"] == title
    assert "\\ud83d" not in matter


def test_a_title_with_a_number_is_one_error_at_its_page_toml_line(tmp_path):
    from site_builder.project import PageConfigError

    folder = tmp_path / "pages" / "scaled"
    shutil.copytree(ROOT / "pages" / "path_expansion", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "page.toml"
    lines = toml.read_text(encoding="utf-8").splitlines()
    line = next(n for n, row in enumerate(lines, start=1) if row.startswith("title ="))
    lines[line - 1] = 'title = "Scale the branch by 1/sqrt(2L)"'
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PageConfigError) as info:
        Project.at(tmp_path).pages()
    message = str(info.value)
    assert message.startswith(f"pages/scaled/page.toml:{line}: the title ") and "'1'" in message, message
    assert "\n" not in message


def test_site_builder_new_refuses_a_title_with_a_number(tmp_path):
    from site_builder.errors import UsageError

    with pytest.raises(UsageError, match="holds the number '2'"):
        new_page(Project.at(tmp_path), "two", "Two views, 2 ways")
    assert not (tmp_path / "pages" / "two").exists()
