"""The source files a page's fixtures depend on, found by following their imports.

The fixture cache is keyed by these files' bytes. Starting from the page's
``fixtures.py``, every ``import`` of our own code (the ``site_builder``
package, the page's own package) is followed, package ``__init__`` files
included; third-party modules are covered by their versions in the key. A
page's data files (anything in its folder that is not Python, a template, its
``page.toml`` or a golden file) are part of it too. Nothing has to be listed
by hand, so a new page or a new engine module is tracked the day it appears.

Finding the imports needs a parse of each file; the import list of a file is
kept by the SHA-256 of its bytes in the cache store (``.cache/imports/``,
:mod:`site_builder.cache`), so a build reads and hashes the sources but parses
only the files whose bytes it has not seen before.
"""

from __future__ import annotations

import ast
import hashlib
import os
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cache import Store

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # site_builder/
RENDER_SIDE = {"*.j2", "page.toml", "figures.py"}  # read by the build after the fixtures ran


def _module_file(base: Path, parts: tuple[str, ...]) -> Path | None:
    target = base.joinpath(*parts)
    if (target / "__init__.py").is_file():
        return target / "__init__.py"
    if target.with_suffix(".py").is_file():
        return target.with_suffix(".py")
    if target.is_dir():
        return target  # a namespace package (a page folder without __init__.py)
    return None


_DISTRIBUTIONS: dict[str, str] | None = None


def distributions() -> dict[str, str]:
    """Installed distributions (normalized name -> version), read from the ``*.dist-info`` folder names on
    ``sys.path``: what keys need of third-party code, without importing it or ``importlib.metadata``."""
    global _DISTRIBUTIONS
    if _DISTRIBUTIONS is None:
        import os
        import sys

        found: dict[str, str] = {}
        for entry in sys.path:
            try:
                names = os.listdir(entry or ".")
            except OSError:
                continue
            for name in names:
                if name.endswith(".dist-info"):
                    dist, _, version = name[: -len(".dist-info")].partition("-")
                    found.setdefault(dist.lower().replace("-", "_"), version)
        _DISTRIBUTIONS = found
    return _DISTRIBUTIONS


class Roots:
    """Where an absolute module name of our own code lives: ``site_builder...`` or ``pages...``."""

    def __init__(self, pages_dir: Path, store: Store | None = None):
        self.bases = {"site_builder": PACKAGE_DIR.parent, "pages": Path(pages_dir).resolve().parent}
        self.pages_name = Path(pages_dir).resolve().name
        self._resolved: dict[str, list[Path]] = {}
        self._digests: dict[Path, bytes] = {}
        self._edges: dict[Path, list[Path]] = {}
        self.memo = ImportMemo(store)

    def digest(self, file: Path) -> bytes:
        """SHA-256 of the file's bytes, read once per build however many pages share it."""
        found = self._digests.get(file)
        if found is None:
            found = self._digests[file] = hashlib.sha256(file.read_bytes()).digest()
        return found

    def imports(self, file: Path, module: str) -> tuple[str, ...]:
        return self.memo.imports(file, self.digest(file), module, file.name == "__init__.py")

    def dependencies(self, file: Path) -> list[Path]:
        """The files of our own code that ``file`` imports, found once per build however many pages share it."""
        found = self._edges.get(file)
        if found is not None:
            return found
        deps: list[Path] = []
        module = self.module_name(file)
        if module is not None:
            try:
                names = self.imports(file, module)
            except (SyntaxError, ValueError):
                names = ()  # the file's bytes are in the key; running the fixtures names the error with its line
            for name in names:
                deps += self.resolve(name)
        self._edges[file] = deps
        return deps

    def resolve(self, name: str) -> list[Path]:
        """The files executed when ``name`` is imported: each package ``__init__`` on the way, then the module."""
        if name not in self._resolved:
            self._resolved[name] = self._resolve(name)
        return self._resolved[name]

    def _resolve(self, name: str) -> list[Path]:
        parts = name.split(".")
        top = parts[0]
        if top not in self.bases:
            return []
        base = self.bases[top]
        if top == "pages":
            parts = [self.pages_name, *parts[1:]]
        files: list[Path] = []
        for i in range(1, len(parts) + 1):
            found = _module_file(base, tuple(parts[:i]))
            if found is None:
                return files
            if found.is_file():
                files.append(found)
        return files

    def module_name(self, file: Path) -> str | None:
        for top, base in self.bases.items():
            try:
                rel = file.relative_to(base)
            except ValueError:
                continue
            parts = list(rel.with_suffix("").parts)
            if top == "pages":
                if not parts or parts[0] != self.pages_name:
                    continue
                parts[0] = "pages"
            elif parts[0] != "site_builder":
                continue
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
        return None


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.stmt]):
    """Every statement, nested ones included (an import is a statement, never inside an expression, so the
    expressions, most of a tree, need not be visited)."""
    todo = list(reversed(body))
    while todo:
        node = todo.pop()
        yield node
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if block:
                todo.extend(reversed(block))


def _parse_imports(source: bytes, filename: str, module: str, is_package: bool) -> tuple[str, ...]:
    """Absolute names of the modules a file imports (and, for ``from X import y``, X.y when y is a module)."""
    tree = ast.parse(source, filename=filename)
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return tuple(names)


IMPORTS_KIND = "imports"
IMPORTS_FORMAT = "site-builder import list 2"


def _import_list(data: object) -> tuple[str, ...]:
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        raise TypeError("not a list of module names")
    return tuple(data)


class ImportMemo:
    """Import lists by content, one store entry (``.cache/imports/NAME``) per file's bytes, module and kind.

    A file whose bytes were seen before is not parsed again. A damaged entry is parsed again with one warning
    (by the store); neither a damaged entry nor one that cannot be written changes a key, only how long
    computing it takes. Without a store every file is parsed.
    """

    def __init__(self, store: Store | None) -> None:
        self.store = store

    def imports(self, file: Path, digest: bytes, module: str, is_package: bool) -> tuple[str, ...]:
        if self.store is None:
            return _parse_imports(file.read_bytes(), str(file), module, is_package)
        from ..cache import name

        entry = name(IMPORTS_FORMAT, digest, module, str(int(is_package)))
        found = self.store.read(IMPORTS_KIND, entry, _import_list, "an import list", "parsing the file again")
        if found is not None:
            return found
        names = _parse_imports(file.read_bytes(), str(file), module, is_package)
        self.store.put_json(IMPORTS_KIND, entry, list(names))
        return names


def fixture_sources(page_folder: Path, pages_dir: Path, roots: Roots | None = None) -> list[Path]:
    """Every file whose bytes decide what the page's fixtures produce, sorted.

    Pass one ``roots`` (``Roots(pages_dir)``) to share module lookups across the pages of one build.
    """
    roots = roots or Roots(pages_dir)
    start = page_folder / "fixtures.py"
    seen: set[Path] = set()
    todo = [start] if start.is_file() else []
    while todo:
        file = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        todo += [f for f in roots.dependencies(file) if f not in seen]
    data: list[Path] = []
    for folder, dirs, names in os.walk(page_folder):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "golden")]
        for name in names:
            if name.endswith((".py", ".pyc")) or any(fnmatch(name, pattern) for pattern in RENDER_SIDE):
                continue  # sources (followed through their imports) and what the build reads after the run
            path = Path(folder) / name
            if path.is_file():
                data.append(path)
    return sorted(seen | set(data))
