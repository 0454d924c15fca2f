"""The verdict cache of ``site-builder check``: a document found clean with exactly the same inputs is not read again.

The cache store (:mod:`site_builder.cache`) holds one entry
(``.cache/check/NAME``) per HTML page and SVG drawing that the last check found
without a problem. NAME is the SHA-256 of everything checking the document
reads:

- the format of this cache and the package digest (every ``.py`` file of
  ``site_builder``, the installed distributions and their versions, the
  Python version: the checker's own code and what it runs on, see
  :func:`site_builder.render.cache.package_digest`);
- the document's path in the site and the SHA-256 of its bytes;
- the facts it is checked against (every value, and the keys pages disagree
  on), as one canonical text;
- the attributes the site's style sheets show with ``content: attr(…)``;
- for a generated page, its declared heading, the charts and diagrams drawn
  again from the fresh run, and the bytes of its golden list of shown values.

The source regions its code excerpts show (``data-source``) are not known
before the document is read, so the entry records the SHA-256 of each region
it was compared with, and every reuse reads those regions again: an entry is
used only when they are all unchanged. The entry holds what the rest of the
check needs from the document: how many values it verified, every
``data-trace`` element with where it sits (for coverage), its links (for the
downloads) and, for a page, its visible text (for the search index).

A document with a problem is never stored: it is read, checked and reported
every time. A damaged entry is one line and its document is checked; an entry
that cannot be written is one line and the check goes on. Only the entries of
this check's documents are kept. ``site-builder check --fresh`` neither reads
nor writes them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..cache import Store
from ..trace.numbers import Measurement
from .coverage import Node, Shown
from .document import Facts, PageReport
from .excerpts import RegionError, Sources

KIND = "check"
VERDICT_FORMAT = "site-builder check verdicts 3"


@dataclass(frozen=True)
class Verdict:
    """What a clean document gave the check, and the source regions it was compared with (ref -> SHA-256)."""

    values: int
    shown: tuple[Shown, ...]
    links: frozenset[str]
    text: str | None  # an HTML page's visible text (search index); None for a drawing
    regions: Mapping[str, str]


class Reads(Sources):
    """``sources`` (sharing what they read), noting each region read through it: what one document's excerpts
    were compared with."""

    def __init__(self, sources: Sources) -> None:
        super().__init__(sources.repo_root, sources._regions)
        self.read: dict[str, str] = {}

    def region(self, ref: str) -> str:
        text = super().region(ref)
        self.read[ref] = text
        return text


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> bool:
    """A value whose JSON text says all the checker reads of it (its type included)."""
    kind = type(value)
    if kind in _PLAIN or kind is Measurement:  # a measurement's JSON text is its five numbers (_measured_json)
        return True
    return (kind is tuple or kind is list) and all(_plain(v) for v in value)  # read alike by formats and names


def _measured_json(value: Any) -> Any:
    """A measured result in a facts digest: its kind and its five numbers, all that its formats read."""
    if type(value) is Measurement:
        return {"measured": [value.median, value.low, value.high, value.seeds, value.float_path]}
    raise TypeError(f"{type(value).__name__} is not a plain value")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Verdicts:
    """The verdicts of one check: those of an earlier check, looked up by key, and those to keep."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.reused = 0  # documents not read again
        self.stored = 0  # documents checked now and found clean
        self._code: str | None = None
        self._facts: dict[int, tuple[Facts, str | None]] = {}

    # -- keys ------------------------------------------------------------------------------

    def key(
        self,
        page: str,
        data: bytes,
        facts: Facts,
        shown_attributes: frozenset[str],
        heading: str | None = None,
        charts: Mapping[str, str] | None = None,
        diagrams: Mapping[str, str] | None = None,
        shown_list: bytes | None = None,
    ) -> str | None:
        """The key of one document's check; None when it cannot be told exactly (its facts are not plain values)."""
        facts_digest = self._facts_digest(facts)
        if facts_digest is None:
            return None
        if self._code is None:
            from ..render.cache import package_digest

            self._code = package_digest().hex()
        drawn = None if charts is None else _sha(json.dumps(sorted(charts.items())))
        diagrams_drawn = None if diagrams is None else _sha(json.dumps(sorted(diagrams.items())))
        listed = None if shown_list is None else hashlib.sha256(shown_list).hexdigest()
        parts = [
            VERDICT_FORMAT,
            self._code,
            page,
            hashlib.sha256(data).hexdigest(),
            facts_digest,
            sorted(shown_attributes),
            heading,
            drawn,
            diagrams_drawn,
            listed,
        ]
        return _sha(json.dumps(parts))

    def _facts_digest(self, facts: Facts) -> str | None:
        memo = self._facts.get(id(facts.values))
        if memo is not None and memo[0].values is facts.values and memo[0].ambiguous == facts.ambiguous:
            return memo[1]
        digest = None
        values = facts.values
        if values is not None and all(_plain(v) for v in values.values()):
            ambiguous = {k: list(v) for k, v in facts.ambiguous.items()}
            digest = _sha(json.dumps([dict(values), ambiguous], sort_keys=True, default=_measured_json))
        self._facts[id(facts.values)] = (facts, digest)  # holds the facts, so their id stays theirs
        return digest

    # -- reading and keeping ---------------------------------------------------------------

    def reuse(self, key: str, sources: Sources) -> Verdict | None:
        """The verdict of a document checked clean before with these inputs, when its source regions are unchanged."""
        verdict = self.store.read(KIND, key, _verdict, "a verdict", "checking the document again")
        if verdict is None:
            return None
        for ref, digest in verdict.regions.items():
            try:
                if _sha(sources.region(ref)) != digest:
                    return None
            except RegionError:
                return None
        self.reused += 1
        return verdict

    def keep(self, key: str, report: PageReport, text: str | None, regions: Mapping[str, str]) -> None:
        """Store the verdict of a document checked now and found clean."""
        nodes: list[list[Any]] = []
        index: dict[tuple[Node, ...], int] = {}

        def node(chain: tuple[Node, ...]) -> int:
            found = index.get(chain)
            if found is None:
                parent = node(chain[:-1]) if len(chain) > 1 else -1
                last = chain[-1]
                nodes.append([parent, last.tag, last.id, sorted(last.classes)])
                found = index[chain] = len(nodes) - 1
            return found

        self.store.put_json(
            KIND,
            key,
            {
                "values": report.values,
                "nodes": nodes,
                "shown": [[s.key, node(s.chain)] for s in report.shown],
                "links": sorted(report.links),
                "text": text,
                "regions": {ref: _sha(region) for ref, region in sorted(regions.items())},
            },
        )
        self.stored += 1


