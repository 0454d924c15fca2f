"""What ``mkdocs serve`` needs besides a build: quick rebuilds, and a failed page shown instead of a failed site.

- :func:`error_page` is what a page that failed to build shows: its title and the one-line error (a failed
  build would leave every request hanging);
- :func:`reuse_conversions` keeps, in this process, each page's HTML as MkDocs converted it, by the SHA-256 of
  everything the conversion reads: a page whose Markdown and surroundings did not change is not converted again
  (MkDocs converts every page on every rebuild);
- :func:`poll_faster` has the watcher look for edits every :data:`POLL_SECONDS`.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
from html import escape
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from .project import Page

POLL_SECONDS = 0.1  # how often mkdocs serve looks for edits (MkDocs polls every 0.5 s)

# A page's Markdown converted to HTML by an earlier build of this process, by the SHA-256 of everything the
# conversion reads (the configuration, every file's path and URL, the page's path and Markdown).
_CONVERTED: dict[str, tuple[Any, ...]] = {}
_CONVERTED_LIMIT = 512


def error_page(page: Page, message: str) -> str:
    """What ``mkdocs serve`` shows in place of a page that failed to build: its title and the one-line error."""
    from .render.pages import front_matter

    return (
        front_matter(page) + f'<h1 id="top">{escape(page.title)}</h1>\n\n'
        '<div class="admonition failure build-error" role="alert"><p class="admonition-title">'
        "This page did not build</p>\n"
        f"<p><code>{escape(message)}</code></p>\n"
        "<p>Fix the cause and save: the page is built again.</p></div>\n"
    )


def poll_faster(server: Any) -> None:
    """Have mkdocs serve look for edits every POLL_SECONDS instead of every 0.5 s (a stat of each watched file, a
    few milliseconds).

    MkDocs offers no setting for it: its ``LiveReloadServer`` builds a watchdog ``PollingObserver`` with the
    default timeout, so the observer's and its emitters' ``_timeout`` are set, only before the watcher starts
    and only where they are what MkDocs 1.6 builds; anything else is left as it is.
    """
    observer = getattr(server, "observer", None)
    if observer is None or not hasattr(observer, "_timeout") or observer.is_alive():
        return
    observer._timeout = POLL_SECONDS
    for emitter in list(getattr(observer, "emitters", ())):
        if hasattr(emitter, "_timeout"):
            emitter._timeout = POLL_SECONDS


class _Heard(logging.Handler):
    """Keeps the records logged while a page converts, to say them again when the conversion is reused."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def conversion_digest(config: MkDocsConfig, files: Files) -> bytes:
    """What converting any page reads besides its own Markdown: the configuration file and the options MkDocs
    converts with, and every file of the site (links are resolved against them)."""
    digest = hashlib.sha256(b"site-builder conversions 1\0")
    try:
        digest.update(Path(config.config_file_path).read_bytes() if config.config_file_path else b"")
    except OSError:
        digest.update(os.urandom(16))  # unreadable: nothing is reused
    digest.update(
        repr(
            (
                config.markdown_extensions,
                config.mdx_configs,
                config.use_directory_urls,
                config.validation,
                config.site_url,
                logging.getLogger("mkdocs").getEffectiveLevel(),
            )
        ).encode("utf-8")
    )
    for file in sorted(files, key=lambda f: f.src_uri):
        digest.update(f"{file.src_uri}\0{file.dest_uri}\0{file.url}\0{file.inclusion}\0".encode())
    return digest.digest()


def reuse_conversions(page: Any, digest: bytes) -> None:
    """Wrap ``page.render`` so that a conversion done before in this process, of the same Markdown with the same
    surroundings (``digest``, from :func:`conversion_digest`), is taken instead of converting again.

    Taking a conversion sets what MkDocs's own ``Page.render`` sets: ``content``, ``toc``, the title found in
    the content (MkDocs keeps it in ``_title_from_render``, which has no public setter; its ``title`` property
    reads it), the anchors present and the links to anchors; what converting said is logged again.
    """
    convert = page.render

    def render(config: MkDocsConfig, files: Files) -> None:
        # The Markdown as it is converted, after every plugin had its say.
        key = hashlib.sha256(
            digest + page.file.src_uri.encode("utf-8") + b"\0" + (page.markdown or "").encode("utf-8")
        ).hexdigest()
        found = _CONVERTED.get(key)
        if found is not None:
            content, toc, title, anchors, links, said = found
            for name, level, message in said:  # what converting it said, said again
                logging.getLogger(name).log(level, message)
            page.content, page.toc, page._title_from_render = content, copy.deepcopy(toc), title
            page.present_anchor_ids = set(anchors) if anchors is not None else None
            if links is not None:
                page.links_to_anchors = {files.get_file_from_path(src): dict(targets) for src, targets in links}
            return
        heard = _Heard()
        loggers = [logging.getLogger("mkdocs"), logging.getLogger("MARKDOWN")]
        for logger in loggers:
            logger.addHandler(heard)
        try:
            convert(config, files)
        finally:
            for logger in loggers:
                logger.removeHandler(heard)
        links = getattr(page, "links_to_anchors", None)
        if links is not None and any(files.get_file_from_path(f.src_uri) is not f for f in links):
            return  # a link to a file that is not part of this site: converted again every time
        if len(_CONVERTED) >= _CONVERTED_LIMIT:
            _CONVERTED.clear()
        anchors = page.present_anchor_ids
        _CONVERTED[key] = (
            page.content,
            copy.deepcopy(page.toc),
            page._title_from_render,
            frozenset(anchors) if anchors is not None else None,
            None if links is None else tuple((f.src_uri, tuple(t.items())) for f, t in links.items()),
            tuple(heard.records),
        )

    page.render = render
