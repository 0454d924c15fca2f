"""Where each value stands: table rows, diagram nodes, sections, and the golden list of a page's shown values.

Each case is a built page tampered as an adversary would (or a template's mistake), checked in-process
against the session's fresh run, with the one line the checker prints for it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from helpers import PAGES, ROOT, copy_project, mkdocs_env, page
from site_builder.check import check_tree, parse_html, places
from site_builder.errors import SiteBuilderError

CHAPTER = page("ch24").html_path
LIST = "pages/ch24/golden/shown.en.txt"


def tree(built_site: Path, page_path: str = CHAPTER) -> etree._Element:
    return parse_html((built_site / page_path).read_bytes())


def problems(prepared, root: etree._Element, page_path: str = CHAPTER) -> list[str]:
    return [p.line() for p in check_tree(prepared, page_path, root).problems]


def row_of(root: etree._Element, key: str) -> etree._Element:
    (value,) = root.xpath(f"//table[@id='stack-table']//span[@data-trace='{key}']")
    return next(a for a in value.iterancestors() if a.tag == "tr")


# -- the golden list itself --------------------------------------------------------------------


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.slug)
def test_every_page_shows_exactly_its_golden_list(built_site, source):
    golden = places.read_golden(source.golden_shown, "golden")
    assert golden is not None and len(golden) > 50
    assert places.shown_values(tree(built_site, source.html_path)) == golden


def test_a_golden_list_reads_back_as_written():
    values = (
        places.ShownValue("depth", "table#stack-table row 3 column 2", "STACK[1].plain", "[−0.5, 0.25]"),
        places.ShownValue("-", "h1", "PAGE.chapter", "24"),
    )
    assert places.parse(places.render(values, CHAPTER), "x") == values


def test_a_malformed_golden_list_is_one_line_naming_its_file_and_line():
    text = places.render((), CHAPTER) + "depth\tp\tSTACK[1].plain\n"
    with pytest.raises(places.ShownListError) as caught:
        places.parse(text, LIST)
    assert str(caught.value) == (f"{LIST}:3: expected four tab-separated fields (section, place, key, text), found 3")


def test_a_missing_golden_list_is_a_problem(prepared, built_site, tmp_path):
    import dataclasses

    moved = dataclasses.replace(prepared, goldens={("ch24", "shown"): tmp_path / "none.txt"})
    found = problems(moved, tree(built_site))
    assert found == [
        f"{CHAPTER}: golden list of shown values: expected {tmp_path / 'none.txt'} "
        "(write it: site-builder shown --write-golden), found none"
    ]


# -- where a value stands ----------------------------------------------------------------------


def test_two_swapped_rows_are_named_with_their_places(prepared, built_site):
    root = tree(built_site)
    one, two = row_of(root, "STACK[1].depth"), row_of(root, "STACK[2].depth")
    one.addprevious(two)  # row 4 now stands where row 3 stood
    found = problems(prepared, root)
    assert (
        f"{CHAPTER}: shown value STACK[1].plain: expected STACK[1].plain (table#stack-table row 3 column 2, "
        f"section #depth) ({LIST}:89), found STACK[1].plain (table#stack-table row 4 column 2, section #depth)"
    ) in found
    assert len(found) == 6, found  # three values of each row, each in the other row's place


def test_two_swapped_value_cells_are_a_value_in_the_wrong_row(prepared, built_site):
    root = tree(built_site)
    a, b = (row_of(root, k)[1] for k in ("STACK[1].depth", "STACK[2].depth"))
    a.addprevious(etree.Element("td"))
    marker = a.getprevious()
    b.addprevious(a)
    marker.addprevious(b)
    marker.getparent().remove(marker)
    found = problems(prepared, root)
    assert found[0] == (
        f"{CHAPTER}: table#stack-table row 3 column 2 [data-trace=STACK[2].plain] (section #depth): "
        'expected a value of the record its row shows (as STACK[1].depth does), found STACK[2].plain "[0.125, −0.0625]"'
    )


def test_a_row_whose_value_is_hidden_and_the_neighbours_shown_is_caught(prepared, built_site):
    root = tree(built_site)
    own = row_of(root, "STACK[1].depth")[1]
    neighbour = row_of(root, "STACK[2].depth")[1]
    copy = etree.fromstring(etree.tostring(neighbour[0]))
    copy.tail = None
    own[0].set("hidden", "")
    own.append(copy)
    found = problems(prepared, root)
    assert any("row 3 column 2 [data-trace=STACK[2].plain]" in line for line in found), found


def test_a_template_index_off_by_one_is_named_where_it_stands():
    html = """<html><body><h2 id="depth">Depth</h2><table id="t"><tbody>
    <tr><th><span data-trace="STACK[0].depth" data-format="int">0</span></th>
        <td><span data-trace="STACK[1].plain" data-format="vector">[1]</span></td></tr>
    <tr><th><span data-trace="STACK[1].depth" data-format="int">1</span></th>
        <td><span data-trace="STACK[2].plain" data-format="vector">[2]</span></td></tr>
    </tbody></table></body></html>"""
    found = [p.line() for p in places.misplaced(parse_html(html), "x.html")]
    assert found[0] == (
        "x.html: table#t row 1 column 2 [data-trace=STACK[1].plain] (section #depth): "
        'expected a value of the record its row shows (as STACK[0].depth does), found STACK[1].plain "[1]"'
    )


def test_a_table_of_records_by_column_is_in_place():
    html = """<html><body><table><tbody>
    <tr><th>depth</th><th><span data-trace="S[a,2].depth" data-format="int">2</span></th>
        <th><span data-trace="S[a,8].depth" data-format="int">8</span></th></tr>
    <tr><th>loss</th><td><span data-trace="S[a,2].loss" data-format="six">1</span></td>
        <td><span data-trace="S[a,8].loss" data-format="six">2</span></td></tr>
    </tbody></table></body></html>"""
    assert places.misplaced(parse_html(html), "x.html") == []


@pytest.mark.parametrize(
    ("section", "at_least"), [("predict", 20), ("formula", 2), ("transformer", 2), ("history", 2), ("exercises", 20)]
)
def test_a_deleted_section_is_every_value_it_showed_lost(prepared, built_site, section, at_least):
    root = tree(built_site)
    (heading,) = root.xpath(f"//h2[@id='{section}']")
    parent = heading.getparent()
    following = list(heading.itersiblings())
    end = next((i for i, el in enumerate(following) if el.tag == "h2"), len(following))
    for el in [heading, *following[:end]]:
        parent.remove(el)
    lost = [line for line in problems(prepared, root) if f"section #{section}) ({LIST}:" in line]
    assert len(lost) >= at_least and all(line.endswith("found not shown") for line in lost), lost


def test_a_value_moved_to_another_section_is_named(prepared, built_site):
    root = tree(built_site)
    (value,) = root.xpath("//table[@id='stack-table']/caption/span[@data-trace='DERIVED.plain-multiplier']")
    (history,) = root.xpath("//h2[@id='history']/following-sibling::p[1]")
    value.getparent().remove(value)
    history.append(value)
    found = problems(prepared, root)
    assert any(
        "shown value DERIVED.plain-multiplier: expected DERIVED.plain-multiplier (caption, section #depth)" in line
        and "found DERIVED.plain-multiplier (p, section #history)" in line
        for line in found
    ), found


# -- diagrams drawn again ------------------------------------------------------------------------


def test_two_nodes_values_swapped_by_their_x_are_caught(prepared, built_site):
    root = tree(built_site)
    a, b = root.xpath("//svg[@id='routes-forward']//g[contains(@class, 'node')]/text[@data-trace]")[:2][::-1]
    xa, xb = a.get("x"), b.get("x")
    a.set("x", xb)
    b.set("x", xa)
    found = problems(prepared, root)
    assert any(line.startswith(f"{CHAPTER}: svg#routes-forward g g[") and "expected x=" in line for line in found), (
        found
    )


def test_a_per_glyph_x_list_that_reorders_a_value_is_caught(prepared, built_site):
    root = tree(built_site)
    (text,) = root.xpath("//svg[@id='routes-forward']//g[contains(@class, 'learned')]/text[@data-trace]")
    text.set("x", " ".join(str(100 + i) for i in range(len(text.text))))
    found = problems(prepared, root)
    assert any("svg#routes-forward g g[" in line and "expected x=" in line for line in found), found


def test_a_moved_edge_path_is_caught(prepared, built_site):
    root = tree(built_site)
    path = root.xpath("//svg[@id='routes-forward']//g[contains(@class, 'edge')]/path")[0]
    path.set("d", re.sub(r"\d", "1", path.get("d"), count=1))
    found = problems(prepared, root)
    assert any("svg#routes-forward" in line and "path" in line and "(drawn from the trace)" in line for line in found)


def test_a_diagram_the_page_does_not_draw_is_caught(prepared, built_site):
    root = tree(built_site)
    (svg,) = root.xpath("//svg[@id='routes-forward']")
    svg.set("id", "made-up")
    found = problems(prepared, root)
    assert any("svg#made-up" in line and "a diagram they do not draw" in line for line in found), found
    assert (
        f"{CHAPTER}: svg#routes-forward: expected the diagram 'routes-forward' drawn from the trace, found not on the page"
        in found
    )


# -- the build and `site-builder diff` ----------------------------------------------------------


def test_a_stale_golden_list_stops_the_build_with_its_line(fixture_results, tmp_path):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)  # the page agreed with its list before
    assert any((root / ".cache" / "shown").iterdir())
    listed = root / LIST
    text = listed.read_text(encoding="utf-8").replace("\tSTACK[1].plain\t[−0.5, 0.25]", "\tSTACK[1].plain\t[−0.5, 0.5]")
    listed.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", "site"],
        cwd=root,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == [
        f'ERROR   -  chapter-trace: {LIST}:89: golden list of shown values is stale: STACK[1].plain "[−0.5, 0.5]" '
        '(table#stack-table row 3 column 2, section #depth) is now STACK[1].plain "[−0.5, 0.25]" '
        "(table#stack-table row 3 column 2, section #depth); if the change is meant, refresh it with "
        "`site-builder shown --write-golden` and review its diff"
    ]
    assert not (root / "site").exists()


def test_a_page_found_to_agree_with_its_list_is_not_compared_again_until_the_page_or_the_list_changes(
    built_site, tmp_path
):
    from site_builder.cache import Store
    from site_builder.project import Project
    from site_builder.scan import SHOWN_KIND, ShownLists

    root = copy_project(tmp_path / "p", slugs=("ch24",))
    project = Project.at(root)
    heard: list[str] = []
    store = Store(tmp_path / "cache", heard.append)

    def stale(html: str) -> list[str]:
        lists = ShownLists(project, project.pages(), store=store, code=b"ours", serving=False, collected=None)
        lists.page(html, CHAPTER)
        return lists.stale

    html = (built_site / CHAPTER).read_text(encoding="utf-8")
    assert stale(html) == [] and len(store.names(SHOWN_KIND)) == 1, "an agreeing page is kept"
    (entry,) = store.names(SHOWN_KIND)
    assert stale(html) == [] and store.names(SHOWN_KIND) == [entry]

    listed = root / LIST
    kept = listed.read_text(encoding="utf-8")
    listed.write_text(kept.replace("\tSTACK[1].plain\t[−0.5, 0.25]", "\tSTACK[1].plain\t[−0.5, 0.5]"), encoding="utf-8")
    assert [line.split(": ")[0] for line in stale(html)] == [f"{LIST}:89"], "a changed list is compared again"
    listed.write_text(kept, encoding="utf-8")

    changed = html.replace("[−0.5, 0.25]", "[−0.5, 0.5]", 1)
    assert changed != html
    assert len(stale(changed)) == 1, "a changed page is compared again"
    assert heard == []


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_diff_prints_the_values_that_changed_appeared_or_disappeared(tmp_path):
    from site_builder import shown
    from site_builder.project import Project

    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(ROOT / "pages" / "ch24", root / "pages" / "ch24", ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    listed = root / LIST
    lines = listed.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = [line.replace("[−0.5, 0.25]", "[−0.5, 0.3]") if "\tSTACK[1].plain\t" in line else line for line in lines]
    added = "depth\tp\tDERIVED.new\t7\n"
    listed.write_text("".join(line for line in changed if "\tSTACK[3].depth\t" not in line) + added, encoding="utf-8")
    text = shown.diff(Project.at(root), "HEAD")
    assert text.splitlines() == [
        "### Shown values since `HEAD`",
        "",
        "#### `chapter-24/index.html` (ch24)",
        "",
        "1 appeared, 1 changed, 1 disappeared",
        "",
        "- changed: `STACK[1].plain` `[−0.5, 0.25]` → `[−0.5, 0.3]` (table#stack-table row 3 column 2, section `#depth`)",
        "- disappeared: `STACK[3].depth` `3` (table#stack-table row 5 column 1, section `#depth`)",
        "- appeared: `DERIVED.new` `7` (p, section `#depth`)",
        "",
    ]


def test_diff_of_an_unknown_revision_is_one_line(tmp_path):
    from site_builder import shown
    from site_builder.project import Project

    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    git(root, "init", "-q")
    with pytest.raises(SiteBuilderError) as caught:
        shown.diff(Project.at(root), "no-such-rev")
    assert str(caught.value) == f"'no-such-rev' is not a revision of the repository at {root.resolve()}"
