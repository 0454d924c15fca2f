"""The built site in Debian's Chromium, driven by Playwright.

The site is served from 127.0.0.1; any request for another host is recorded
and aborted, so a page that depends on a CDN fails here. Screenshots land in
``test-output/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlparse

import pytest
from playwright.sync_api import Browser, Page

from helpers import PAGES

SHOTS = Path(__file__).resolve().parent.parent / "test-output" / "screenshots"
TWINS = [p.twin("ru").url for p in PAGES if "ru" in p.languages]  # the Russian pages, audited as the English ones
PAGE_URLS = ["", *[p.url for p in PAGES], "ru/", *TWINS]
CHAPTER = PAGE_URLS[1]
CHAPTERS = [CHAPTER, TWINS[0]]  # the chapter in each language
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


class Visit:
    """A page load that records console errors and any request to another host."""

    def __init__(self, browser: Browser, base: str, **context_options):
        self.context = browser.new_context(**context_options)
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.foreign: list[str] = []
        host = urlparse(base).netloc
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r):
            if urlparse(r.request.url).netloc not in (host, ""):
                self.foreign.append(r.request.url)
                r.abort()
            else:
                r.continue_()

        self.page.route("**/*", route)

    def open(self, url: str) -> Page:
        self.page.goto(url, wait_until="load")
        return self.page

    def close(self):
        self.context.close()


@contextlib.contextmanager
def opened(browser: Browser, server: str, path: str = CHAPTER, **context_options) -> Iterator[Visit]:
    """The page at ``path`` loaded in a fresh browser context with ``context_options``, closed afterwards."""
    v = Visit(browser, server, **context_options)
    try:
        v.open(server + path)
        yield v
    finally:
        v.close()


def _shot(page: Page, name: str):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("path", PAGE_URLS)
def test_no_console_errors_and_no_foreign_requests(browser, server, path):
    with opened(browser, server, path) as v:
        v.page.wait_for_timeout(300)
        assert v.errors == []
        assert v.foreign == []


@pytest.mark.parametrize("path", PAGE_URLS)
def test_no_page_wide_horizontal_scroll_at_phone_width(browser, server, path):
    with opened(browser, server, path, viewport=PHONE, device_scale_factor=1) as v:
        page = v.page
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path or 'home'} scrolls sideways by {overflow}px at 390px"
        # A box in the lesson that scrolls sideways must not also scroll (and show a scrollbar) up and
        # down: a formula's stretched brackets draw past its box, and did, beside most formulas.
        upright = page.evaluate(
            """() => [...document.querySelectorAll('.md-content *')].filter(e => {
                   const s = getComputedStyle(e);
                   return ['auto', 'scroll'].includes(s.overflowY) && e.scrollHeight > e.clientHeight;
               }).map(e => e.className || e.tagName)"""
        )
        assert upright == [], f"{path or 'home'}: boxes that scroll up and down: {upright}"
        _shot(page, f"phone-{(path or 'home').strip('/').replace('/', '-')}")


def test_wide_diagrams_scroll_inside_a_focusable_region(browser, server):
    with opened(browser, server, viewport=PHONE) as v:
        page = v.page
        svgs = page.locator("svg[role='img']")
        assert svgs.count() >= 2
        for i in range(svgs.count()):
            svg = svgs.nth(i)
            box = svg.bounding_box()
            if box and box["width"] > 390:
                region = svg.locator("xpath=ancestor::*[@tabindex='0'][1]")
                assert region.count() == 1, "a wide diagram must scroll inside a focusable region"
                assert region.get_attribute("aria-label") or region.get_attribute("aria-labelledby")


@pytest.mark.parametrize("path", CHAPTERS)
def test_everything_works_with_javascript_off(browser, server, path):
    with opened(browser, server, path, java_script_enabled=False, viewport=DESKTOP) as v:
        page = v.page
        assert page.locator("svg[role='img']").count() >= 2
        for i in range(page.locator("svg[role='img']").count()):
            assert page.locator("svg[role='img']").nth(i).is_visible()
        assert page.locator("math").count() >= 1
        assert page.locator("math").first.is_visible()
        table = page.locator("table:has(th)")
        assert table.count() >= 1 and table.first.is_visible()
        details = page.locator("ol.quiz details").last
        assert details.get_attribute("open") is None
        details.locator("summary").click()
        assert details.get_attribute("open") is not None
        assert details.locator("[data-trace]").first.is_visible()
        _shot(page, f"chapter-no-js-{path.strip('/').replace('/', '-')}")


def _diagram_colours(page: Page) -> dict[str, str]:
    return page.evaluate(
        """() => {
            const svg = document.querySelector("svg[role='img']");
            const text = svg.querySelector("text");
            const edge = svg.querySelector(".edge path");
            const shape = svg.querySelector(".node ellipse, .node polygon, .node path");
            const cs = (el, p) => el ? getComputedStyle(el).getPropertyValue(p) : "";
            return {text: cs(text, "fill"), edge: cs(edge, "stroke"), shape: cs(shape, "stroke")};
        }"""
    )


def _set_scheme(page: Page, scheme: str):
    page.evaluate(
        "s => { document.body.setAttribute('data-md-color-scheme', s); }",
        scheme,
    )


@pytest.mark.parametrize("path", CHAPTERS)
def test_dark_palette_changes_diagram_colours(browser, server, path):
    with opened(browser, server, path, viewport=DESKTOP) as v:
        page = v.page
        name = path.strip("/").replace("/", "-")
        _set_scheme(page, "default")
        light = _diagram_colours(page)
        _shot(page, f"{name}-light")
        _set_scheme(page, "slate")
        dark = _diagram_colours(page)
        _shot(page, f"{name}-dark")
        assert light["text"] and dark["text"]
        assert light["text"] != dark["text"], "diagram text must follow the palette"
        assert light["edge"] != dark["edge"], "diagram lines must follow the palette"
        body_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert dark["text"] != body_bg, "diagram text must stay visible on the dark background"


def test_palette_toggle_switches_to_dark(browser, server):
    with opened(browser, server, viewport=DESKTOP) as v:
        page = v.page
        before = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
        toggle = page.locator("form[data-md-component='palette'] label:visible").first
        toggle.click()
        after = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
        assert before != after and {before, after} == {"default", "slate"}


def test_forced_colours_keep_dashed_and_double_cues(browser, server):
    with opened(browser, server, viewport=DESKTOP) as v:
        page = v.page
        page.emulate_media(forced_colors="active")
        cues = page.evaluate(
            """() => {
                const svg = document.querySelector("svg[role='img']");
                const dashes = [...svg.querySelectorAll(".edge path")].map(p => getComputedStyle(p).strokeDasharray);
                const merge = [...svg.querySelectorAll(".node")].filter(n => n.querySelectorAll("ellipse, polygon").length >= 2);
                const strokes = merge.length ? [...merge[0].querySelectorAll("ellipse, polygon")].map(e => getComputedStyle(e).stroke) : [];
                return {dashes, merges: merge.length, strokes};
            }"""
        )
        assert any(d not in ("none", "") for d in cues["dashes"]), "the learned route must stay dashed"
        assert any(d in ("none", "") for d in cues["dashes"]), "the identity route must stay solid"
        assert cues["merges"] >= 1, "the merge keeps its double border"
        assert all(s not in ("none", "", "rgba(0, 0, 0, 0)") for s in cues["strokes"])
        _shot(page, "chapter-forced-colours")


def test_diagrams_have_accessible_names_and_descriptions(browser, server):
    with opened(browser, server) as v:
        page = v.page
        svgs = page.locator("svg[role='img']")
        for i in range(svgs.count()):
            svg = svgs.nth(i)
            labelled = svg.get_attribute("aria-labelledby") or ""
            ids = labelled.split()
            assert ids, "each diagram names its title and description"
            texts = [page.locator(f"[id='{i_}']").first.text_content() or "" for i_ in ids]
            assert all(t.strip() for t in texts)
        figure = page.locator("figure").first
        assert figure.get_attribute("aria-describedby") or figure.locator("figcaption").count() == 1


def test_palette_follows_the_system_colour_scheme(browser, server):
    for scheme in ("light", "dark"):
        with opened(browser, server, viewport=DESKTOP, color_scheme=scheme) as v:
            page = v.page
            scheme_attr = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
            assert scheme_attr == {"light": "default", "dark": "slate"}[scheme], (
                "the palette follows the system setting"
            )
            _shot(page, f"desktop-{scheme}")


def test_each_prediction_stays_hidden_until_its_check_is_opened(browser, server):
    with opened(browser, server, CHAPTER, viewport=PHONE) as v:
        page = v.page
        for section in ("predict", "test-yourself", "exercises"):
            items = page.locator(f"h2#{section} ~ ol.quiz").first.locator(":scope > li")
            assert items.count() >= 2
            for i in range(items.count()):
                answer = items.nth(i).locator("details > p").first
                assert not answer.is_visible(), f"{section} {i}: the answer shows before its check is opened"
                items.nth(i).locator("details > summary").click()
                assert answer.is_visible(), f"{section} {i}: opening the check shows the answer"


def test_the_first_diagram_comes_before_any_visible_code(browser, server):
    with opened(browser, server, CHAPTER, viewport=DESKTOP) as v:
        page = v.page
        diagram_top = page.locator("svg.dg").first.bounding_box()["y"]
        visible_code = [b for b in page.locator("pre").all() if b.is_visible()]
        assert all(b.bounding_box()["y"] > diagram_top for b in visible_code)
        assert not any(f.is_visible() for f in page.locator("figure.code-excerpt").all()), (
            "code excerpts start collapsed"
        )


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_the_language_switcher_stays_on_the_same_page(browser, server, javascript):
    with opened(browser, server, CHAPTER, viewport=DESKTOP, java_script_enabled=javascript) as v:
        page = v.page
        sitemaps: list[str] = []
        page.on("request", lambda r: sitemaps.append(r.url) if r.url.endswith("sitemap.xml") else None)
        page.locator(".md-header__option .md-select").hover()
        page.locator("a.md-select__link[hreflang='ru']").click()
        page.wait_for_load_state()
        assert page.url == server + TWINS[0]
        assert page.evaluate("document.documentElement.lang") == "ru"
        page.locator(".md-header__option .md-select").hover()
        page.locator("a.md-select__link[hreflang='en']").click()
        page.wait_for_load_state()
        assert page.url == server + CHAPTER
        # The theme looks each hreflang alternate up in a sitemap below it; every lookup reads the site's one.
        assert set(sitemaps) <= {server + "sitemap.xml"} and (sitemaps != []) == javascript, sitemaps
        assert v.errors == []


def _russian_search(browser: Browser, server: str, query: str) -> set[str]:
    """The pages (their URLs below the site) that the search of a Russian page lists for ``query``.

    The query comes in the address (``?q=``, Material's shared search), which puts it in the field before the search
    index is ready: typed into the open field, it could race the index, and a late answer to the empty query would
    then read "Совпадений не найдено"."""
    with opened(browser, server, f"{TWINS[0]}?{urlencode({'q': query})}", viewport=DESKTOP) as v:
        # Material writes the count ("Найдено совпадений: 11") with the first ten items: wait for all, or for none.
        v.page.wait_for_function(
            """() => {
                const meta = document.querySelector(".md-search-result__meta").textContent.trim();
                if (meta.startsWith("Совпадений")) return true;
                const found = meta.match(/^Найден.*?(\\d+)/);
                const shown = document.querySelectorAll(".md-search-result__item");
                shown[shown.length - 1]?.scrollIntoView();  // Material renders the items past ten as they scroll in
                return found !== null && shown.length === Number(found[1]);
            }"""
        )
        links = v.page.locator(".md-search-result__item > a")
        hrefs = [links.nth(i).get_attribute("href") or "" for i in range(links.count())]
    return {urlparse(h).path.removeprefix(urlparse(server).path) for h in hrefs}


def test_russian_search_finds_russian_pages_only(browser, server):
    found = _russian_search(browser, server, "шпаргалка")  # a word only the Russian pages have
    assert found and all(path.startswith("ru/") for path in found), found


def test_russian_search_finds_a_typed_word_form_and_every_form_of_a_typed_stem(browser, server):
    # The search does not stem (site_builder/localize.py says why): a whole word finds the pages that hold that form,
    # and its stem finds the pages that hold any of its forms. A stemmed index would find nothing for a whole word.
    twin = {p.slug: p.twin("ru").url for p in PAGES}
    assert twin["ch25"] in _russian_search(browser, server, "нормализации")
    assert {twin["ch25"], twin["prenorm"]} <= _russian_search(browser, server, "нормализац")
    forms = _russian_search(browser, server, "остаточное") | _russian_search(browser, server, "остаточные")
    assert twin["ch24"] in forms and forms <= _russian_search(browser, server, "остаточн")
