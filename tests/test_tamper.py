"""Tampering: every way a published number can drift from the trace is caught and named.

Pages are checked in-process on a parsed copy (one fresh run of the fixtures
for the whole module); file-level tampering happens on a copy of the built
site. The shared build and the repository's goldens are never touched.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from lxml import etree

from helpers import PAGES, page
from site_builder import check
from site_builder.check import check_site, parse_html
from site_builder.numerals import NUMBER_RE
from tamper_cases import bump, one_digit_tamperings, problems, tamper_each_number, text_slots

CHAPTER = page("ch24").html_path
GENERATED = [p.html_path for p in PAGES]
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"


def tree(built_site: Path, page_path: str = CHAPTER) -> etree._Element:
    return parse_html((built_site / page_path).read_bytes())


# -- the untouched build ------------------------------------------------------------------------


@pytest.mark.parametrize("page_path", GENERATED)
def test_each_untouched_generated_page_passes(prepared, built_site, page_path):
    assert problems(prepared, tree(built_site, page_path), page_path) == []


def test_the_untouched_site_passes(prepared, built_site):
    result = check_site(built_site, prepared)
    assert result.problems == [], result.render()


# -- every value, one digit at a time -------------------------------------------------------------


@pytest.mark.parametrize("page_path", GENERATED)
def test_every_number_of_every_value_changed_by_one_digit_is_caught(prepared, built_site, page_path):
    found = one_digit_tamperings(prepared, tree(built_site, page_path), page_path)
    assert found.cases >= found.values // 2 > 0  # a value shown as words has no digit to change
    assert found.missed == [], "\n".join(found.missed)


def test_the_chapter_has_many_values_to_tamper(built_site):
    root = tree(built_site)
    numbers = sum(
        len(NUMBER_RE.findall("".join(el.itertext())))
        for el in root.iter()
        if isinstance(el.tag, str)
        and el.get("data-trace") is not None
        and not any(a.get("data-trace") is not None for a in el.iterancestors())
    )
    assert numbers >= 150


# -- drawings --------------------------------------------------------------------------------------


def diagrams(root: etree._Element) -> list[etree._Element]:
    return [
        svg
        for svg in root.iter("svg")
        if svg.get("id") and svg.iter("text") is not None and any(True for _ in svg.iter("text"))
    ]


def tampered_label(original: str) -> str:
    """A label's last number with its last digit changed; a label without a number with one added."""
    m = None
    for m in NUMBER_RE.finditer(original):  # noqa: B007 - the last number of the label is the one changed
        pass
    return original[: m.end() - 1] + bump(original[m.end() - 1]) + original[m.end() :] if m else original + " 7"


@pytest.mark.parametrize("page_path", GENERATED)
def test_every_diagram_label_tampered_is_caught(prepared, built_site, page_path):
    """Every label of every drawing tampered, each named by the whole checker with its drawing.

    The labels are checked in rounds of at most one per drawing, so that each is the only wrong label its drawing
    could be named for: a page takes as many checks as its largest drawing has labels, not one per label."""
    root = tree(built_site, page_path)
    drawings = [[(svg, label) for label in svg.iter("text")] for svg in diagrams(root)]
    cases, report = 0, []
    for labels in itertools.zip_longest(*drawings):
        batch = [(svg, label, label.text or "") for svg, label in filter(None, labels)]
        for _, label, original in batch:
            label.text = tampered_label(original)
        try:
            found = problems(prepared, root, page_path)
        finally:
            for _, label, original in batch:
                label.text = original
        for svg, _, original in batch:
            cases += 1
            if not any(line.startswith(f"{page_path}: svg#{svg.get('id')}") for line in found):
                report.append(f"svg#{svg.get('id')} {original!r} -> {tampered_label(original)!r}: {found[:2]}")
    if page_path == CHAPTER:
        assert cases >= 20
    assert report == []


