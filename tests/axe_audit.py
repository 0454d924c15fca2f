"""The accessibility audit of a built site: axe-core in Chromium over every page, in every palette and width, and
IBM's Equal Access engine over what each page says (its article).

``tests/test_accessibility.py`` holds the tests; this module holds the audit, so that the session can start it
in the background, on a thread with a Chromium of its own, as soon as the site is built (see ``conftest.py``).
Pages are audited a few at a time, each width of a page in a fresh browser context: while axe-core runs in one
page's renderer, the next page loads. A page is loaded once per width and audited in both palettes, switched as a
reader switches them, with every <details> open: the work of loading it, opening it and giving it the two engines
is done once, not once per palette and state.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"  # the exact version pinned in package.json
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
# The second engine, from its own rules (IBM's requirements: WCAG 2.2 A and AA, EN 301 549, US 508). It audits each
# page's article, the part this project writes; the theme's chrome is axe-core's alone, since the engine refuses the
# CSS-only toggles Material builds it from (a hidden checkbox named by an empty <label>), which axe-core accepts.
ACE = ROOT / "node_modules" / "accessibility-checker-engine" / "ace.js"
ACE_VERSION = "4.0.34"  # the exact version pinned in package.json
ACE_POLICY = "IBM_Accessibility"
# One exception, where the engines disagree: IBM's engine calls a box whose overflow is smaller than its padding not
# scrollable, and so refuses it as a tab stop; the browser scrolls it, and axe-core requires it to be focusable. The
# browser decides: a box that scrolls (scrollWidth > clientWidth) may be a tab stop without a widget role.
START_ACE = r"""policy => {
    const scrolls = xpath => {
        // The engine counts the document's nodes before <html> in its index (/html[2]/body[1]/…): there is one <html>.
        const path = xpath.replace(/^\/html\[\d+\]/, "/html[1]");
        const el = document.evaluate(path, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
        return !!el && (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight);
    };
    window.__ace = new ace.Checker()
    .check(document.querySelector(".md-content article") || document.body, [policy])
    .then(r => r.results.filter(x => x.value[0] === "VIOLATION" && x.value[1] === "FAIL")
        .filter(x => !(x.ruleId === "element_tabbable_role_valid" && scrolls(x.path.dom)))
        .map(x => ({
        rule: x.ruleId, reason: x.reasonId, target: x.path.dom, html: x.snippet || "", message: x.message,
    }))); }"""
SCHEMES = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> Material's data-md-color-scheme
PALETTE_INPUT = {"light": "__palette_0", "dark": "__palette_1"}  # the palette toggle's input that selects each
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


def start_ace(page: Page) -> None:
    """Start IBM's engine on the page's article as it is now; ``finish_ace`` collects what it refuses."""
    if not page.evaluate("typeof window.ace !== 'undefined'"):
        page.add_script_tag(path=str(ACE))
    page.evaluate(START_ACE, ACE_POLICY)


def finish_ace(page: Page, setting: str, path: str) -> list[Violation]:
    return [
        Violation(path, setting, f"{v['rule']}/{v['reason']}", "violation", v["target"], v["html"], v["message"])
        for v in page.evaluate("() => window.__ace")
    ]


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


@dataclass
class Audits:
    """What the audits of one palette and width found, over every page of the site and the search overlay."""

    schemes: list[str] = field(default_factory=list)  # data-md-color-scheme of each page as audited
    versions: set[str] = field(default_factory=set)  # axe-core's version, as each run reported it
    contrast_ran: list[bool] = field(default_factory=list)  # each page's run included color-contrast
    opened_any: bool = False  # some page had <details> to open
    violations: list[Violation] = field(default_factory=list)
    ace: list[Violation] = field(default_factory=list)  # IBM's engine
    ace_pages: int = 0  # pages IBM's engine audited
    search: list[Violation] = field(default_factory=list)
    search_shown: bool = False


def switch_palette(page: Page, scheme: str) -> None:
    """Switch the page to ``scheme`` as a reader of that system palette has it: the system's colour scheme
    emulated, and the theme's palette toggle in the header clicked, until the page shows that palette."""
    wanted = SCHEMES[scheme]
    page.emulate_media(color_scheme=scheme)
    if page.evaluate("document.body.getAttribute('data-md-color-scheme')") != wanted:
        toggle = page.locator(f"label[for='{PALETTE_INPUT[scheme]}']")
        toggle.click()
        page.wait_for_function("s => document.body.getAttribute('data-md-color-scheme') === s", arg=wanted)
    settle(page)


def audit_page(browser: Browser, server: str, width: str, path: str, found: SiteAudit) -> Job:
    """One page at one width, with every <details> open, in each palette: audited by axe-core and by IBM's
    engine in the light palette, then switched to the dark one and audited again; at phone width, its wide
    tables are then scrolled with the keyboard.

    The page is audited with its <details> opened only: opening one shows what it holds and changes nothing else
    on the page, so everything shown with them closed is shown, the same, with them open."""
    with visit(browser, "light", width) as page:
        page.goto(server + path, wait_until="commit")
        yield
        page.wait_for_load_state("load")
        settle(page)
        opened = open_all_details(page)
        if opened:
            settle(page)
        for scheme in SCHEMES:
            into = found.settings[scheme, width]
            setting = f"{scheme}, {WIDTHS[width]['width']}px, details opened"
            if scheme != "light":
                switch_palette(page, scheme)
            into.schemes.append(page.evaluate("document.body.getAttribute('data-md-color-scheme')"))
            into.opened_any = into.opened_any or opened > 0
            start_audit(page)
            yield
            violations, result = finish_audit(page, setting, path)
            into.versions.add(result["version"])
            into.contrast_ran.append("color-contrast" in result["ran"])
            into.violations += violations
            start_ace(page)
            yield
            into.ace += finish_ace(page, setting, path)
            into.ace_pages += 1
        if width == "phone":
            scroll_wide_tables(page, path, found)


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


# How far a table sticks out past the right edge of the focusable region that holds it.
TABLE_OVERHANG = "r => r.querySelector('table').getBoundingClientRect().right - r.getBoundingClientRect().right"


def scroll_wide_tables(page: Page, path: str, into: SiteAudit) -> None:
    """Every table region of the page (at phone width, its <details> open) that a table sticks out of, scrolled to
    its last column with the arrow key: each one is added to ``into.wide``, and to ``into.stuck`` if its last
    column never comes into view."""
    regions = page.locator(".table-scroll[tabindex='0']")
    for i in range(regions.count()):
        region = regions.nth(i)
        if region.evaluate(TABLE_OVERHANG) <= 1:
            continue
        name = region.get_attribute("aria-labelledby")
        into.wide.append(f"/{path} {name}")
        region.focus()
        for _ in range(200):  # arrow keys move a focused scroller a line at a time
            page.keyboard.press("ArrowRight")
            if region.evaluate(TABLE_OVERHANG) <= 1:
                break
        try:  # the keys' smooth scrolling may still be on its way to where the presses sent it
            page.wait_for_function(f"r => ({TABLE_OVERHANG})(r) <= 1", arg=region.element_handle(), timeout=10_000)
        except PlaywrightTimeoutError:
            into.stuck.append(
                f"/{path}: the table in region {name} cannot be scrolled to its last column with the keyboard"
            )


@dataclass
class SiteAudit:
    """Everything the audit found: per (palette, width), and the wide tables scrolled at phone width."""

    settings: dict[tuple[str, str], Audits]
    wide: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)


