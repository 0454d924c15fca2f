"""AUTHORING.md's tables of number formats and template names are made from the code, so they cannot drift.

Each table sits between two markers (``<!-- formats:start -->`` … ``<!-- formats:end -->``) and must equal what
:func:`tables` renders from ``site_builder``. After changing a format or a template name, rewrite the tables with

    .venv/bin/python tests/test_authoring_guide.py --write

The code side is checked too: the descriptions must name exactly the formats ``facts.formatter`` knows and the
names ``PageTemplate`` gives and ``DiagramRenderer.dot_source`` passes to their templates.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "AUTHORING.md"
REGENERATE = "regenerate it with `.venv/bin/python tests/test_authoring_guide.py --write`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def formats_table() -> str:
    from site_builder.facts import FORMAT_DESCRIPTIONS

    rows = [f"| `{_cell(name)}` | {_cell(shows)} |" for name, shows in FORMAT_DESCRIPTIONS.items()]
    return "\n".join(["| format | shows |", "|---|---|", *rows])


def _names_table(names: dict[str, tuple[str, str]], head: str) -> str:
    rows = [f"| `{_cell(call)}` | {_cell(gives)} |" for call, gives in names.values()]
    return "\n".join([f"| {head} | gives |", "|---|---|", *rows])


def helpers_table() -> str:
    from site_builder.render.pages import TEMPLATE_GLOBALS

    return _names_table(TEMPLATE_GLOBALS, "name")


def dot_helpers_table() -> str:
    from site_builder.render.diagrams import DOT_GLOBALS

    return _names_table(DOT_GLOBALS, "name (DOT only)")


def tables() -> dict[str, Callable[[], str]]:
    """Marker name -> the function that renders the table between its markers."""
    return {"formats": formats_table, "helpers": helpers_table, "dot-helpers": dot_helpers_table}


def _block(text: str, marker: str) -> re.Match[str]:
    found = re.search(rf"<!-- {marker}:start -->\n(.*?)\n?<!-- {marker}:end -->", text, re.S)
    assert found is not None, f"AUTHORING.md has no <!-- {marker}:start --> … <!-- {marker}:end --> block"
    return found


def _first_cells(table: str) -> list[str]:
    """The first column of a Markdown table's body rows, without its backticks."""
    rows = [line for line in table.splitlines() if line.startswith("|")][2:]
    return [row.split(" | ")[0].lstrip("| ").strip("`").replace("\\|", "|") for row in rows]


def _check_block(marker: str) -> None:
    shown = _block(GUIDE.read_text(encoding="utf-8"), marker)[1].strip()
    wanted = tables()[marker]()
    listed, defined = _first_cells(shown), _first_cells(wanted)
    missing = [n for n in defined if n not in listed]
    extra = [n for n in listed if n not in defined]
    assert not (missing or extra), f"AUTHORING.md's {marker} table lacks {missing} and lists {extra}; {REGENERATE}"
    assert shown == wanted, f"AUTHORING.md's {marker} table says other words than the code; {REGENERATE}"


def _function(cls: type, name: str) -> ast.FunctionDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(cls, name))))
    found = tree.body[0]
    assert isinstance(found, ast.FunctionDef)
    return found


def _page_template_names() -> set[str]:
    """The public names of PageTemplate, the object whose methods and attributes a page's templates see."""
    from site_builder.render.pages import PageTemplate

    members = {name for name in vars(PageTemplate) if not name.startswith("_")}
    return members | {name for name in PageTemplate.__annotations__ if not name.startswith("_")}


def _dot_source_names() -> set[str]:
    """The names DiagramRenderer.dot_source adds to the page's context when it renders a DOT template."""
    from site_builder.render.diagrams import DiagramRenderer

    for node in ast.walk(_function(DiagramRenderer, "dot_source")):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "render":
            return {k.arg for k in node.keywords if k.arg}
    raise AssertionError("DiagramRenderer.dot_source renders no template")


def test_every_number_format_the_code_defines_has_a_description() -> None:
    from site_builder.facts import CHOICE_FORMAT, FORMAT_DESCRIPTIONS, FORMATS, WORDS_FORMAT, formatter

    assert set(FORMAT_DESCRIPTIONS) == {*FORMATS, WORDS_FORMAT, CHOICE_FORMAT}, (
        "FORMAT_DESCRIPTIONS must name every format"
    )
    assert all(formatter(name) is not None for name in FORMAT_DESCRIPTIONS), "a described format is unknown"


def test_every_name_a_page_template_sees_has_a_description() -> None:
    from site_builder.render.pages import TEMPLATE_GLOBALS

    assert set(TEMPLATE_GLOBALS) == _page_template_names(), "TEMPLATE_GLOBALS must name what PageTemplate gives"
    assert all(call.split("(")[0] == name for name, (call, _) in TEMPLATE_GLOBALS.items())


def test_every_name_a_dot_template_adds_has_a_description() -> None:
    from site_builder.render.diagrams import DOT_GLOBALS

    assert set(DOT_GLOBALS) == _dot_source_names(), "DOT_GLOBALS must name what dot_source() passes"
    assert all(call.split("(")[0] == name for name, (call, _) in DOT_GLOBALS.items())


def test_authoring_guide_lists_every_number_format_the_code_defines() -> None:
    _check_block("formats")


def test_authoring_guide_lists_every_name_a_page_template_sees() -> None:
    _check_block("helpers")


def test_authoring_guide_lists_every_name_a_dot_template_adds() -> None:
    _check_block("dot-helpers")


def write() -> None:
    """Rewrite every table of AUTHORING.md between its markers from the code."""
    text = GUIDE.read_text(encoding="utf-8")
    for marker, render in tables().items():
        found = _block(text, marker)
        text = (
            text[: found.start()] + f"<!-- {marker}:start -->\n{render()}\n<!-- {marker}:end -->" + text[found.end() :]
        )
    GUIDE.write_text(text, encoding="utf-8")
    print(f"wrote {GUIDE.relative_to(ROOT)}: {', '.join(tables())}", file=sys.stderr)


def test_the_readme_names_every_page_folder_and_stays_short():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    slugs = sorted(p.parent.name for p in (ROOT / "pages").glob("*/page.toml"))
    missing = [slug for slug in slugs if f"{slug}/" not in readme]
    assert missing == [], f"README.md's 'The pages' does not name {missing}"
    assert len(readme.encode("utf-8")) < 8192, (
        "README.md is the front door: move details to AUTHORING.md or ARCHITECTURE.md"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_authoring_guide.py --write")
    sys.path.insert(0, str(ROOT))
    write()