@pytest.mark.parametrize(
    ("diagram", "role", "key"),
    [
        ("routes-forward", "input", "FORWARD.input"),
        ("routes-forward", "identity", "FORWARD.input"),
        ("routes-forward", "learned", "FORWARD.branch"),
        ("routes-forward", "output", "FORWARD.output"),
        ("routes-backward", "input", "BACKWARD.upstream"),
        ("routes-backward", "identity", "BACKWARD.identity"),
        ("routes-backward", "learned", "BACKWARD.branch"),
        ("routes-backward", "output", "BACKWARD.input"),
    ],
)
def test_a_removed_diagram_node_is_caught(prepared, built_site, diagram, role, key):
    root = tree(built_site)
    (node,) = root.xpath(
        f"//svg[@id='{diagram}']//g[contains(concat(' ', @class, ' '), ' node ') and contains(concat(' ', @class, ' '), ' {role} ')]"
    )
    node.getparent().remove(node)
    found = problems(prepared, root)
    assert (
        f"{CHAPTER}: svg#{diagram} g.node.{role} [data-trace={key}]: "
        f"expected the value shown in svg#{diagram} g.node.{role}, found not shown"
    ) in found
    assert any(f"shown value {key}: expected {key} (svg#{diagram} node" in line for line in found), found


def test_a_diagram_value_names_its_diagram_and_node(prepared, built_site):
    root = tree(built_site)
    (text,) = root.xpath("//svg[@id='routes-forward']//g[contains(@class, 'output')]/text[@data-trace]")
    text.text = text.text.replace("3.25", "3.5")
    assert problems(prepared, root) == [
        f"{CHAPTER}: svg#routes-forward node 'residual output y = x + F(x)' text[data-trace=FORWARD.output]: "
        'expected "[1, −3.25]", found "[1, −3.5]"'
    ]


# -- table, math, answers --------------------------------------------------------------------------


def test_a_table_cell_is_caught_and_located(prepared, built_site):
    root = tree(built_site)
    (cell,) = root.xpath("//table[@id='stack-table']//span[@data-trace='STACK[2].residual']")
    cell.text = cell.text.replace("1.125", "1.126")
    found = problems(prepared, root)
    assert len(found) == 1
    assert found[0].startswith(f"{CHAPTER}: span[data-trace=STACK[2].residual] in table#stack-table row 4, column 3")
    assert found[0].endswith('expected "[1.125, −0.5625]", found "[1.126, −0.5625]"')


def test_a_table_cell_typed_by_hand_is_caught_twice(prepared, built_site):
    """Provenance removed: the number is orphaned and the row is no longer shown."""
    root = tree(built_site)
    (value,) = root.xpath("//table[@id='stack-table']//span[@data-trace='STACK[3].plain']")
    cell = value.getparent()
    cell.text, cell[:] = value.text, []
    found = problems(prepared, root)
    assert any("td in table#stack-table row 5, column 2" in line and "found '−0.03125'" in line for line in found), (
        found
    )
    assert (
        f"{CHAPTER}: table#stack-table [data-trace=STACK[3].plain]: expected the value shown in table#stack-table, found not shown"
        in found
    )


def test_a_mathml_number_is_caught(prepared, built_site):
    root = tree(built_site)
    mn = next(m for m in root.iter("mn") if any(a.get("data-trace") for a in m.iterancestors()))
    key = next(a.get("data-trace") for a in mn.iterancestors() if a.get("data-trace"))
    mn.text = mn.text[:-1] + bump(mn.text[-1])
    found = problems(prepared, root)
    assert len(found) == 1 and found[0].startswith(f"{CHAPTER}: mrow[data-trace={key}] in math"), found


def test_a_mathml_number_without_provenance_is_caught(prepared, built_site):
    root = tree(built_site)
    math = next(root.iter("math"))
    extra = etree.SubElement(math[0] if len(math) else math, "mn")
    extra.text = "2"
    found = problems(prepared, root)
    assert len(found) == 1 and ": mn in math" in found[0] and "found '2'" in found[0], found