def audit_site(browser: Browser, server: str, site: Path) -> SiteAudit:
    """Every page of ``site`` (served at ``server``) at every width in every palette, every page's wide tables
    scrolled with the keyboard at phone width, and the search overlay in every palette and width."""
    found = SiteAudit({(scheme, width): Audits() for scheme in SCHEMES for width in WIDTHS})
    jobs: list[Job] = [audit_page(browser, server, width, path, found) for width in WIDTHS for path in site_pages(site)]
    jobs += [
        audit_search(browser, server, scheme, width, found.settings[scheme, width]) for scheme, width in found.settings
    ]
    interleave(jobs)
    return found


class AuditInBackground:
    """:func:`audit_site` on a thread of its own, with a Chromium of its own (Playwright's synchronous API belongs
    to the thread that starts it); :meth:`result` waits for it. ``then`` runs on that thread when it ends."""

    def __init__(self, site: Path, server: str, chromium: str, args: list[str], then=None):
        self._site, self._server, self._chromium, self._args, self._then = site, server, chromium, args, then
        self._done = threading.Event()
        self._found: SiteAudit | BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="site-audit", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=self._chromium, headless=True, args=self._args)
                try:
                    self._found = audit_site(browser, self._server, self._site)
                finally:
                    browser.close()
        except BaseException as exc:  # handed to the tests that read the audit
            self._found = exc
        finally:
            self._done.set()
            if self._then is not None:
                self._then()

    def result(self) -> SiteAudit:
        self._done.wait()
        found = self._found
        if isinstance(found, BaseException):
            raise found
        assert found is not None
        return found
