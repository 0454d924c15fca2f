"""A DOT syntax error names the .dot.j2 file and the line that wrote the DOT that dot refused."""

from __future__ import annotations

import shutil

import pytest

from helpers import ROOT
from site_builder.pipeline import Pipeline
from site_builder.project import Project
from site_builder.render.diagrams import template_line
from site_builder.render.pages import PageRenderer
from site_builder.render.templating import TemplateFailure


def test_the_template_line_is_the_one_whose_literal_text_the_refused_dot_line_holds():
    template = (
        'digraph g {\n{{ defaults }}\na [label="{{ value("a", "X", "real") }}"];\na -> -> b [{{ edge("flow") }}];\n}\n'
    )
    dot = 'digraph g {\nnode [shape=box];\na [label="1.5"];\na -> -> b [color="black"];\n}\n'
    assert template_line(template, dot, 4) == 4
    assert template_line(template, dot, 3) == 3
    assert template_line(template, dot, 2) is None, "written by a value alone: no literal text to find"
    assert template_line(template, dot, 9) is None


def test_a_dot_syntax_error_names_the_dot_template_and_its_line(tmp_path):
    shutil.copytree(ROOT / "pages" / "ch25", tmp_path / "pages" / "ch25", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    dot = tmp_path / "pages" / "ch25" / "prenorm.dot.j2"
    text = dot.read_text(encoding="utf-8")
    assert text.count("ms -> r [") == 1
    dot.write_text(text.replace("ms -> r [", "ms -> -> r ["), encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if row.startswith("ms -> r ["))
    project = Project.at(tmp_path)
    (run,) = Pipeline(project, warn=lambda line: None).run()
    with pytest.raises(TemplateFailure) as info:
        PageRenderer(project, project.pages()).render(run.page, run)
    assert str(info.value).startswith(f"pages/ch25/prenorm.dot.j2:{line}: dot rejected the diagram: "), str(info.value)
    assert "\n" not in str(info.value)