def test_an_answer_in_the_collapsed_checks_is_caught(prepared, built_site):
    root = tree(built_site)
    checks = [d for d in root.iter("details") if d.xpath(".//*[@data-trace]") and d.xpath("ancestor::ol")]
    assert len(checks) >= 8
    answers = [a for d in checks for a in d.xpath(".//*[@data-trace]")]
    cases = 0
    for change in tamper_each_number([a for a in answers if not a.xpath("ancestor::*[@data-trace]")]):
        cases += 1
        found, key = problems(prepared, root), change.key
        assert any(
            f"[data-trace={key}]" in line
            and 'in details "Check your answer"' in line
            or f"[data-trace={key}]" in line
            and 'in details "Show the solution"' in line
            for line in found
        ), (change.where, found)
    assert cases >= 8


def test_a_number_typed_into_an_answer_is_caught(prepared, built_site):
    root = tree(built_site)
    details = [d for d in root.iter("details") if d.xpath(".//*[@data-trace]") and d.xpath("ancestor::ol")][-1]
    answer = details.xpath("./p")[-1]
    answer.text = (answer.text or "") + "About 0.32 of it survives. "
    found = problems(prepared, root)
    assert len(found) == 1 and "p in details" in found[0] and "found '0.32'" in found[0], found


# -- code excerpts ---------------------------------------------------------------------------------


def excerpt_refs(built_site: Path) -> list[str]:
    return [
        el.get("data-source") for el in tree(built_site).iter() if isinstance(el.tag, str) and el.get("data-source")
    ]


def test_every_code_excerpt_edited_is_caught(prepared, built_site):
    refs = excerpt_refs(built_site)
    assert len(refs) >= 6
    for ref in refs:
        root = tree(built_site)
        (container,) = root.xpath(f"//*[@data-source='{ref}']")
        code = next(c for c in container.xpath(".//pre//code") if "".join(c.itertext()).strip())
        node, slot = next((n, s) for n, s in text_slots(code) if any(ch.isalnum() for ch in getattr(n, s)))
        original = getattr(node, slot)
        i = next(i for i, ch in enumerate(original) if ch.isalnum())
        setattr(
            node, slot, original[:i] + ("7" if not original[i].isdigit() else bump(original[i])) + original[i + 1 :]
        )
        found = problems(prepared, root)
        assert len(found) == 1 and f"[data-source={ref}]" in found[0] and "expected line" in found[0], (ref, found)


def test_a_hand_edited_number_in_a_code_excerpt_is_caught(prepared, built_site):
    root = tree(built_site)
    (container,) = root.xpath("//*[@data-source='site_builder/nn.py#residual_add']")
    node, slot = next((n, s) for n, s in text_slots(container) if "[2,2]" in getattr(n, s))
    setattr(node, slot, getattr(node, slot).replace("[2,2]", "[3,3]"))
    found = problems(prepared, root)
    assert len(found) == 1
    assert found[0].startswith(f"{CHAPTER}: figure[data-source=site_builder/nn.py#residual_add]")
    assert "[3,3]" in found[0]


# -- files: the home page, pages, downloads, goldens ------------------------------------------------


def test_an_orphan_number_on_the_hand_written_home_page_is_caught(prepared, site_copy, clean_verdicts):
    home = site_copy / "index.html"
    text = home.read_text(encoding="utf-8")
    marker = "</article>"
    assert text.count(marker) == 1
    home.write_text(text.replace(marker, "<p>It keeps 31.6% of the gradient.</p>" + marker), encoding="utf-8")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert len(found) == 1
    assert found[0].startswith("index.html: p ")
    assert found[0].endswith(
        "expected a number with provenance (data-trace) or an allowed one, "
        "found '31.6' in \"It keeps 31.6% of the gradient.\""
    )


def built_pages(prepared: check.Setup) -> list[str]:
    from site_builder.check.site import expected_pages

    return [built for built, _ in expected_pages(prepared)]


