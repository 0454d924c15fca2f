"""Templates read the trace's records, whose fields know their keys; a page that never shows a field fails."""

from __future__ import annotations

import shutil

import pytest

from helpers import ROOT
from site_builder.errors import SiteBuilderError
from site_builder.pipeline import Pipeline
from site_builder.project import Project
from site_builder.render.pages import PageRenderer
from site_builder.scaffold import new_page

WEIGHT_ROW = (
    '<tr><th scope="row">weight {{ math("W") }}, row by row</th><td>{{ tv("LAYER.weight", "vector") }}</td></tr>'
)


def scaffolded(tmp_path, template: str | None = None) -> tuple[Project, str]:
    """A project of one scaffolded page, its page.md.j2 replaced by ``template`` if given; and the page's folder."""
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    folder = new_page(Project.at(tmp_path), "layer", "A linear layer")
    if template is not None:
        (folder / "page.md.j2").write_text(template, encoding="utf-8")
    return Project.at(tmp_path), "pages/layer"


def rendered(project: Project) -> str:
    (run,) = Pipeline(project, warn=lambda line: None).run()
    return PageRenderer(project, project.pages()).render(run.page, run).markdown


def scaffold_template(tmp_path) -> str:
    shutil.copytree(ROOT / "site_builder" / "scaffold" / "files", tmp_path / "files")
    return (tmp_path / "files" / "page.md.j2").read_text(encoding="utf-8")


def test_a_page_that_never_shows_a_field_of_its_trace_fails_naming_the_folder_the_field_and_its_line(tmp_path):
    template = scaffold_template(tmp_path)
    assert WEIGHT_ROW in template
    project, folder = scaffolded(tmp_path / "project", template.replace(WEIGHT_ROW, ""))
    trace_py = (project.root / folder / "trace.py").read_text(encoding="utf-8").splitlines()
    line = next(n for n, row in enumerate(trace_py, start=1) if row.strip().startswith("weight:"))
    with pytest.raises(SiteBuilderError) as info:
        rendered(project)
    message = str(info.value)
    assert message.startswith(f"{folder}/trace.py:{line}: {folder} never shows the trace field LAYER.weight: "), message
    assert "\n" not in message


def test_showing_one_element_of_a_vector_field_shows_the_field(tmp_path):
    template = scaffold_template(tmp_path)
    one_element = WEIGHT_ROW.replace('tv("LAYER.weight", "vector")', 'tv(trace.layer.weight[0], "short")')
    markdown = rendered(scaffolded(tmp_path / "project", template.replace(WEIGHT_ROW, one_element))[0])
    assert 'data-trace="LAYER.weight[0]"' in markdown


RECORDS = """\
{% set layer = trace.layer %}
{{ tv(layer.input, "vector") }} {{ tv(layer.weight, "vector") }} {{ tv(layer.output, "vector") }}
{{ tv(layer["input-gradient"], "vector") }} {{ tv("LAYER.input-gradient", "vector") }}
{% for x in layer.input %}[{{ tv(x, "short") }}]{% endfor %}
{{ layer.input | length }} {{ "%.1f" | format(layer.input[-1]) }} {{ layer.input[-1] < 100 }} {{ layer.input | sum }}
{{ tv(layer.output[-1], "six") }}
"""


def test_a_field_read_from_a_record_is_its_value_and_shows_with_its_key(tmp_path):
    project, folder = scaffolded(tmp_path)
    (run,) = Pipeline(project, warn=lambda line: None).run()
    (project.root / folder / "page.md.j2").write_text(RECORDS, encoding="utf-8")
    markdown = PageRenderer(project, project.pages()).render(run.page, run).markdown
    values = run.trace.layer.input
    for key in ("LAYER.input", "LAYER.weight", "LAYER.output", "LAYER.input-gradient"):
        assert f'data-trace="{key}" data-format="vector"' in markdown
    for i in range(len(values)):
        assert f'data-trace="LAYER.input[{i}]" data-format="short"' in markdown
    last = len(run.trace.layer.output) - 1
    assert f'data-trace="LAYER.output[{last}]" data-format="six"' in markdown
    expected = f"{len(values)} {values[-1]:.1f} {values[-1] < 100} {sum(values)}"
    assert expected in markdown


def test_tv_refuses_a_value_that_was_not_read_from_a_record(tmp_path):
    project, folder = scaffolded(tmp_path)
    (run,) = Pipeline(project, warn=lambda line: None).run()
    (project.root / folder / "page.md.j2").write_text('{{ tv(trace.layer.input | sum, "short") }}\n', "utf-8")
    with pytest.raises(SiteBuilderError) as info:
        PageRenderer(project, project.pages()).render(run.page, run)
    message = str(info.value)
    assert message.startswith(f"{folder}/page.md.j2:1: ") and "a value read from a record of `trace`" in message
    assert "\n" not in message


def test_a_dot_template_draws_a_field_read_from_a_record_as_it_draws_its_key(tmp_path):
    project, folder = scaffolded(tmp_path)
    by_key = rendered(project)
    dot = project.root / folder / "layer.dot.j2"
    text = dot.read_text(encoding="utf-8")
    for key, field in (("LAYER.input", "trace.layer.input"), ("LAYER.output", "trace.layer.output")):
        assert f'"{key}"' in text
        text = text.replace(f'"{key}"', field)
    dot.write_text(text, encoding="utf-8")
    assert rendered(project) == by_key
    assert 'data-trace="LAYER.output"' in by_key
