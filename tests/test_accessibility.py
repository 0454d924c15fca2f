"""Every built page audited by axe-core in Debian's Chromium.

axe-core comes from the npm package pinned in ``package.json`` (``make test``
installs it into ``node_modules/``); it is injected into each page from that
file, so the audit needs no network. Each page of the built site (every
``index.html`` under it, and ``404.html``) is audited in the light and the
dark palette, at desktop and phone width, with its ``<details>`` closed as
published and again with every one of them opened; the search overlay is
audited open, showing results. A failure lists each violation's rule, element
and page.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"  # the exact version pinned in package.json
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
SCHEMES = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> Material's data-md-color-scheme
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

# Material's JavaScript has run: the palette is applied and each code block has the
# toolbar (copy button) that the bundle adds; no transition is still under way.
SETTLED = """() => document.readyState === "complete"
    && document.body.hasAttribute("data-md-color-scheme")
    && [...document.querySelectorAll(".highlight pre > code")].every(c => c.parentElement.querySelector(":scope > .md-code__nav"))
    && document.getAnimations().every(a => a.playState !== "running")"""

RUN_AXE = """options => axe.run(document, options).then(r => ({
    version: axe.version,
    ran: [...r.violations, ...r.passes, ...r.incomplete].map(rule => rule.id),
    violations: r.violations.map(v => ({
        rule: v.id,
        impact: v.impact,
        nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html, summary: n.failureSummary})),
    })),
}))"""


def site_pages(site: Path) -> list[str]:
    """The URL path of every page in a built site: each folder's ``index.html``, then ``404.html``."""
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    urls = ["" if p == "." else p + "/" for p in pages]
    if (site / "404.html").is_file():
        urls.append("404.html")
    return urls


@dataclass(frozen=True)
class Violation:
    page: str
    setting: str  # palette, width and state of the <details>
    rule: str
    impact: str
    target: str
    html: str
    summary: str

    def __str__(self) -> str:
        first = self.summary.splitlines()[1].strip() if len(self.summary.splitlines()) > 1 else self.summary
        return (
            f"/{self.page} ({self.setting}): {self.rule} [{self.impact}] at {self.target}: {self.html[:160]} -- {first}"
        )


@contextlib.contextmanager
def visit(browser: Browser, scheme: str, width: str) -> Iterator[Page]:
    context = browser.new_context(color_scheme=scheme, viewport=WIDTHS[width], device_scale_factor=1)
    try:
        yield context.new_page()
    finally:
        context.close()


def settle(page: Page) -> None:
    page.wait_for_function(SETTLED)


def start_audit(page: Page) -> None:
    """Start axe-core on the page as it is now, without waiting for it (``finish_audit`` collects the result), so
    that other pages load and are audited in their own renderer processes meanwhile."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    page.evaluate(
        "options => { window.__audit = (" + RUN_AXE + ")(options); }",
        {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]},
    )


def finish_audit(page: Page, setting: str, path: str) -> tuple[list[Violation], dict]:
    """axe-core's violations from the run ``start_audit`` started, and what axe reported about its own run."""
    result = page.evaluate("() => window.__audit")
    found = [
        Violation(path, setting, v["rule"], v["impact"] or "", n["target"], n["html"], n["summary"] or "")
        for v in result["violations"]
        for n in v["nodes"]
    ]
    return found, result


def audit(page: Page, setting: str, path: str) -> tuple[list[Violation], dict]:
    """axe-core's violations on the page as it is now, and what axe reported about its own run."""
    start_audit(page)
    return finish_audit(page, setting, path)


Job = Generator[None, None, None]


def interleave(jobs: Iterable[Job], at_once: int = 2) -> None:
    """Run ``jobs`` (generators that yield while the browser works for them) round-robin, ``at_once`` of them open
    at a time: while one page is audited, the next ones load. Every job runs to its end."""
    waiting = iter(jobs)
    running: list[Job] = []
    try:
        while True:
            while len(running) < at_once and (job := next(waiting, None)) is not None:
                running.append(job)
            if not running:
                return
            for job in list(running):
                try:
                    next(job)
                except StopIteration:
                    running.remove(job)
    finally:
        for job in running:  # a job that failed stops the others, each closing its browser context
            job.close()