def test_every_page_deleted_is_caught(prepared, site_copy, clean_verdicts):
    pages = built_pages(prepared)
    assert CHAPTER in pages and "index.html" in pages
    for built in pages:
        (site_copy / built).unlink()
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    for built in pages:  # each named on a line of its own
        assert any(
            line.startswith(f"{built}: page: expected the built page of ") and line.endswith("found no file")
            for line in found
        ), (built, found)


def downloads() -> list[tuple[str, str, str]]:
    from helpers import layout

    return [
        (p.url + name, p.slug, kind) for p in PAGES for name, kind in p.download_names(layout(p.slug).version).items()
    ]


@pytest.mark.parametrize(("path", "slug", "kind"), downloads())
def test_a_tampered_download_is_caught(prepared, site_copy, path, slug, kind, clean_verdicts):
    file = site_copy / path
    data = file.read_bytes()
    position = next(i for i, b in enumerate(data) if chr(b).isdigit())
    file.write_bytes(data[:position] + bump(chr(data[position])).encode() + data[position + 1 :])
    found = check_site(site_copy, prepared, clean_verdicts()).problems
    assert [p.page for p in found] == [path]
    assert found[0].element == "download" and found[0].detail  # with a diff


def test_a_missing_download_is_caught(prepared, site_copy, clean_verdicts):
    path, _, _ = downloads()[0]
    (site_copy / path).unlink()
    assert [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems] == [
        f"{path}: download: expected the published trace (the golden file's bytes), found no file"
    ]


def test_a_tampered_golden_file_is_caught_with_its_diff_and_command(prepared, built_site, tmp_path):
    golden = tmp_path / "trace.txt"
    golden.write_bytes(page("ch24").golden_trace.read_bytes().replace(b"tolerance=0.000002", b"tolerance=0.000003"))
    tampered = check.setup(fresh=prepared.fresh, goldens={("ch24", "trace"): golden})
    found = check_site(built_site, tampered).problems
    assert [(p.page, p.element) for p in found] == [
        (str(golden), "golden trace"),
        (downloads()[0][0], "download"),
        ("ru/" + downloads()[0][0], "download"),  # the Russian page publishes the same trace beside it
    ]
    assert "refresh: site-builder trace --page ch24 --write-golden" in found[0].expected
    assert "-GRADCHECK input-checks=2 weight-checks=4 tolerance=0.000003 passed=true" in found[0].detail
    assert "+GRADCHECK input-checks=2 weight-checks=4 tolerance=0.000002 passed=true" in found[0].detail


def test_a_standalone_drawing_in_the_site_is_read_with_its_page_facts(prepared, site_copy, clean_verdicts):
    drawing = site_copy / CHAPTER.rsplit("/", 1)[0] / "extra.svg"
    drawing.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" id="extra">'
        '<g class="node"><title>y</title><text data-trace="FORWARD.output" data-format="vector">[1, −3.5]</text>'
        "<text>after 2 steps</text></g></svg>\n",
        encoding="utf-8",
    )
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert found == [
        # No build step writes it: the check says so, and still reads what it shows.
        f"{drawing.relative_to(site_copy).as_posix()}: file: expected a file the build writes (a page, a download or "
        "a copied file), found a file no build step writes",
        f"{drawing.relative_to(site_copy).as_posix()}: svg#extra node 'y' text[data-trace=FORWARD.output]: "
        'expected "[1, −3.25]", found "[1, −3.5]"',
        f"{drawing.relative_to(site_copy).as_posix()}: svg#extra node 'y' text: "
        "expected a number with provenance (data-trace) or an allowed one, found '2' in \"after 2 steps\"",
        # The drawing counts as the English page's: its value is then one the Russian twin does not show.
        "ru/chapter-24/index.html: svg#extra [data-trace=FORWARD.output]: expected the value as chapter-24/index.html "
        "shows it there (once), found not shown on ru/chapter-24/index.html",
    ]


