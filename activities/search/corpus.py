"""Search providers. `corpus`: a local folder of documents indexed with PostgreSQL full-text search.

The corpus folder holds one directory per host (`<corpus_dir>/<host>/<path>`), served to the
fetcher as `https://<host>/<path>` by `activities.pages.corpus_transport.CorpusTransport`;
`index_corpus` indexes the same URLs so search results can be read.

Every provider's results pass `keep_allowed`: only allowed hosts, URLs normalised (lower-case scheme
and host, no default port, no fragment, `/` for an empty path; path, query and trailing slashes are
kept, since servers may tell them apart), duplicates in their first place, the provider's order, at
most `limit`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from activities.ledger import Ledger
from activities.pages.corpus_transport import CONTENT_TYPES
from activities.pages.extract import extract
from activities.pages.guard import DEFAULT_PORTS
from workflows.families import overlap, sketch, words
from workflows.hosts import host_allowed, normalise_host, url_host
from workflows.models import SearchHit
from workflows.substance import stop_words

logger = logging.getLogger(__name__)


CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, allowed_hosts: list[str], limit: int) -> list[SearchHit]:
        """Results for `query`, restricted to `allowed_hosts`, best first, at most `limit`."""
        ...


class CorpusSearch:
    """The `corpus` provider: full-text search over `research.corpus_documents`."""

    name = "corpus"

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    async def search(self, query: str, allowed_hosts: list[str], limit: int) -> list[SearchHit]:
        return await self._ledger.search_corpus(query, allowed_hosts, limit)


PROSE_MIN_WORDS = 50


@dataclass(frozen=True)
class CorpusDocument:
    url: str
    host: str
    title: str
    body: str
    prose: float = 1.0  # share of stop words among the words: an index page has little prose
    cluster: str | None = None  # the URL its near-duplicates share (`mark_duplicates`)
    headings: str = ""  # its section headings, one a line: search weighs their words more


def prose_share(text: str) -> float:
    """How much of `text` reads as prose: the share of its words that are stop words (1.0 for a
    text too short to tell: a note of a few lines is not an index)."""
    stops, words = stop_words(text)
    return 1.0 if words < PROSE_MIN_WORDS else stops / words


async def index_corpus(
    ledger: Ledger,
    corpus_dir: Path,
    *,
    max_chars: int,
    host: str | None = None,
    progress: Callable[[str], None] | None = None,
    keep_other_folders: bool = False,
) -> int:
    """Index (or refresh) every readable document under `corpus_dir` (one folder per host, or
    with `host` the folder of that one host); return how many. Each host's folder is remembered,
    so its pages are readable wherever they were indexed from, and a host indexed again keeps only
    the documents its folder still holds. A folder with no readable document changes nothing;
    with `keep_other_folders` (the automatic index of RESEARCH_CORPUS_DIR) a host remembered from
    another folder is left as it is."""
    folders = [(host, corpus_dir)] if host is not None else corpus_hosts(corpus_dir)
    remembered = await ledger.corpus_folders() if keep_other_folders else {}
    count = 0
    for name, folder in folders:
        elsewhere = remembered.get(name)
        if elsewhere is not None and elsewhere != str(folder.resolve()):
            logger.info("corpus: %s stays served from %s (indexed there)", name, elsewhere)
            continue
        read = await _read_with_progress(name, folder, max_chars, progress)
        documents = mark_duplicates(drop_chrome(read))
        if not documents:
            logger.warning(
                "corpus: %s has no readable document for %s: left as it was", folder, name
            )
            continue
        for number, document in enumerate(documents, start=1):
            await ledger.index_corpus_document(
                document.url,
                document.host,
                document.title,
                document.body,
                document.prose,
                document.cluster,
                document.headings,
            )
            more = number < len(documents)
            if progress is not None and more and number % PROGRESS_EVERY == 0:
                progress(f"{name}: {number} of {len(documents)} documents stored so far")
        urls = [document.url for document in documents]
        await ledger.remember_corpus_folder(name, str(folder.resolve()), urls)
        # its word counts at once: a later folder that fails leaves this host searchable
        await ledger.refresh_corpus_terms([name])
        count += len(documents)
        if progress is not None:
            progress(f"{name}: {len(documents)} documents from {folder}")
    return count


PROGRESS_EVERY = 200  # documents between two progress lines of a large folder
CHROME_SHARE = 0.3  # a paragraph on at least this share of a host's documents is its chrome
CHROME_MIN_DOCUMENTS = 20  # below this many documents, nothing is called chrome


def drop_chrome(documents: list[CorpusDocument]) -> list[CorpusDocument]:
    """The documents of one host without its chrome: a paragraph found on CHROME_SHARE or more
    of them ("Last updated 2024-05-31", "Copyright 2026 The Apache Software Foundation", a
    "Modules | Directives | FAQ" row) says nothing about any one page, so search does not index
    it (what `read_page` shows is unchanged). A small host keeps everything: with a handful of
    pages a shared paragraph may be the subject."""
    if len(documents) < CHROME_MIN_DOCUMENTS:
        return documents
    counts: Counter[str] = Counter()
    for document in documents:
        counts.update({paragraph.strip() for paragraph in document.body.split("\n\n")})
    chrome = {text for text, seen in counts.items() if seen >= CHROME_SHARE * len(documents)}
    if not chrome:
        return documents
    kept = []
    for document in documents:
        paragraphs = document.body.split("\n\n")
        body = "\n\n".join(p for p in paragraphs if p.strip() not in chrome)
        headings = "\n".join(h for h in document.headings.split("\n") if h.strip() not in chrome)
        kept.append(
            dataclasses.replace(document, body=body, prose=prose_share(body), headings=headings)
        )
    return kept


SKETCH_SIZE = 128  # shingle hashes compared per document (`workflows.families.sketch`)
SAME_TEXT_MIN_WORDS = 20  # shorter bodies are stubs: the same stub is not the same page
# Two documents whose titles read the same once numbers are set aside ("Changes in 3.11.1",
# "Changes in 3.11.2") are near-duplicates when at least this share of their shingles is shared
# (Jaccard, estimated on the sketches).
NEAR_OVERLAP = 0.3
_DIGITS = re.compile(r"\d+")


def mark_duplicates(documents: list[CorpusDocument]) -> list[CorpusDocument]:
    """The documents with near-duplicates grouped in a cluster (named by its first URL): the
    same text under two names, or titles alike but for their numbers with a large share of
    their text in common. Decided by the text alone, never by URL: search shows a cluster once
    (its best-ranked member, the others listed under it), so one page per release cannot fill
    the results."""
    texts = [words(document.body) for document in documents]
    parent = list(range(len(documents)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    same_text: dict[str, int] = {}
    alike: dict[str, list[int]] = {}
    for i, (document, text) in enumerate(zip(documents, texts, strict=True)):
        if len(text) >= SAME_TEXT_MIN_WORDS:
            join(i, same_text.setdefault(hashlib.sha256(" ".join(text).encode()).hexdigest(), i))
        title = " ".join(_DIGITS.sub("#", document.title.lower()).split())
        if title and len(text) >= SAME_TEXT_MIN_WORDS:
            alike.setdefault(title, []).append(i)
    for members in alike.values():
        if len(members) < 2:
            continue
        sketches = {i: sketch(texts[i], SKETCH_SIZE) for i in members}
        for n, i in enumerate(members):
            for j in members[n + 1 :]:
                near = overlap(sketches[i], sketches[j], SKETCH_SIZE) >= NEAR_OVERLAP
                if root(i) != root(j) and near:
                    join(i, j)
    clusters: dict[int, list[int]] = {}
    for i in range(len(documents)):
        clusters.setdefault(root(i), []).append(i)
    marked = list(documents)
    for members in clusters.values():
        if len(members) > 1:
            name = min(documents[i].url for i in members)
            for i in members:
                marked[i] = dataclasses.replace(documents[i], cluster=name)
    return marked


async def _read_with_progress(
    host: str, host_dir: Path, max_chars: int, progress: Callable[[str], None] | None
) -> list[CorpusDocument]:
    """`read_host`, PROGRESS_EVERY files at a time, saying how far it got on a large folder
    (reading and extracting a thousand pages takes a while)."""
    paths = await asyncio.to_thread(lambda: sorted(p for p in host_dir.rglob("*") if p.is_file()))
    documents: list[CorpusDocument] = []
    for start in range(0, len(paths), PROGRESS_EVERY):
        batch = paths[start : start + PROGRESS_EVERY]
        documents += await asyncio.to_thread(_read_paths, host, host_dir, batch, max_chars)
        done = start + len(batch)
        if progress is not None and done < len(paths):
            progress(f"{host}: {done} of {len(paths)} files read so far")
    return documents


def _read_paths(
    host: str, host_dir: Path, paths: list[Path], max_chars: int
) -> list[CorpusDocument]:
    documents = (_document(host, host_dir, path, max_chars) for path in paths)
    return [document for document in documents if document is not None]


def read_corpus(corpus_dir: Path, *, max_chars: int) -> list[CorpusDocument]:
    """The documents of every host folder, skipping names that start with `_` or `.`."""
    return [
        document
        for host, host_dir in corpus_hosts(corpus_dir)
        for document in read_host(host, host_dir, max_chars=max_chars)
    ]


def corpus_hosts(corpus_dir: Path) -> list[tuple[str, Path]]:
    """The host folders of a corpus folder: (host, folder), by name."""
    if not corpus_dir.is_dir():
        return []
    named = ((_host_name(host_dir), host_dir) for host_dir in sorted(corpus_dir.iterdir()))
    return [(host, host_dir) for host, host_dir in named if host is not None]


def read_host(host: str, host_dir: Path, *, max_chars: int) -> list[CorpusDocument]:
    """The readable documents of one host's folder, as https://<host>/<relative path>."""
    return _read_paths(host, host_dir, sorted(host_dir.rglob("*")), max_chars)


