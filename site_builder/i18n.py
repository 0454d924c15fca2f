"""The site's languages: English, the source, and Russian, each translation beside the file it translates.

A translation of a file sits beside it, with the language before its extensions: ``page.md.j2`` -> ``page.ru.md.j2``,
``_cheat_sheet.html.j2`` -> ``_cheat_sheet.ru.html.j2``, ``docs/index.md`` -> ``docs/index.ru.md``. A page whose
folder holds ``page.ru.md.j2`` (and whose ``page.toml`` has a ``[ru]`` table with its title) is published in Russian
too, at ``ru/`` plus its URL, rendered from the same run as the English page: the numbers are computed once.

Every translated file starts with its *record*, the English file it was made from and that file's Git blob id::

    {# translation of page.md.j2 @ 5d4c0f2a9e8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d #}
    <!-- translation of index.md @ 5d4c0f2a9e8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d -->

When the English file changes, its id no longer matches: the build warns (so ``--strict`` fails), naming the
translation and the lines of the English file that changed since (read from Git, which keeps every committed
version by that id), until the translation is updated and its record rewritten with ``site-builder translated``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

SOURCE = "en"  # the language every page is written in first
LANGUAGES: dict[str, str] = {"en": "English", "ru": "Русский"}  # code -> its name, in its own language
TRANSLATED = ("ru",)  # the languages a page may be translated into

# The few words the builder itself writes on a page, per language.
WORDS: dict[str, dict[str, str]] = {
    "en": {"chapter": "Chapter", "untranslated": "Not yet translated"},
    "ru": {"chapter": "Глава", "untranslated": "Пока только на английском", "site_name": "Строим LLM с нуля"},
}

_RECORD = re.compile(r"\A(?:\{#|<!--)\s*translation of (?P<source>\S+) @ (?P<blob>[0-9a-f]{40})\s*(?:#\}|-->)[ \t]*\n?")


def word(lang: str, name: str) -> str:
    return WORDS[lang][name]


def localized_name(name: str, lang: str) -> str:
    """``page.md.j2`` -> ``page.ru.md.j2``: the name of a file's translation (a file's own name for English)."""
    if lang == SOURCE:
        return name
    folder, _, base = name.rpartition("/")
    stem, dot, rest = base.partition(".")
    return (folder + "/" if folder else "") + f"{stem}.{lang}{dot}{rest}"


def source_name(name: str) -> tuple[str, str]:
    """``page.ru.md.j2`` -> (``page.md.j2``, ``ru``); a name of no translation -> (itself, ``en``)."""
    stem, _, rest = name.partition(".")
    lang, _, tail = rest.partition(".")
    if lang in TRANSLATED and tail:
        return f"{stem}.{tail}", lang
    return name, SOURCE


def localized_path(path: str, lang: str) -> str:
    """Where a site path is served in ``lang``: ``chapter-24/index.md`` -> ``ru/chapter-24/index.md``."""
    return path if lang == SOURCE else f"{lang}/{path}"


def blob_id(data: bytes) -> str:
    """Git's id of a file's bytes (``git hash-object``), so Git can give back the text a translation was made from."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def record_line(source: str, data: bytes, markdown: bool) -> str:
    """The first line of a translation made from ``data``, the bytes of the file named ``source``."""
    if markdown:
        return f"<!-- translation of {source} @ {blob_id(data)} -->\n"
    return f"{{# translation of {source} @ {blob_id(data)} #}}\n"


@dataclass(frozen=True)
class Record:
    source: str  # the English file's name, beside the translation
    blob: str  # its Git blob id when it was translated


def read_record(text: str) -> Record | None:
    m = _RECORD.match(text)
    return Record(m["source"], m["blob"]) if m else None


def strip_record(text: str) -> str:
    """A Markdown translation without its record line (a Jinja record is a comment, which renders as nothing)."""
    return _RECORD.sub("", text, count=1)


def translations_in(folder: Path) -> list[Path]:
    """Every translated file directly in ``folder``, sorted."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and source_name(p.name)[1] != SOURCE)


def stale_translation(path: Path, display: str, root: Path) -> str | None:
    """Why the translation at ``path`` is out of date with its English file, or None when it is current.

    The message names the translation (``FILE:1``), the English file, and what changed there since: the first
    changed lines as Git has them for the recorded id, when it has them.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{display}: cannot read the translation: {exc}"
    source_file, _ = source_name(path.name)
    markdown = path.suffix == ".md"
    record = read_record(text)
    english = path.with_name(source_file)
    try:
        data = english.read_bytes()
    except OSError:
        return f"{display}:1: translates {source_file}, which does not exist beside it"
    fix = f"update it, then record the English it now matches with `site-builder translated {display}`"
    if record is None:
        line = record_line(source_file, data, markdown).strip()
        return f"{display}:1: a translation starts with the record of the English it was made from ({line}); {fix}"
    if record.source != source_file:
        return f"{display}:1: its record names {record.source}, but it translates {source_file}; {fix}"
    if record.blob == blob_id(data):
        return None
    return f"{display}:1: translation is stale: {source_file} changed since it was translated ({_changes(root, record.blob, data)}); {fix}"


def _changes(root: Path, blob: str, data: bytes) -> str:
    """The English lines that changed since the recorded version, as Git has it; or why that cannot be said."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "cat-file", "blob", blob], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is None or done.returncode != 0:
        return f"the version {blob[:12]} it was made from is not in this repository's Git history"
    old = done.stdout.decode("utf-8", "replace").splitlines()
    new = data.decode("utf-8", "replace").splitlines()
    parts: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        was = " / ".join(line.strip() for line in old[i1:i2])[:120]
        now = " / ".join(line.strip() for line in new[j1:j2])[:120]
        where = f"line {j1 + 1}" if j2 - j1 <= 1 else f"lines {j1 + 1}-{j2}"
        if tag == "insert":
            parts.append(f"{where} added: {now!r}")
        elif tag == "delete":
            parts.append(f"after line {j1}, removed: {was!r}")
        else:
            parts.append(f"{where}: {was!r} is now {now!r}")
    if not parts:
        return "only its line endings changed"
    more = f", and {len(parts) - 2} more changes" if len(parts) > 2 else ""
    return "; ".join(parts[:2]) + more


def mark_translated(path: Path) -> str:
    """Rewrite the record of the translation at ``path`` to the English file as it is now; the new record line."""
    text = path.read_text(encoding="utf-8")
    source_file, lang = source_name(path.name)
    if lang == SOURCE:
        raise ValueError(f"{path.name} is not a translation (a translation's name has .{TRANSLATED[0]}. in it)")
    data = path.with_name(source_file).read_bytes()
    line = record_line(source_file, data, path.suffix == ".md")
    body = _RECORD.sub("", text, count=1) if read_record(text) else text
    path.write_text(line + body, encoding="utf-8")
    return line.strip()