def test_a_download_no_longer_linked_from_its_page_is_caught(prepared, site_copy, clean_verdicts):
    path, _, kind = downloads()[0]
    name = path.rsplit("/", 1)[1]
    chapter = site_copy / CHAPTER
    text = chapter.read_text(encoding="utf-8")
    assert f'href="{name}"' in text
    chapter.write_text(text.replace(f'href="{name}"', 'href="#"'), encoding="utf-8")
    assert [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems] == [
        f"{CHAPTER}: a[href={name}]: expected a link to the {kind} download, found none"
    ]


# -- charts: where each point and bar sits ----------------------------------------------------------

CHART_PAGES = GENERATED


def charts(root: etree._Element) -> list[etree._Element]:
    return [svg for svg in root.iter("svg") if "ev-chart" in (svg.get("class") or "").split()]


def test_every_chart_of_the_site_is_verified(prepared, built_site):
    drawn = sum(len(p.charts) for p in prepared.fresh.pages)
    found = sum(len(charts(tree(built_site, p.html_path))) for p in prepared.fresh.pages)  # both languages
    assert drawn == found >= 4


@pytest.mark.parametrize(
    ("shape", "attribute"),
    [("polyline", "points"), ("circle", "cy"), ("rect", "y"), ("rect", "height"), ("polygon", "points")],
)
def test_a_moved_point_or_bar_is_caught_with_every_label_intact(prepared, built_site, shape, attribute):
    cases = 0
    for page_path in CHART_PAGES:
        root = tree(built_site, page_path)
        for svg in charts(root):
            el = next((e for e in svg.iter(shape) if e.get(attribute)), None)
            if el is None:
                continue
            original = el.get(attribute)
            numbers = original.replace(",", " ").split()
            moved = (
                original.replace(numbers[-1], f"{float(numbers[-1]) - 12:.2f}", 1)
                if len(numbers) == 1
                else (original.rsplit(" ", 1)[0] + " " + original.rsplit(" ", 1)[1].split(",")[0] + ",12.00")
            )
            el.set(attribute, moved)
            found = problems(prepared, root, page_path)
            el.set(attribute, original)
            cases += 1
            assert (
                len(found) == 1 and f"svg#{svg.get('id')} {shape}" in found[0] and "drawn from the trace" in found[0]
            ), found
    assert cases >= 1


def test_a_swapped_series_label_or_a_foreign_chart_is_caught(prepared, built_site):
    page_path = page("deep_stack").html_path
    root = tree(built_site, page_path)
    svg = charts(root)[0]
    label = next(t for t in svg.iter("text") if t.get("data-trace") is None and (t.text or "").strip())
    original = label.text
    label.text = "something else"
    found = problems(prepared, root, page_path)
    assert len(found) == 1 and "the words" in found[0] and "something else" in found[0], found
    label.text = original
    svg.set("id", "made-up")
    found = problems(prepared, root, page_path)
    assert any("svg#made-up" in line and "a chart they do not draw" in line for line in found), found
    assert any("not on the page" in line for line in found), found


# -- files the checker must not trust -------------------------------------------------------------