def _verdict(raw: Any) -> Verdict:
    """An entry as the check uses it; ValueError (or KeyError, TypeError) when it is not one."""
    chains: list[tuple[Node, ...]] = []
    for parent, tag, id_, classes in raw["nodes"]:
        if not isinstance(parent, int) or not -1 <= parent < len(chains) or not isinstance(tag, str):
            raise ValueError("a node out of order")
        if id_ is not None and not isinstance(id_, str):
            raise TypeError("a node id that is not text")
        node = Node(tag, id_, frozenset(_strings(classes)))
        chains.append((*chains[parent], node) if parent >= 0 else (node,))
    shown = []
    for key, at in raw["shown"]:
        if not isinstance(key, str) or not isinstance(at, int) or not 0 <= at < len(chains):
            raise ValueError("a shown value out of place")
        shown.append(Shown(key, chains[at]))
    text = raw["text"]
    if text is not None and not isinstance(text, str):
        raise TypeError("a text that is not text")
    values = raw["values"]
    if not isinstance(values, int) or isinstance(values, bool):
        raise TypeError("a count that is not a number")
    regions = raw["regions"]
    if not isinstance(regions, dict) or not all(isinstance(v, str) for v in regions.values()):
        raise TypeError("region digests that are not text")
    return Verdict(values, tuple(shown), frozenset(_strings(raw["links"])), text, dict(regions))


def _strings(items: Any) -> list[str]:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise TypeError("a list that is not of texts")
    return items