def _host_name(host_dir: Path) -> str | None:
    if not host_dir.is_dir() or host_dir.name.startswith(("_", ".")):
        return None
    try:
        host = normalise_host(host_dir.name)
    except ValueError:
        host = None
    if host != host_dir.name:  # the fetcher serves only folders named by their normalised host
        logger.warning("corpus: skipping %s: its name is not a lower-case host name", host_dir)
        return None
    return host


def indexed_path(host_dir: Path, path: Path) -> str | None:
    """Where the index reads `path` under its host (`guide/a.html`), or None when it does not: a
    file of a type it extracts, no part of its path named with `_` or `.` (Sphinx's `_sources/`)."""
    relative = path.relative_to(host_dir)
    if not path.is_file() or any(part.startswith(("_", ".")) for part in relative.parts):
        return None
    return relative.as_posix() if path.suffix.lower() in CONTENT_TYPES else None


def _document(host: str, host_dir: Path, path: Path, max_chars: int) -> CorpusDocument | None:
    relative = indexed_path(host_dir, path)
    if relative is None:
        return None
    try:
        extracted = extract(
            path.read_bytes(), CONTENT_TYPES[path.suffix.lower()], max_chars=max_chars
        )
    except ValueError as error:
        logger.warning("corpus: skipping %s: %s", path, error)
        return None
    url = f"https://{host}/{relative}"
    return CorpusDocument(
        url=url,
        host=host,
        title=extracted.title,
        body=extracted.text,
        prose=prose_share(extracted.text),
        headings="\n".join(dict.fromkeys(p.section for p in extracted.passages if p.section)),
    )


# ---------------------------------------------------------------- results of any provider


def keep_allowed(
    hits: Iterable[SearchHit | None], allowed_hosts: list[str], limit: int
) -> list[SearchHit]:
    """Hits on allowed hosts, by normalised URL, each once, in order, at most `limit`."""
    kept: dict[str, SearchHit] = {}
    for hit in hits:
        if len(kept) >= limit:
            break
        url = normalised_url(hit.url) if hit is not None else None
        if hit is None or url is None or url in kept or not host_allowed(url, allowed_hosts):
            continue  # not a result, not an http(s) URL, a duplicate, or off the allowlist
        kept[url] = hit.model_copy(update={"url": url, "host": url_host(url) or ""})
    return list(kept.values())


def normalised_url(url: str) -> str | None:
    """The URL in one spelling, or None when it is not a plain http(s) URL with a host name."""
    if CONTROL_CHARACTERS.search(url.strip()):
        return None  # a URL the fetcher would refuse anyway
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = url_host(url)
    if scheme not in DEFAULT_PORTS or host is None or parts.username is not None:
        return None
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