def test_special_files_garbage_and_control_characters_are_one_line_each(prepared, site_copy, clean_verdicts):
    import os

    os.mkfifo(site_copy / "junk.html")  # reading it would block the check forever
    (site_copy / "elsewhere").symlink_to(site_copy / "evidence")  # its pages would go unchecked
    (site_copy / "garbage.html").write_bytes(bytes(range(256)) * 64)
    (site_copy / "escape.html").write_text("<p>\x1b]0;owned\x07 \x1b[2J 42</p>", encoding="utf-8")
    (site_copy / "many.html").write_text("<p>" + " ".join(str(n) for n in range(500)) + "</p>", encoding="utf-8")
    (site_copy / "deep.html").write_text("<p>" + "<span>" * 300 + "42" + "</span>" * 300 + "</p>", encoding="utf-8")
    (site_copy / "entity.svg").write_text(
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY n "42">]><svg xmlns="http://www.w3.org/2000/svg">'
        "<text>&n;</text></svg>",
        encoding="utf-8",
    )
    result = check_site(site_copy, prepared, clean_verdicts())
    text = result.render()
    lines = text.splitlines()
    assert "junk.html: file: expected a regular file, found a named pipe (FIFO) (skipped)" in lines
    assert "elsewhere: file: expected a regular file, found a link to a folder (not followed) (skipped)" in lines
    unwritten = "file: expected a file the build writes (a page, a download or a copied file), found a file no build step writes"
    assert [line for line in lines if line.startswith("garbage.html")] == [
        "garbage.html: file: expected a UTF-8 HTML document, found bytes that are not UTF-8 (invalid start byte at byte 128)",
        f"garbage.html: {unwritten}",
    ]
    for name in ("escape.html", "many.html", "deep.html", "entity.svg"):
        assert f"{name}: {unwritten}" in lines
    assert "\x1b" not in text and "\x07" not in text
    assert "deep.html: file: expected a readable HTML document, found elements nested more than 200 deep" in lines
    assert any(
        line.startswith("entity.svg: file: expected a readable SVG document, found entity declarations")
        for line in lines
    ), lines
    assert any(line.startswith("escape.html: p") and "\\x1b" in line for line in lines), lines
    many = [line for line in lines if line.startswith("many.html")]
    assert len(many) == 26 and many[-1] == "many.html: … 476 more problems in this file (501 in all)"
    added = 5  # the five regular files no build step writes
    assert len(result.problems) == 1 + 1 + 1 + 3 + 500 + 2 + added  # the escape sequences hold 0 and 2 besides the 42


def test_a_style_sheet_that_writes_a_number_is_caught(prepared, site_copy, clean_verdicts):
    css = site_copy / "stylesheets" / "site.css"
    css.write_text(
        css.read_text(encoding="utf-8") + '\n.md-typeset h1::after { content: " (99.9 percent)" }\n', encoding="utf-8"
    )
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert len(found) == 2 and found[0].startswith("stylesheets/site.css: content:") and "'99.9'" in found[0], found
    assert (
        found[1]
        == "stylesheets/site.css: file: expected the bytes of docs/stylesheets/site.css, found bytes that differ"
    )


def test_a_huge_value_is_shown_cut_with_its_length(prepared, site_copy, clean_verdicts):
    path, _, _ = downloads()[0]
    huge = "9" * 3_000_000
    (site_copy / path).write_text(f"TRACE {huge}\n", encoding="utf-8")
    chapter = site_copy / CHAPTER
    chapter.write_text(
        chapter.read_text(encoding="utf-8").replace("</article>", f"<p>{huge}</p></article>"), encoding="utf-8"
    )
    text = check_site(site_copy, prepared, clean_verdicts()).render()
    assert len(text) < 20_000
    assert "…[3000000 characters]…" in text and "…[3000007 characters]…" in text  # "+TRACE " and the value, in the diff


def test_a_number_only_the_search_index_shows_is_caught(prepared, site_copy, clean_verdicts):
    import json

    index = site_copy / "search" / "search_index.json"
    data = json.loads(index.read_text(encoding="utf-8"))
    chapter = next(i for i, d in enumerate(data["docs"]) if d["location"] == "chapter-24/")
    data["docs"][chapter]["text"] += "<p>Accuracy 99.9 percent.</p>"
    index.write_text(json.dumps(data), encoding="utf-8")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert len(found) == 1, found
    assert found[0].startswith(
        f"search/search_index.json: docs[{chapter}] (chapter-24/): expected a number {CHAPTER} shows"
    )
    assert "'99.9'" in found[0]
    index.write_text("{not json", encoding="utf-8")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert len(found) == 1 and "expected a search index" in found[0], found