def open_all_details(page: Page) -> int:
    return page.evaluate(
        """() => { const all = document.querySelectorAll("details");
                   all.forEach(d => d.setAttribute("open", ""));
                   return all.length; }"""
    )


@pytest.mark.slow  # needs node_modules/, which only `make test` installs
def test_axe_core_is_installed_at_the_pinned_version():
    assert AXE.is_file(), f"{AXE.relative_to(ROOT)} is missing: run `make test` (it installs the npm packages)"
    installed = json.loads((AXE.parent / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == AXE_VERSION
    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]["axe-core"]
    assert pinned == AXE_VERSION, "package.json pins axe-core exactly, to the version this audit names"


def test_every_page_is_found(built_site):
    pages = site_pages(built_site)
    assert "" in pages and "404.html" in pages
    assert len(pages) == len(list(built_site.rglob("*.html")))


@dataclass
class Audits:
    """What the audits of one palette and width found, over every page of the site and the search overlay."""

    schemes: list[str] = field(default_factory=list)  # data-md-color-scheme of each page as audited
    versions: set[str] = field(default_factory=set)  # axe-core's version, as each run reported it
    contrast_ran: list[bool] = field(default_factory=list)  # each page's first run included color-contrast
    opened_any: bool = False  # some page had <details> to open
    violations: list[Violation] = field(default_factory=list)
    search: list[Violation] = field(default_factory=list)
    search_shown: bool = False


def audit_page(browser: Browser, server: str, scheme: str, width: str, path: str, into: Audits) -> Job:
    """One page in one palette and width: audited with its <details> as published, then with all of them open."""
    setting = f"{scheme}, {WIDTHS[width]['width']}px"
    with visit(browser, scheme, width) as page:
        page.goto(server + path, wait_until="commit")
        yield
        page.wait_for_load_state("load")
        settle(page)
        into.schemes.append(page.evaluate("document.body.getAttribute('data-md-color-scheme')"))
        start_audit(page)
        yield
        found, result = finish_audit(page, f"{setting}, details closed", path)
        into.versions.add(result["version"])
        into.contrast_ran.append("color-contrast" in result["ran"])
        into.violations += found
        if open_all_details(page):
            into.opened_any = True
            settle(page)
            start_audit(page)
            yield
            found, result = finish_audit(page, f"{setting}, details opened", path)
            into.versions.add(result["version"])
            into.violations += found


def audit_search(browser: Browser, server: str, scheme: str, width: str, into: Audits) -> Job:
    """The search overlay open on a list of results, in one palette and width."""
    with visit(browser, scheme, width) as page:
        page.goto(server, wait_until="commit")
        yield
        page.wait_for_load_state("load")
        settle(page)
        page.keyboard.press("s")  # Material's shortcut: open the search
        page.keyboard.type("residual")  # the subject of the chapter: results with prose, math and code
        page.wait_for_selector(".md-search-result__item")
        into.search_shown = True
        settle(page)
        start_audit(page)
        yield
        into.search, _ = finish_audit(page, f"{scheme}, {WIDTHS[width]['width']}px, search results open", "")


@pytest.fixture(scope="module")
def audits(browser, server, built_site) -> dict[tuple[str, str], Audits]:
    """Every page of the site and the search overlay, audited in every palette and width in one pass of the browser
    (several pages open at once, each in a fresh context); the tests below read what each setting found."""
    found = {(scheme, width): Audits() for scheme in SCHEMES for width in WIDTHS}
    jobs: list[Job] = []
    for (scheme, width), into in found.items():
        jobs += [audit_page(browser, server, scheme, width, path, into) for path in site_pages(built_site)]
        jobs.append(audit_search(browser, server, scheme, width, into))
    interleave(jobs)
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_on_any_page(audits, built_site, scheme, width):
    found = audits[scheme, width]
    assert len(found.schemes) == len(site_pages(built_site)), "every page was audited"
    assert found.schemes == [SCHEMES[scheme]] * len(found.schemes)
    assert found.versions == {AXE_VERSION}
    assert all(found.contrast_ran), "the audit ran the WCAG AA rules"
    assert found.opened_any, "some page has <details> to open"
    violations = found.violations
    assert not violations, f"{len(violations)} axe-core violations:\n" + "\n".join(map(str, violations))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_with_search_results_open(audits, scheme, width):
    found = audits[scheme, width]
    assert found.search_shown
    assert not found.search, f"{len(found.search)} axe-core violations:\n" + "\n".join(map(str, found.search))


def test_the_audit_names_rule_element_and_page_of_a_violation(browser, server):
    with visit(browser, "light", "desktop") as page:
        page.goto(server, wait_until="load")
        settle(page)
        page.evaluate(
            """() => { const p = document.createElement("p");
                       p.id = "faint"; p.textContent = "faint text"; p.style.color = "#ccc";
                       document.querySelector(".md-content article").append(p); }"""
        )
        found, _ = audit(page, "light, injected", "")
    faint = [v for v in found if v.target == "#faint"]
    assert [v.rule for v in faint] == ["color-contrast"]
    assert str(faint[0]).startswith('/ (light, injected): color-contrast [serious] at #faint: <p id="faint"')


@pytest.mark.slow  # needs node_modules/, which only `make test` installs
def test_make_test_without_npm_stops_with_one_sentence(tmp_path):
    make = shutil.which("make")
    assert make, "make runs the set-up"
    done = subprocess.run(
        [make, "-B", "--no-print-directory", "node_modules/.installed"],
        cwd=ROOT,
        env={"PATH": str(tmp_path)},  # an empty folder: no npm on the path
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if not line.startswith("make:")]
    assert len(said) == 1 and "'npm' was not found" in said[0] and "apt-get install npm" in said[0]
    assert AXE.is_file(), "stopping early leaves the installed packages alone"


def test_make_site_needs_no_npm():
    plan = subprocess.run(["make", "-n", "-B", "site"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "mkdocs build --strict" in plan
    assert "npm" not in plan


# How far a table sticks out past the right edge of the focusable region that holds it.
TABLE_OVERHANG = "r => r.querySelector('table').getBoundingClientRect().right - r.getBoundingClientRect().right"


def scroll_wide_tables(browser: Browser, server: str, path: str, wide: list[str]) -> Job:
    """Every table region of the page at phone width that a table sticks out of, scrolled to its last column with
    the arrow key; the ones that were wide are added to ``wide``."""
    with visit(browser, "light", "phone") as page:
        page.goto(server + path, wait_until="commit")
        yield
        page.wait_for_load_state("load")
        settle(page)
        regions = page.locator(".table-scroll[tabindex='0']")
        for i in range(regions.count()):
            region = regions.nth(i)
            if region.evaluate(TABLE_OVERHANG) <= 1:
                continue
            wide.append(f"/{path} {region.get_attribute('aria-labelledby')}")
            region.focus()
            for _ in range(200):  # arrow keys move a focused scroller a line at a time
                page.keyboard.press("ArrowRight")
                if region.evaluate(TABLE_OVERHANG) <= 1:
                    break
            assert region.evaluate(TABLE_OVERHANG) <= 1, (
                f"/{path}: the table in region {region.get_attribute('aria-labelledby')} cannot be scrolled "
                "to its last column with the keyboard"
            )


def test_wide_tables_scroll_fully_into_view_with_the_keyboard_at_phone_width(browser, server, built_site):
    wide: list[str] = []
    interleave(scroll_wide_tables(browser, server, path, wide) for path in site_pages(built_site))
    assert wide, "some table is wider than a phone, so this test scrolls one"
