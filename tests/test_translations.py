"""Translations: a page's Russian twin is rendered from the same run, served under ru/, switched to on the same page,
searched in its own language, checked like its English page and against it, and goes stale visibly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from lxml import html

from helpers import PAGES, PROJECT, ROOT, copy_project, mkdocs_env, page
from site_builder import check
from site_builder.check import check_site
from site_builder.i18n import (
    blob_id,
    localized_name,
    mark_translated,
    record_line,
    source_name,
    stale_translation,
    translations_in,
)
from site_builder.localize import split_search_index
from site_builder.project import Page, PageConfigError, Project, read_page
from site_builder.render.templating import page_environment

TRANSLATED = [p for p in PAGES if "ru" in p.languages]


def test_the_home_page_and_every_page_are_translated():
    assert [p.slug for p in PAGES if "ru" not in p.languages] == []
    assert (ROOT / "docs" / "index.ru.md").is_file()


@pytest.mark.parametrize(
    "english, russian",
    [("page.md.j2", "page.ru.md.j2"), ("_figure.html.j2", "_figure.ru.html.j2"), ("index.md", "index.ru.md")],
)
def test_a_translation_sits_beside_its_file_with_the_language_before_the_extensions(english, russian):
    assert localized_name(english, "ru") == russian
    assert source_name(russian) == (english, "ru")
    assert source_name(english) == (english, "en")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_a_translation_goes_stale_when_its_english_changes_and_says_which_lines(tmp_path):
    _git(tmp_path, "init", "-q")
    english = tmp_path / "_part.html.j2"
    english.write_text("first line\nthe merge adds two routes\nlast line\n", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "english")
    russian = tmp_path / "_part.ru.html.j2"
    russian.write_text(record_line(english.name, english.read_bytes(), False) + "перевод\n", encoding="utf-8")
    assert stale_translation(russian, "p/_part.ru.html.j2", tmp_path) is None

    english.write_text("first line\nthe merge adds both routes\nlast line\n", encoding="utf-8")
    stale = stale_translation(russian, "p/_part.ru.html.j2", tmp_path)
    assert stale is not None
    assert stale.startswith("p/_part.ru.html.j2:1: translation is stale: _part.html.j2 changed")
    assert "line 2: 'the merge adds two routes' is now 'the merge adds both routes'" in stale
    assert "site-builder translated p/_part.ru.html.j2" in stale

    assert mark_translated(russian).endswith(f"@ {blob_id(english.read_bytes())} #}}")
    assert stale_translation(russian, "p/_part.ru.html.j2", tmp_path) is None
    assert russian.read_text(encoding="utf-8").count("translation of") == 1, "the record is replaced, not added"


def test_a_translation_without_a_record_is_refused_with_the_line_to_add(tmp_path):
    (tmp_path / "index.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "index.ru.md").write_text("# Главная\n", encoding="utf-8")
    stale = stale_translation(tmp_path / "index.ru.md", "docs/index.ru.md", tmp_path)
    assert stale is not None and "<!-- translation of index.md @ " in stale


def test_every_translation_in_the_repository_is_current():
    folders = [p.folder for p in PAGES] + [PROJECT.templates_dir, PROJECT.docs_dir]
    found = [path for folder in folders for path in translations_in(folder)]
    assert len(found) > 20
    assert [s for path in found if (s := stale_translation(path, PROJECT.display(path), ROOT))] == []


def test_a_translated_template_needs_its_title_and_a_title_needs_its_template(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "page.toml").write_text('title = "Demo"\norder = 1\n', encoding="utf-8")
    (folder / "page.ru.md.j2").write_text("", encoding="utf-8")
    with pytest.raises(PageConfigError, match=r"\[ru\] title = "):
        read_page(folder, "pages/demo")
    (folder / "page.ru.md.j2").unlink()
    (folder / "page.toml").write_text('title = "Demo"\norder = 1\n[ru]\ntitle = "Демо"\n', encoding="utf-8")
    with pytest.raises(PageConfigError, match="page.ru.md.j2 is not in the folder"):
        read_page(folder, "pages/demo")


def test_a_russian_page_includes_the_russian_partial_where_there_is_one_and_the_english_one_elsewhere(tmp_path):
    (tmp_path / "page.md.j2").write_text('{% include "_a.j2" %}+{% include "_b.j2" %}', encoding="utf-8")
    (tmp_path / "page.ru.md.j2").write_text('{% include "_a.j2" %}+{% include "_b.j2" %}', encoding="utf-8")
    (tmp_path / "_a.j2").write_text("a", encoding="utf-8")
    (tmp_path / "_a.ru.j2").write_text("а", encoding="utf-8")
    (tmp_path / "_b.j2").write_text("b", encoding="utf-8")
    assert page_environment(tmp_path, lang="ru").get_template("page.md.j2").render() == "а+b"
    assert page_environment(tmp_path).get_template("page.md.j2").render() == "a+b"
    with pytest.raises(jinja2.TemplateNotFound):
        page_environment(tmp_path, lang="ru").get_template("_c.j2")


def test_each_language_searches_its_own_pages_in_its_own_language(tmp_path):
    (tmp_path / "search").mkdir()
    docs = [
        {"location": "", "title": "Home", "text": ""},
        {"location": "chapter-24/#formula", "title": "One formula", "text": ""},
        {"location": "ru/", "title": "Главная", "text": ""},
        {"location": "ru/chapter-24/#formula", "title": "Одна формула", "text": ""},
    ]
    index = {"config": {"lang": ["en"], "separator": "[\\s\\-]+"}, "docs": docs}
    (tmp_path / "search" / "search_index.json").write_text(json.dumps(index), encoding="utf-8")
    split_search_index(tmp_path)
    english = json.loads((tmp_path / "search" / "search_index.json").read_text(encoding="utf-8"))
    russian = json.loads((tmp_path / "ru" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert [d["location"] for d in english["docs"]] == ["", "chapter-24/#formula"]
    assert [d["location"] for d in russian["docs"]] == ["", "chapter-24/#formula"]
    assert [d["title"] for d in russian["docs"]] == ["Главная", "Одна формула"]
    assert (english["config"]["lang"], russian["config"]["lang"]) == (["en"], ["ru"])
    assert russian["config"]["separator"] == index["config"]["separator"]


# ------------------------------------------------------------------------------------------ the built site
def _page(built_site: Path, path: str) -> html.HtmlElement:
    return html.parse(str(built_site / path)).getroot()


@pytest.mark.parametrize("slug", [p.slug for p in TRANSLATED])
def test_a_translated_page_is_russian_and_links_its_english_twin_both_ways(built_site, slug):
    english, russian = page(slug), page(slug).twin("ru")
    assert russian.html_path == "ru/" + english.html_path  # every English URL stays as it was
    en, ru = _page(built_site, english.html_path), _page(built_site, russian.html_path)
    assert (en.get("lang"), ru.get("lang")) == ("en", "ru")
    up = "../" * english.url.count("/")  # from the English page to the site's root
    assert ru.xpath("string(//h1)").startswith(russian.heading)
    assert en.xpath('//link[@rel="alternate"][@hreflang="ru"]/@href') == [f"{up}ru/{english.url}"]
    assert ru.xpath('//link[@rel="alternate"][@hreflang="en"]/@href') == [f"../{up}{english.url}"]
    assert ru.xpath('//a[contains(@class,"md-select__link")][@hreflang="en"]/@href') == [f"../{up}{english.url}"]
    assert en.xpath('//a[contains(@class,"md-select__link")][@hreflang="ru"]/@href') == [f"{up}ru/{english.url}"]
    assert ru.xpath('//input[@data-md-component="search-query"]/@placeholder') == ["Поиск"]
    config = json.loads(ru.xpath('string(//script[@id="__config"])'))
    assert config["base"] == f"../{up}ru/", "a Russian page searches ru/search/search_index.json"


UNTRANSLATED_SLUG = "path_expansion"  # the page the copy below publishes in English only


@pytest.fixture(scope="module")
def one_untranslated(fixture_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Page]]:
    """A strict build of a copy of the project (with the session's fixture results) in which one page has no Russian
    twin: its ``.ru.`` files, its Russian golden list and the ``[ru]`` table of its page.toml are taken away. Every
    page of this repository is translated, so the site a Russian reader meets when one is not is built here."""
    root = copy_project(tmp_path_factory.mktemp("untranslated") / "p", results=fixture_results, warm=True)
    folder = root / "pages" / UNTRANSLATED_SLUG
    for path in [*folder.glob("*.ru.*"), folder / "golden" / "shown.ru.txt"]:
        path.unlink()
    toml = folder / "page.toml"
    text = toml.read_text(encoding="utf-8")
    assert "\n[ru]\n" in text, "the page to untranslate is translated here"
    toml.write_text(re.sub(r"\n\[ru\]\n(?:[^\[\n][^\n]*\n?)*", "\n", text), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site"],
        cwd=root,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    pages = Project.at(root).pages()
    assert [p.slug for p in pages if "ru" not in p.languages] == [UNTRANSLATED_SLUG]
    return root / "site", pages


def _primary_nav_links(root: html.HtmlElement) -> tuple[html.HtmlElement, dict[str, str]]:
    nav = root.xpath('//nav[contains(@class,"md-nav--primary")]')[0]
    return nav, {a.get("href"): " ".join(a.text_content().split()) for a in nav.iter("a")}


@pytest.mark.slow
def test_an_untranslated_page_switches_to_the_russian_home_and_has_no_false_alternate(one_untranslated):
    site, pages = one_untranslated
    (evidence,) = [p for p in pages if p.slug == UNTRANSLATED_SLUG]
    root = _page(site, evidence.html_path)
    assert root.xpath('//link[@rel="alternate"][@hreflang="ru"]') == []
    depth = evidence.url.count("/")
    assert root.xpath('//a[contains(@class,"md-select__link")][@hreflang="ru"]/@href') == ["../" * depth + "ru/"]
    assert not (site / "ru" / evidence.html_path).exists()
    translated = next(p for p in pages if "ru" in p.languages and p.section == evidence.section)
    assert _page(site, translated.html_path).xpath('//link[@rel="alternate"][@hreflang="ru"]'), "its neighbour has"


@pytest.mark.slow
def test_the_russian_navigation_lists_the_translations_and_the_rest_as_not_yet_translated(one_untranslated):
    site, pages = one_untranslated
    nav, links = _primary_nav_links(_page(site, "ru/index.html"))
    for p in pages:
        if "ru" in p.languages:
            assert links[p.url] == p.twin("ru").title
        else:
            assert links[f"../{p.url}"] == p.title  # in English, and marked as such by its section
    assert "Пока только на английском" in nav.text_content()
    english_nav, _ = _primary_nav_links(_page(site, "index.html"))
    assert not any((a.get("href") or "").startswith("ru/") for a in english_nav.iter("a"))


def test_the_russian_navigation_of_this_site_lists_every_page_in_russian(built_site):
    nav, links = _primary_nav_links(_page(built_site, "ru/index.html"))
    for p in PAGES:
        assert links[p.url] == p.twin("ru").title
    assert "Пока только на английском" not in nav.text_content(), "no page waits for its translation"
    assert not any(href.startswith("../") for href in links), "no Russian link leads to an English page"


def test_each_search_index_holds_only_its_own_languages_pages(built_site):
    english = json.loads((built_site / "search/search_index.json").read_text(encoding="utf-8"))
    russian = json.loads((built_site / "ru/search/search_index.json").read_text(encoding="utf-8"))
    assert russian["config"]["lang"] == ["ru"] and english["config"]["lang"] == ["en"]
    assert not any(d["location"].startswith("ru/") for d in english["docs"])
    titles = {d["title"] for d in russian["docs"]}
    assert "Шпаргалка" in titles and "Cheat sheet" not in titles
    assert (built_site / "assets/javascripts/lunr/min/lunr.ru.min.js").is_file()


def test_both_languages_show_the_same_downloads(built_site):
    for p in TRANSLATED:
        english = sorted(f.name for f in (built_site / p.url).iterdir() if f.suffix == ".txt")
        russian = sorted(f.name for f in (built_site / "ru" / p.url).iterdir() if f.suffix == ".txt")
        assert english == russian and english
        for name in english:
            assert (built_site / p.url / name).read_bytes() == (built_site / "ru" / p.url / name).read_bytes()


def test_a_value_the_russian_page_drops_fails_the_check_naming_both_pages(prepared, site_copy, clean_verdicts):
    twin = page("ch24").twin("ru")
    path = site_copy / twin.html_path
    text = path.read_text(encoding="utf-8")
    # The stack table's caption shows the depth; take that one value out of the Russian page only.
    caption = re.search(r'<caption id="stack-table-caption">.*?</caption>', text, re.DOTALL)
    assert caption is not None
    dropped = re.sub(r'<span[^>]*data-trace="DERIVED\.depth"[^>]*>[^<]*</span>', "", caption.group(), count=1)
    path.write_text(text.replace(caption.group(), dropped), encoding="utf-8")
    lines = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    twins = [line for line in lines if "table#stack-table [data-trace=DERIVED.depth]" in line]
    assert len(twins) == 1, lines
    assert twins[0].startswith(twin.html_path) and page("ch24").html_path in twins[0]


def test_the_checker_checks_every_russian_page_as_its_own(prepared):
    paths = {p.html_path for p in prepared.fresh.pages}
    assert {p.twin("ru").html_path for p in TRANSLATED} <= paths
    assert isinstance(prepared, check.Setup)


@pytest.mark.slow
def test_an_edited_english_template_fails_the_strict_build_naming_its_translation(fixture_results, tmp_path):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)
    figure = root / "pages" / "ch24" / "_cheat_sheet.html.j2"
    figure.write_text(figure.read_text(encoding="utf-8").replace("no parameters", "no weights"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site"],
        cwd=root,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "pages/ch24/_cheat_sheet.ru.html.j2:1: translation is stale: _cheat_sheet.html.j2 changed" in done.stderr
    assert not (root / "site").exists(), "nothing is published"


def test_site_builder_new_writes_a_page_current_in_both_languages_that_renders_in_both(tmp_path):
    import shutil

    from site_builder.pipeline import Pipeline
    from site_builder.project import Project
    from site_builder.render.pages import PageRenderer
    from site_builder.scaffold import new_page

    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    project = Project.at(tmp_path)
    folder = new_page(project, "layer_demo", "A layer, drawn", title_ru="Слой на схеме")
    (made,) = Project.at(tmp_path).pages()
    assert made.languages == ("en", "ru") and made.twin("ru").title == "Слой на схеме"
    for path in translations_in(folder):
        assert stale_translation(path, path.name, tmp_path) is None
    run = Pipeline(project, warn=lambda line: None).run_page("layer_demo")
    rendered = PageRenderer(project, [made]).render(made, run)
    russian = rendered.translations["ru"]
    assert "Вход проходит через слой к выходу" in russian and "lang: ru" in russian
    assert "ru/layer-demo/layer-demo-v1.trace.txt" in rendered.files
    shown = set(re.findall(r'data-trace="([^"]+)"', rendered.markdown))
    assert shown == set(re.findall(r'data-trace="([^"]+)"', russian)), "both languages show the same values"
